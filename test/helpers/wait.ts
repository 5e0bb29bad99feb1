/**
 * Waiting in tests. Tests wait for events, never for a fixed time; but an event that never
 * comes must fail the test naming what it waited for, not hang it until the runner's timeout
 * (which names only the test). Every wait here has a deadline and says what it was for.
 */
import { performance } from "node:perf_hooks";

/** How long a wait gives an event before failing, unless the caller says otherwise. */
export const DEFAULT_WAIT_MS = 10_000;

export interface WaitOptions {
  /** Milliseconds before the wait fails; {@link DEFAULT_WAIT_MS} by default. */
  timeoutMs?: number;
  /**
   * Poll on the event loop's check phase (`setImmediate`) instead of every few milliseconds
   * with `setTimeout`. For tests that mock `setTimeout` (`mock.timers`), where a timer-based
   * poll would never wake.
   */
  spin?: boolean;
}

/** The error a wait fails with: what it waited for, and for how long. */
export function waitFailed(what: string, timeoutMs: number): Error {
  return new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Resolves once `check()` is true, polling; rejects naming `what` after the deadline. The
 * deadline is read from `performance.now()`, which `mock.timers` leaves alone, so a test that
 * mocks `Date` still gets one.
 */
export async function until(check: () => boolean, what: string, options: WaitOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
  const end = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > end) throw waitFailed(what, timeoutMs);
    await new Promise((resolve) => (options.spin ? setImmediate(resolve) : setTimeout(resolve, 5)));
  }
}

/**
 * Settles like `promise`, or rejects naming `what` when it has not settled after the deadline:
 * for waits that are events already (a waiter list, a deferred) and so need no polling.
 */
export function within<T>(promise: Promise<T>, what: string, timeoutMs = DEFAULT_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(waitFailed(what, timeoutMs)), timeoutMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
