/**
 * The lifecycle every transport shares, as one state union instead of a set of booleans. It
 * enforces the rules written on {@link Transport}: start once, send only while open, close
 * idempotent (later calls get the same promise), `onclose` exactly once.
 *
 *   new -> starting -> open -> closing -> closed
 *               \-> failed ----/
 *   (close() leads from any state to closing; the far end's close from open to closed)
 *
 * `failed`: start() rejected, the transport never connected (sends get `NOT_CONNECTED`);
 * `closing`: close() was called, no more sends (`CLOSED`); `closed`: `onclose` has been called. A transport keeps its own resources (child, socket, streams) and
 * asks this helper only what the state allows.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { Transport } from "./transport.ts";

/**
 * One settled promise for every {@link TransportLifecycle.openAtOnce} and every close whose
 * release finished at once: nothing to allocate per start or per close.
 */
const SETTLED = Promise.resolve();

/** Where a transport is in its life; see {@link TransportLifecycle}. */
export type TransportState = "new" | "starting" | "open" | "failed" | "closing" | "closed";

/**
 * Start-once, close-once and onclose-once for one transport.
 *
 * ```ts
 * start() { this.#life.beginStart(); ...; this.#life.opened(); }
 * send(m) { if (this.#life.state !== "open") return Promise.reject(this.#life.notOpen()); ... }
 * close() { return this.#life.close(() => this.#release()); }
 * ```
 */
export class TransportLifecycle {
  #state: TransportState = "new";
  #closing: Promise<void> | undefined;
  readonly #owner: Pick<Transport, "onclose">;
  readonly #label: string;

  /** `label` names the transport in error messages (`server "fs"`, `tcp 127.0.0.1:4000`). */
  constructor(owner: Pick<Transport, "onclose">, label: string) {
    this.#owner = owner;
    this.#label = label;
  }

  get state(): TransportState {
    return this.#state;
  }

  /** True once close() was called or the transport ended (no more sends). */
  get ending(): boolean {
    return this.#state === "closing" || this.#state === "closed";
  }

  /**
   * Moves `new` to `starting`. Throws `INVALID_STATE` on a second start (also after a failed
   * one: a transport starts once), `CLOSED` once the transport is closing or closed.
   */
  beginStart(): void {
    if (this.#state === "new") {
      this.#state = "starting";
      return;
    }
    // After close() (or a failed start) the useful answer is that the transport is closed.
    if (this.ending) throw this.closedError();
    throw new BridgeError("INVALID_STATE", `${this.#label}: start() called twice`, { details: { state: this.#state } });
  }

  /**
   * Moves `starting` to `open`. Throws `CLOSED` when close() came while starting, so that
   * start() rejects instead of reporting a transport that is already going away.
   */
  opened(): void {
    if (this.#state === "starting") {
      this.#state = "open";
      return;
    }
    throw this.closedError();
  }

  /**
   * start() of a transport with nothing to open (a stream already there, a pair connected from
   * birth): `new` straight to `open`, as a promise that rejects rather than a throw.
   */
  openAtOnce(): Promise<void> {
    try {
      this.beginStart();
      this.opened();
    } catch (err) {
      return Promise.reject(err);
    }
    return SETTLED;
  }

  /**
   * start() of a transport that must open something first (spawn a child, open a stream):
   * `starting` while `open` runs, then `open`, or `failed` when it throws.
   */
  async openWith(open: () => Promise<void>): Promise<void> {
    this.beginStart();
    try {
      await open();
    } catch (err) {
      this.startFailed();
      throw err;
    }
    this.opened();
  }

  /** A start that failed: nothing can be sent; close() still releases and reports. */
  startFailed(): void {
    if (this.#state === "starting") this.#state = "failed";
  }

  /**
   * The error for a send in the current (not open) state: `NOT_CONNECTED` before start, while
   * starting and after a failed start; `CLOSED` once closing or closed.
   */
  notOpen(): BridgeError {
    if (this.#state === "failed") {
      return new BridgeError("NOT_CONNECTED", `${this.#label}: start() failed; close this transport and create a new one`);
    }
    if (this.#state === "new" || this.#state === "starting") {
      return new BridgeError("NOT_CONNECTED", `${this.#label}: transport not started (call start() first)`);
    }
    return this.closedError();
  }

  closedError(): BridgeError {
    return new BridgeError("CLOSED", `${this.#label}: transport is closed`);
  }

  /**
   * Runs `release` once, on the first call; every call returns the same promise. `onclose`
   * follows when `release` settles, unless the transport reported its end already. A release
   * that returns nothing has finished: `onclose` is called before close() returns (a
   * stateless HTTP POST closes its transport this way, docs/decisions.md 171).
   */
  close(release: () => Promise<void> | void): Promise<void> {
    this.#closing ??= this.#runClose(release);
    return this.#closing;
  }

  /** Reports the end: calls `onclose(reason)` the first time, does nothing after. */
  ended(reason?: Error): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#owner.onclose?.(reason);
  }

  #runClose(release: () => Promise<void> | void): Promise<void> {
    if (this.#state !== "closed") this.#state = "closing";
    let pending: Promise<void> | void;
    try {
      pending = release();
    } catch (err) {
      this.ended();
      return Promise.reject(err);
    }
    if (pending === undefined) {
      this.ended();
      return SETTLED;
    }
    return pending.then(
      () => this.ended(),
      (err: unknown) => {
        this.ended();
        throw err;
      },
    );
  }

}
