/**
 * Coalescing the writes of one tick: the first write corks the stream and the next tick
 * uncorks it, so 64 messages produced together leave in one `writev` instead of 64 `write`
 * system calls. A lone message waits one `process.nextTick`, nothing more.
 *
 * `maxHeld` bounds a batch: once that many writes are held, they leave at once and the
 * stream is corked again for the rest of the tick. A server answering a chunk of requests
 * uses it, so that its peer can work on the first answers while it computes the others; a
 * batch of the whole chunk made the two processes take turns (docs/decisions.md 31, 174).
 * Backpressure is unchanged: a corked stream still reports a full buffer from `write()`.
 */
import type { Writable } from "node:stream";

export class TickCork {
  private corked = false;
  /** Writes held since the stream was last corked. */
  private held = 0;
  private readonly uncork = (): void => {
    this.corked = false;
    this.stream.uncork();
  };

  private readonly stream: Writable;
  private readonly maxHeld: number;

  /** `maxHeld`: the most writes one batch holds (default: no bound, the whole tick). */
  constructor(stream: Writable, maxHeld = Number.POSITIVE_INFINITY) {
    this.stream = stream;
    this.maxHeld = maxHeld;
  }

  /** Call before each write. */
  hold(): void {
    if (!this.corked) {
      this.corked = true;
      this.held = 1;
      this.stream.cork();
      process.nextTick(this.uncork);
      return;
    }
    if (++this.held <= this.maxHeld) return;
    // This write starts the next batch: the held ones leave now, in one writev.
    this.held = 1;
    this.stream.uncork();
    this.stream.cork();
  }
}
