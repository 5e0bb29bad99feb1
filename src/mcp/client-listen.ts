/**
 * `subscriptions/listen` (MCP 2026-07-28): the stateless era's one long-lived request, which
 * replaces the GET stream (list changes) and `resources/subscribe` (resource updates). The
 * notifications it brings are the 2025 ones, so McpClient's notification handlers raise the
 * same events in both eras (docs/decisions.md 131).
 *
 * One stream at a time: a change of filter (a URI subscribed or unsubscribed) opens a new
 * stream and then cancels the old one, so no change falls between the two.
 *
 * A stream the server ends (or refuses) is opened again after a delay that doubles, a
 * bounded number of times in a row (`McpClientOptions.listenReconnect`); close() stops it.
 */
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { StatelessClient } from "./client-stateless.ts";
import type { ListenReconnect } from "./client-options.ts";
import { McpMethod, type ServerCapabilities } from "./types.ts";

/** A listen request has no timeout: it lasts until cancelled (the peer arms no timer for it). */
const FOREVER_MS = Infinity;
/** URIs watched at once, as the server side allows. */
const MAX_URIS = 1024;

export interface ListenOptions {
  /** Time allowed for the acknowledgement of a new stream, ms. */
  ackTimeoutMs: number;
  /**
   * A stream ended other than by our own cancel (the server closed it, or refused it), and,
   * with a `CLOSED` error, when it is given up after `reconnect.maxAttempts` reopenings.
   */
  onEnded: (error: Error | undefined) => void;
  /** When and how often a stream the server ended is opened again. */
  reconnect: ListenReconnect;
}

export class ListenStream {
  private readonly stateless: StatelessClient;
  private readonly caps: ServerCapabilities;
  private readonly o: ListenOptions;
  private readonly uris = new Set<string>();
  private current: AbortController | undefined;
  private ackWaiters: { resolve: () => void; reject: (e: Error) => void; timer: ReturnType<typeof setTimeout> }[] = [];
  private closed = false;
  /** Reopenings in a row since the last stream that lasted (see {@link scheduleReopen}). */
  private attempts = 0;
  /** When the current stream was acknowledged (Date.now()). */
  private ackedAt: number | undefined;
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(stateless: StatelessClient, capabilities: ServerCapabilities, options: ListenOptions) {
    this.stateless = stateless;
    this.caps = capabilities;
    this.o = options;
  }

  /** True when the server declared something a stream could bring. */
  get useful(): boolean {
    return this.uris.size > 0 || listChanged(this.caps.tools) || listChanged(this.caps.prompts) || listChanged(this.caps.resources);
  }

  /** Opens (or re-opens with the current filter) the stream; resolves on its acknowledgement. */
  open(): Promise<void> {
    if (this.closed) return Promise.reject(new BridgeError("CLOSED", "subscriptions/listen: the client is closed"));
    this.cancelReopen();
    const previous = this.current;
    const abort = new AbortController();
    this.current = abort;
    const acked = this.waitForAck();
    this.stateless
      .request(McpMethod.SubscriptionsListen, { notifications: this.filter() }, { signal: abort.signal, timeoutMs: FOREVER_MS, maxTotalTimeoutMs: FOREVER_MS })
      .then(
        () => this.ended(abort, undefined),
        (err: unknown) => this.ended(abort, err instanceof Error ? err : new Error(errorMessage(err))),
      );
    // The old stream goes once the new one is asked for; one change may arrive on both.
    previous?.abort();
    return acked;
  }

  /** `resources/subscribe` of the stateless era: the URI joins the filter of a new stream. */
  subscribe(uri: string): Promise<void> {
    if (!this.uris.has(uri) && this.uris.size >= MAX_URIS) {
      return Promise.reject(new BridgeError("LIMIT_EXCEEDED", `subscribe: at most ${MAX_URIS} resources can be watched at once`));
    }
    this.uris.add(uri);
    return this.open();
  }

  unsubscribe(uri: string): Promise<void> {
    if (!this.uris.delete(uri)) return Promise.resolve();
    return this.open();
  }

  /** `notifications/subscriptions/acknowledged` arrived (McpClient's handler calls this). */
  acknowledged(): void {
    this.ackedAt = Date.now();
    const waiters = this.ackWaiters;
    this.ackWaiters = [];
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.resolve();
    }
  }

  close(): void {
    this.closed = true;
    this.cancelReopen();
    this.current?.abort();
    this.current = undefined;
    this.failWaiters(new BridgeError("CLOSED", "subscriptions/listen: the client is closed"));
  }

  private filter(): Record<string, unknown> {
    const f: Record<string, unknown> = {};
    if (listChanged(this.caps.tools)) f.toolsListChanged = true;
    if (listChanged(this.caps.prompts)) f.promptsListChanged = true;
    if (listChanged(this.caps.resources)) f.resourcesListChanged = true;
    if (this.uris.size > 0) f.resourceSubscriptions = [...this.uris];
    return f;
  }

  private waitForAck(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ackWaiters = this.ackWaiters.filter((w) => w.timer !== timer);
        reject(new BridgeError("TIMEOUT", `subscriptions/listen: no acknowledgement within ${this.o.ackTimeoutMs} ms`));
      }, this.o.ackTimeoutMs);
      this.ackWaiters.push({ resolve, reject, timer });
    });
  }

  private ended(abort: AbortController, error: Error | undefined): void {
    if (abort.signal.aborted) return;
    if (this.current === abort) this.current = undefined;
    this.failWaiters(error ?? new BridgeError("CLOSED", "subscriptions/listen: the server ended the stream before acknowledging it"));
    this.o.onEnded(error);
    this.scheduleReopen();
  }

  /**
   * Opens the stream again after a delay that doubles with each attempt in a row, or gives
   * up past `maxAttempts`. A stream that was acknowledged and then lasted `maxDelayMs` ends
   * the run of attempts; one the server acknowledges and closes at once does not, so such a
   * server is given up too.
   */
  private scheduleReopen(): void {
    if (this.closed || this.current !== undefined || this.reopenTimer !== undefined) return;
    const r = this.o.reconnect;
    if (this.ackedAt !== undefined && Date.now() - this.ackedAt >= r.maxDelayMs) this.attempts = 0;
    this.ackedAt = undefined;
    if (++this.attempts > r.maxAttempts) {
      this.o.onEnded(new BridgeError("CLOSED", `subscriptions/listen: the server ended or refused the stream ${r.maxAttempts} times in a row; not opening it again (list changes and resource updates will not arrive)`));
      return;
    }
    const delay = Math.min(r.initialDelayMs * 2 ** (this.attempts - 1), r.maxDelayMs);
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = undefined;
      // A failure ends that stream too, which schedules the next attempt.
      if (!this.closed && this.current === undefined) this.open().catch(() => undefined);
    }, delay);
  }

  private cancelReopen(): void {
    if (this.reopenTimer !== undefined) clearTimeout(this.reopenTimer);
    this.reopenTimer = undefined;
  }

  private failWaiters(err: Error): void {
    const waiters = this.ackWaiters;
    this.ackWaiters = [];
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}

function listChanged(cap: unknown): boolean {
  return typeof cap === "object" && cap !== null && (cap as { listChanged?: unknown }).listChanged === true;
}
