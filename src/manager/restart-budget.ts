/**
 * When a {@link ServerConnection} restarts its server: restarts in a row are limited by
 * `maxRestarts` and spaced by `backoffDelay`; a server that stayed ready for `stableAfterMs`
 * earns a fresh budget. Holds the one pending restart timer.
 */
import { backoffDelay, checkBackoff, type BackoffOptions } from "./backoff.ts";

export interface RestartBudgetOptions {
  /** Restarts in a row before the server is given up. */
  maxRestarts: number;
  /** Ready this long, ms, and the count in a row starts over. */
  stableAfterMs: number;
  backoff?: BackoffOptions;
  /** The clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

export class RestartBudget {
  #inARow = 0;
  #total = 0;
  #readyAt: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #options: RestartBudgetOptions;
  readonly #now: () => number;

  constructor(options: RestartBudgetOptions) {
    checkBackoff(options.backoff ?? {});
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Restarts in a row, which `maxRestarts` limits. */
  get inARow(): number {
    return this.#inARow;
  }
  /** Restarts scheduled so far, in total. */
  get total(): number {
    return this.#total;
  }

  /** The server became ready: the stable time counts from now. */
  ready(): void {
    this.#readyAt = this.#now();
  }

  /**
   * The server failed. Schedules `restart` and returns its delay, ms, or returns undefined
   * (nothing scheduled) when it may not restart: not `retryable`, or the budget is spent.
   */
  afterFailure(retryable: boolean, restart: () => void): number | undefined {
    if (this.#readyAt !== undefined && this.#now() - this.#readyAt >= this.#options.stableAfterMs) this.#inARow = 0;
    this.#readyAt = undefined;
    if (!retryable || this.#inARow >= this.#options.maxRestarts) return undefined;
    this.#inARow++;
    this.#total++;
    const delayMs = backoffDelay(this.#inARow, this.#options.backoff);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      restart();
    }, delayMs);
    return delayMs;
  }

  /** Drops the pending restart, if any. */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
