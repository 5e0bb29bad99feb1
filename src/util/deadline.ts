/**
 * Racing a promise against a deadline, in one place. Node-free (only the global timers), so
 * every layer shares it. The timer is always cleared, so a settled race keeps nothing alive.
 */

/** What {@link raceDeadline} resolves to when the deadline came first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Resolves to what `promise` resolves to, or to {@link TIMED_OUT} when `ms` pass first; rejects
 * when `promise` rejects first. `promise` is not cancelled: a caller that stops waiting for it
 * decides what becomes of it (a later rejection is handled here, never unhandled).
 *
 * @example
 * if ((await raceDeadline(child.exited, 2_000)) === TIMED_OUT) child.kill("SIGKILL");
 */
export async function raceDeadline<T>(promise: PromiseLike<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether `promise` settles within `ms`: true when it resolves first, false when the deadline
 * comes first; rejects when `promise` rejects first.
 */
export async function settlesWithin(promise: PromiseLike<unknown>, ms: number): Promise<boolean> {
  return (await raceDeadline(promise, ms)) !== TIMED_OUT;
}

/**
 * Settles as `promise` does, or rejects with the error `onTimeout` makes (and may act on, e.g.
 * abort the work) when `ms` pass first. One timer and one promise: for a path taken by every
 * call, where {@link raceDeadline}'s race of two promises costs more than the work it bounds.
 * A later settling of `promise` is handled, never unhandled.
 *
 * @example
 * const answer = await withDeadline(provider.call(), 30_000, () => new BridgeError("TIMEOUT", "no answer in 30 s"));
 */
export function withDeadline<T>(promise: PromiseLike<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
