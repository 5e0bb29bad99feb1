/** The far ends the peer tests drive: a raw memory pair and a transport that injects errors. */
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import type { Transport } from "../../src/transport/transport.ts";

/** The far end of a peer under test: sends raw values, records what the peer wrote. */
export function rawPair(options: ConstructorParameters<typeof JsonRpcPeer>[1] = {}) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const peer = new JsonRpcPeer(a, options);
  const received: unknown[] = [];
  const waiters: Array<() => void> = [];
  b.onmessage = (m) => {
    received.push(m);
    waiters.splice(0).forEach((w) => w());
  };
  const raw = {
    send: (v: unknown) => b.send(v as JsonRpcMessage),
    received,
    async next(): Promise<unknown> {
      while (received.length === 0) await new Promise<void>((r) => waiters.push(r));
      return received.shift();
    },
    transport: b,
  };
  return { peer, raw, start: () => peer.start() };
}

/** A transport the test drives directly, to inject decoding errors as a byte transport would. */
export class InjectingTransport implements Transport {
  onmessage?: (m: unknown) => void;
  onerror?: (e: Error) => void;
  onclose?: (reason?: Error) => void;
  sent: unknown[] = [];
  related: unknown[] = [];
  async start() {}
  async send(m: JsonRpcMessage | JsonRpcMessage[], o?: { relatedRequestId?: unknown }) {
    this.sent.push(m);
    this.related.push(o?.relatedRequestId);
  }
  async close() {
    this.onclose?.();
  }
}

export const tick = () => new Promise((r) => setImmediate(r));
