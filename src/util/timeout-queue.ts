/**
 * Many timeouts of one length on one timer. A `setTimeout` per short task (a body read, a
 * request) makes Node build its timer list for that length when the list is empty and tear
 * it down when the task clears the last timer in it: with requests one after another, both
 * every time. On a stateless HTTP POST that was 0.5-0.7 us of the server's path from the
 * request to its answer (docs/decisions.md 172). Because every entry here waits the same
 * time, the oldest is always the next to expire, so entries form a queue and the one timer
 * only ever waits for the oldest. Joining and leaving allocate one small entry and touch no
 * timer, except when the queue has none running. Node-free (the global timers and
 * `performance.now`), so every layer can use it.
 */

interface Entry {
  readonly due: number;
  readonly onTimeout: () => void;
  prev: Entry | undefined;
  next: Entry | undefined;
  /** False once it left the queue (cancelled or expired), so that leaving twice is harmless. */
  listed: boolean;
}

export class TimeoutQueue {
  /** The timeout of every entry, ms. */
  readonly ms: number;
  private head: Entry | undefined;
  private tail: Entry | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `ms`: the timeout of every entry, 1 .. 2^31-1 (what `setTimeout` can wait). */
  constructor(ms: number) {
    if (!(ms >= 1 && ms <= 2_147_483_647)) throw new RangeError(`TimeoutQueue: ms must be in 1..2147483647, got ${ms}`);
    this.ms = ms;
  }

  /**
   * Calls `onTimeout` once {@link ms} have passed, unless the returned function is called
   * first. That function is idempotent, and harmless after the timeout fired.
   */
  add(onTimeout: () => void): () => void {
    const entry: Entry = { due: performance.now() + this.ms, onTimeout, prev: this.tail, next: undefined, listed: true };
    if (this.tail !== undefined) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    if (this.timer === undefined) this.arm(this.ms);
    return () => this.remove(entry);
  }

  private arm(ms: number): void {
    // Unref'd: a timer that outlives its last entry must not keep the process alive. What an
    // entry waits for (a socket, a request) keeps it alive on its own.
    this.timer = setTimeout(() => this.fire(), ms);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    try {
      const now = performance.now();
      while (this.head !== undefined && this.head.due <= now) {
        const entry = this.head;
        this.remove(entry);
        entry.onTimeout();
      }
    } finally {
      // Re-armed even if a callback threw, so the entries behind it still time out. The
      // timer fires by the loop's millisecond clock, so the oldest may still be a fraction early.
      if (this.head !== undefined && this.timer === undefined) this.arm(Math.max(1, Math.ceil(this.head.due - performance.now())));
    }
  }

  private remove(entry: Entry): void {
    if (!entry.listed) return;
    entry.listed = false;
    if (entry.prev !== undefined) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next !== undefined) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }
}
