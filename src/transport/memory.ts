/**
 * An in-memory linked pair of transports, for tests and for running a client and a server in
 * one process. Messages are delivered asynchronously (a microtask later) to mimic a real
 * channel, and travel as JSON text, as on every other transport: neither side can mutate the
 * other's objects, and a value JSON cannot carry (a BigInt, a cycle) fails here as it would
 * on the wire (see `encodeMessage`) instead of passing in a test and failing in production.
 */
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { TransportLifecycle } from "./lifecycle.ts";
import type { Transport } from "./transport.ts";

export class InMemoryTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private other: InMemoryTransport | undefined;
  private readonly life = new TransportLifecycle(this, "in-memory transport");

  /** Creates two connected transports: what one sends, the other receives. */
  static createLinkedPair(): [InMemoryTransport, InMemoryTransport] {
    const a = new InMemoryTransport();
    const b = new InMemoryTransport();
    a.other = b;
    b.other = a;
    return [a, b];
  }

  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  /**
   * Also accepted before `start()`: the pair is connected from birth, and tests drive one side
   * raw without starting it (docs/decisions.md 88).
   */
  async send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.ending) throw this.life.closedError();
    const text = encodeMessage(message);
    if (typeof text !== "string") throw text;
    const target = this.other;
    queueMicrotask(() => {
      if (target && !target.life.ending) target.onmessage?.(JSON.parse(text));
    });
  }

  close(): Promise<void> {
    return this.life.close(async () => {
      this.life.ended();
      const other = this.other;
      if (other && !other.life.ending) await other.close();
    });
  }
}
