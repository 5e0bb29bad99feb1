/**
 * Coalescing the writes of one tick: the first write corks the stream and the next tick
 * uncorks it, so 64 responses produced together leave in one `writev` instead of 64
 * `write` system calls. A lone message waits one `process.nextTick`, nothing more.
 * Backpressure is unchanged: a corked stream still reports a full buffer from `write()`.
 */
import type { Writable } from "node:stream";

export class TickCork {
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.stream.uncork();
  };

  private readonly stream: Writable;

  constructor(stream: Writable) {
    this.stream = stream;
  }

  /** Call before each write. */
  hold(): void {
    if (this.corked) return;
    this.corked = true;
    this.stream.cork();
    process.nextTick(this.uncork);
  }
}
