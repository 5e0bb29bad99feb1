/**
 * Restart delays: exponential from `baseMs`, doubling per attempt, capped at `capMs`, with
 * jitter taken off the top so that servers which crashed together do not restart together.
 *
 * The jitter only ever shortens a delay, and by at most `jitter` of it (default a quarter).
 * With a factor of 2 and `jitter < 0.5`, the delay of attempt n+1 is therefore always longer
 * than that of attempt n until the cap is reached: the backoff stays visible as growing gaps.
 */

/** Default first delay: 1 s. */
export const DEFAULT_BACKOFF_BASE_MS = 1_000;
/** Default longest delay: 30 s. */
export const DEFAULT_BACKOFF_CAP_MS = 30_000;
/** Default share of a delay that jitter may take off. */
export const DEFAULT_BACKOFF_JITTER = 0.25;

export interface BackoffOptions {
  /** Delay before the first restart, ms. Default 1000. */
  baseMs?: number;
  /** Longest delay, ms. Default 30 000. */
  capMs?: number;
  /** Fraction in [0, 1) of each delay that may be taken off at random. Default 0.25. */
  jitter?: number;
  /** Source of randomness in [0, 1); injectable for tests. Default `Math.random`. */
  random?: () => number;
}

/**
 * The delay before restart number `attempt` (1 for the first restart).
 *
 * ```ts
 * backoffDelay(1, { jitter: 0 }) // 1000
 * backoffDelay(3, { jitter: 0 }) // 4000
 * backoffDelay(9, { jitter: 0 }) // 30000 (capped)
 * ```
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const { baseMs, capMs, jitter } = checkBackoff(options);
  const random = options.random ?? Math.random;
  const n = Math.max(1, Math.floor(attempt));
  // 2 ** 60 is far past any cap; stopping there keeps the arithmetic finite.
  const full = Math.min(capMs, baseMs * 2 ** Math.min(n - 1, 60));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.round(full * (1 - jitter * r));
}

/** The options with defaults filled in; throws RangeError for values that make no sense. */
export function checkBackoff(options: BackoffOptions): { baseMs: number; capMs: number; jitter: number } {
  const baseMs = options.baseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const capMs = options.capMs ?? Math.max(DEFAULT_BACKOFF_CAP_MS, baseMs);
  const jitter = options.jitter ?? DEFAULT_BACKOFF_JITTER;
  if (!Number.isFinite(baseMs) || baseMs < 0) throw new RangeError(`backoff baseMs must be a finite number >= 0, got ${baseMs}`);
  if (!Number.isFinite(capMs) || capMs < baseMs) throw new RangeError(`backoff capMs must be finite and >= baseMs, got ${capMs}`);
  if (!(jitter >= 0 && jitter < 1)) throw new RangeError(`backoff jitter must be in [0, 1), got ${jitter}`);
  return { baseMs, capMs, jitter };
}
