/**
 * An in-memory linked pair of transports, for tests and for running a client and a server in
 * one process. Messages are delivered asynchronously (a microtask later) to mimic a real
 * channel, and travel as JSON text, as on every other transport: neither side can mutate the
 * other's objects, and a value JSON cannot carry (a BigInt, a cycle) fails here as it would
 * on the wire (see `encodeMessage`) instead of passing in a test and failing in production.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import type { Transport } from "./transport.ts";

export class InMemoryTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private other: InMemoryTransport | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  /** Creates two connected transports: what one sends, the other receives. */
  static createLinkedPair(): [InMemoryTransport, InMemoryTransport] {
    const a = new InMemoryTransport();
    const b = new InMemoryTransport();
    a.other = b;
    b.other = a;
    return [a, b];
  }

  async start(): Promise<void> {}

  async send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.closed) throw new BridgeError("CLOSED", "in-memory transport is closed");
    const text = encodeMessage(message);
    if (typeof text !== "string") throw text;
    const target = this.other;
    queueMicrotask(() => {
      if (target && !target.closed) target.onmessage?.(JSON.parse(text));
    });
  }

  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        this.closed = true;
        this.onclose?.();
        const other = this.other;
        if (other && !other.closed) await other.close();
      })();
    }
    return this.closing;
  }
}
