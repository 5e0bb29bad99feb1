/**
 * A stdio server started before the CLI has loaded its MCP client (docs/decisions.md
 * 151). A server takes longer to boot than the CLI takes to load the client, the
 * JSON-RPC peer and the protocol modules; started first, the server boots while they load,
 * as a hand-written client that spawns at once would have it.
 *
 * The client then connects over this wrapper as over any transport: `start()` returns the
 * start already under way (a transport starts once, so the inner one is never started twice),
 * and what the server sends before the client has wired its handlers is held, in order, until
 * it has.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../jsonrpc/message.ts";
import type { Transport } from "../transport/transport.ts";

export class EarlyStartedTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;
  /** The transport started early. */
  readonly inner: Transport;
  /** When its process was spawned (`process.hrtime.bigint()`), for the time to a completed handshake. */
  readonly startedAt: bigint;
  /** Settles when the inner start does, and never rejects: `start()` reports a failure. */
  readonly settled: Promise<void>;
  private readonly starting: Promise<void>;
  /** Events of the inner transport that came before `start()`; `undefined` once handed on. */
  private held: (() => void)[] | undefined = [];

  /** Starts `inner` now; `startedAt`: when its process was spawned, if before. */
  constructor(inner: Transport, startedAt = process.hrtime.bigint()) {
    this.inner = inner;
    inner.onmessage = (m) => this.handOn(() => this.onmessage?.(m));
    inner.onerror = (e) => this.handOn(() => this.onerror?.(e));
    inner.onclose = (reason) => this.handOn(() => this.onclose?.(reason));
    this.startedAt = startedAt;
    this.starting = inner.start();
    this.settled = this.starting.then(
      () => undefined,
      () => undefined,
    );
  }

  /** The inner start (begun in the constructor); from now on events go straight through. */
  start(): Promise<void> {
    const held = this.held;
    if (held === undefined) return Promise.reject(new BridgeError("INVALID_STATE", "early-started transport: start() called twice"));
    this.held = undefined;
    for (const event of held) event();
    return this.starting;
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    return this.inner.send(message);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private handOn(event: () => void): void {
    if (this.held === undefined) event();
    else this.held.push(event);
  }
}
