/**
 * A token bucket per key (one key per server): `burst` calls at once, then `callsPerMinute`
 * spread evenly over the minute. An over-limit call is refused with the wait until the next
 * token; the bridge turns that into an error result (docs/decisions.md 8).
 */

export interface RateLimiterOptions {
  /** Sustained rate. Default 100. Must be > 0 and finite. */
  callsPerMinute?: number;
  /** Bucket capacity: calls allowed at once after a quiet spell. Default `callsPerMinute`. */
  burst?: number;
  /** Clock in milliseconds; injectable for tests. Default `Date.now`. */
  now?: () => number;
}

/** The outcome of {@link RateLimiter.take}. */
export type RateLimitResult =
  | { ok: true }
  | {
      ok: false;
      /** Milliseconds until a call would be accepted (at least 1). */
      retryAfterMs: number;
      /** For a person or the model: names the key (the server) and what to do. */
      message: string;
    };

export const DEFAULT_CALLS_PER_MINUTE = 100;

const MINUTE_MS = 60_000;

interface Bucket {
  /** Tokens times {@link MINUTE_MS}: with an integer rate, refill stays exact integer math. */
  scaled: number;
  last: number;
}

/**
 * ```ts
 * const limiter = new RateLimiter({ callsPerMinute: 60 });
 * const r = limiter.take("fs");
 * if (!r.ok) return errorResult(r.message);
 * ```
 */
export class RateLimiter {
  readonly callsPerMinute: number;
  readonly burst: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: RateLimiterOptions = {}) {
    const rate = options.callsPerMinute ?? DEFAULT_CALLS_PER_MINUTE;
    if (!(rate > 0) || !Number.isFinite(rate)) {
      throw new RangeError(`callsPerMinute must be a positive finite number, got ${String(rate)}`);
    }
    const burst = options.burst ?? rate;
    if (!(burst >= 1) || !Number.isFinite(burst)) {
      throw new RangeError(`burst must be a finite number >= 1, got ${String(burst)}`);
    }
    this.callsPerMinute = rate;
    this.burst = burst;
    this.now = options.now ?? Date.now;
  }

  /** Takes one token from `key`'s bucket (a new key starts full). */
  take(key: string): RateLimitResult {
    const now = this.now();
    const capacity = this.burst * MINUTE_MS;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { scaled: capacity, last: now };
      this.buckets.set(key, bucket);
    } else {
      // A clock that steps backwards refills nothing rather than draining the bucket.
      const elapsed = Math.max(0, now - bucket.last);
      bucket.scaled = Math.min(capacity, bucket.scaled + elapsed * this.callsPerMinute);
      bucket.last = now;
    }
    if (bucket.scaled >= MINUTE_MS) {
      bucket.scaled -= MINUTE_MS;
      return { ok: true };
    }
    const retryAfterMs = Math.max(1, Math.ceil((MINUTE_MS - bucket.scaled) / this.callsPerMinute));
    return {
      ok: false,
      retryAfterMs,
      message:
        `server ${JSON.stringify(key)}: rate limit of ${this.callsPerMinute} calls per minute reached; ` +
        `retry in ${retryAfterMs} ms, or raise the server's rate limit`,
    };
  }

  /** Forgets `key` (e.g. when its server is removed); its next call starts with a full bucket. */
  delete(key: string): void {
    this.buckets.delete(key);
  }
}
