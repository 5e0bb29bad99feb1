/**
 * JsonRpcPeer: one end of a JSON-RPC connection over any {@link Transport}.
 *
 * It correlates responses by exact id, times requests out, cancels them, routes progress, and
 * dispatches incoming requests and notifications to handlers. MCP and ACP both sit on it; the
 * method names it knows by itself (cancel, progress) are options.
 */
import { BridgeError, ErrorCode, errorMessage } from "./errors.ts";
import {
  classifyMessage,
  type JsonRpcErrorObject,
  type JsonRpcErrorResponse,
  type JsonRpcId,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcParams,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "./message.ts";
import type { Transport } from "./transport.ts";
import { InboundRequests, type Reply, type RequestContext } from "./inbound.ts";
import { OutboundRequests } from "./outbound.ts";

import type { NotificationHandler, NotifyOptions, Pending, PeerOptions, PeerStats, RequestHandler, RequestOptions } from "./peer-types.ts";

export type { RequestContext } from "./inbound.ts";
export type { NotificationHandler, NotifyOptions, PeerOptions, PeerStats, ProgressInfo, RequestHandler, RequestOptions } from "./peer-types.ts";

const defaultCancelParams = (id: JsonRpcId, reason: string): JsonRpcParams => ({ requestId: id, reason });
const defaultCancelledId = (params: unknown): JsonRpcId | undefined => {
  const id = (params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
};

/**
 * ```ts
 * const peer = new JsonRpcPeer(transport);
 * peer.setRequestHandler("ping", () => ({}));
 * await peer.start();
 * const result = await peer.request("tools/list", {}, { timeoutMs: 5000 });
 * ```
 */
export class JsonRpcPeer {
  /** Called once when the connection ends; `reason` is set for an unexpected end. */
  onclose?: (reason?: Error) => void;
  /** Transport and decoding errors that did not end the connection. */
  onerror?: (error: Error) => void;
  /** Handles requests no handler was set for; default answers `-32601`. */
  fallbackRequestHandler?: (method: string, params: unknown, ctx: RequestContext) => unknown;
  /** Handles notifications no handler was set for; default ignores them. */
  fallbackNotificationHandler?: (method: string, params: unknown) => void;

  readonly stats: PeerStats = { lateResponses: 0, unknownResponses: 0, parseErrors: 0, invalidMessages: 0 };

  private readonly transport: Transport;
  private readonly opts: Required<Omit<PeerOptions, "progressMethod" | "cancelledReply">> & {
    progressMethod: string | null;
    cancelledReply: ((id: JsonRpcId) => JsonRpcErrorObject) | null;
  };
  private readonly outbound: OutboundRequests;
  // Made with the first handler: a peer that serves through its fallback handler (a stateless
  // POST's, made per request) never builds them (docs/decisions.md 171).
  private requestHandlers: Map<string, RequestHandler> | undefined;
  private notificationHandlers: Map<string, NotificationHandler> | undefined;
  private readonly inbound: InboundRequests;
  private nextId = 1;
  private isClosed = false;
  /** Why the connection ended; for a requested close made only when an error is needed. */
  private closedReason: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(transport: Transport, options: PeerOptions = {}) {
    this.transport = transport;
    this.opts = {
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      maxTotalTimeoutMs: options.maxTotalTimeoutMs ?? 600_000,
      maxPendingRequests: options.maxPendingRequests ?? 10_000,
      answerParseErrors: options.answerParseErrors ?? true,
      batchesAllowed: options.batchesAllowed ?? (() => false),
      cancelMethod: options.cancelMethod ?? "notifications/cancelled",
      cancelParams: options.cancelParams ?? defaultCancelParams,
      cancelledId: options.cancelledId ?? defaultCancelledId,
      cancelledReply: options.cancelledReply ?? null,
      progressMethod: options.progressMethod === undefined ? "notifications/progress" : options.progressMethod,
    };
    this.inbound = new InboundRequests({
      notify: (method, params, o) => this.notify(method, params, o),
      request: (method, params, o) => this.request(method, params, o),
      progressMethod: this.opts.progressMethod,
      cancelledReply: this.opts.cancelledReply,
      reply: (r) => this.sendReply(r),
    });
    this.outbound = new OutboundRequests({
      stats: this.stats,
      timedOut: (p, error) => this.abandon(p, error, "timeout"),
      callbackFailed: (what, e) => this.reportHandlerError(what, e),
    });
  }

  /** True once the connection has ended. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Requests sent and not yet settled. */
  get pendingCount(): number {
    return this.outbound.size;
  }

  /**
   * Set once a line over the transport's limit was discarded without a readable response id:
   * a sentence saying so, which the timeout of a request in flight at that moment repeats
   * (the line may have been its response). For callers with deadlines of their own.
   */
  get lastDiscardedLine(): string | undefined {
    return this.outbound.lastDiscardedLine;
  }

  /** Wires the transport and starts it. */
  start(): Promise<void> {
    try {
      this.transport.onmessage = (m) => this.receive(m);
      this.transport.onerror = (e) => this.transportError(e);
      this.transport.onclose = (reason) => this.ended(reason);
      // The transport's own promise when it gives one (Promise.resolve returns it as it is):
      // no promise of the peer's per start, and a stateless POST starts a peer each.
      return Promise.resolve(this.transport.start());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  setRequestHandler(method: string, handler: RequestHandler): void {
    (this.requestHandlers ??= new Map()).set(method, handler);
  }

  removeRequestHandler(method: string): void {
    this.requestHandlers?.delete(method);
  }

  setNotificationHandler(method: string, handler: NotificationHandler): void {
    (this.notificationHandlers ??= new Map()).set(method, handler);
  }

  removeNotificationHandler(method: string): void {
    this.notificationHandlers?.delete(method);
  }

  /**
   * Sends a request and resolves with its result. Rejects with `RpcError` for an error
   * response and `BridgeError` (`TIMEOUT`, `CANCELLED`, `CLOSED`, `PROCESS_EXITED`, ...) otherwise.
   */
  request<T = unknown>(method: string, params?: JsonRpcParams, options: RequestOptions = {}): Promise<T> {
    if (this.isClosed) return Promise.reject(this.closedError());
    if (options.signal?.aborted) return Promise.reject(cancelledError(method, options.signal));
    if (this.outbound.size >= this.opts.maxPendingRequests) {
      return Promise.reject(
        new BridgeError("TOO_MANY_PENDING", `${method}: ${this.outbound.size} requests already in flight`),
      );
    }
    const id = this.nextId++;
    let sentParams = params;
    if (options.onProgress && this.opts.progressMethod && !Array.isArray(params)) {
      const meta = { ...((params?._meta as Record<string, unknown> | undefined) ?? {}), progressToken: id };
      sentParams = { ...params, _meta: meta };
    }
    const message: JsonRpcRequest = sentParams === undefined
      ? { jsonrpc: "2.0", id, method }
      : { jsonrpc: "2.0", id, method, params: sentParams };
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.opts.requestTimeoutMs;
      const p: Pending = {
        id,
        method,
        resolve: resolve as (v: unknown) => void,
        reject,
        timer: undefined,
        timeoutMs,
        deadline: Date.now() + (options.maxTotalTimeoutMs ?? this.opts.maxTotalTimeoutMs),
        onProgress: options.onProgress,
        resetOnProgress: options.resetTimeoutOnProgress ?? true,
        signal: options.signal,
        onAbort: undefined,
      };
      this.outbound.add(p);
      if (p.signal) {
        p.onAbort = () => this.abandon(p, cancelledError(method, p.signal!), "cancelled by the caller");
        p.signal.addEventListener("abort", p.onAbort, { once: true });
      }
      // A request that could not be sent (params that cannot be serialised, a closed channel)
      // never left: it fails as it is, and no cancellation follows it.
      this.write(message, options.relatedRequestId).catch((err: unknown) => {
        if (this.outbound.get(id) === p) {
          this.outbound.settle(p);
          reject(err instanceof Error ? err : new BridgeError("CLOSED", errorMessage(err)));
        }
      });
    });
  }

  /** Sends a notification (no id, no response). */
  notify(method: string, params?: JsonRpcParams, options: NotifyOptions = {}): Promise<void> {
    if (this.isClosed) return Promise.reject(this.closedError());
    const message: JsonRpcNotification = params === undefined
      ? { jsonrpc: "2.0", method }
      : { jsonrpc: "2.0", method, params };
    return this.write(message, options.relatedRequestId);
  }

  /**
   * Closes the connection: every pending request rejects with `BridgeError CLOSED`, every
   * running handler's signal aborts, and the transport closes. Idempotent.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.ended(undefined);
      this.closing = this.transport.close().catch(() => undefined);
    }
    return this.closing;
  }

  private write(message: JsonRpcMessage | JsonRpcMessage[], relatedRequestId?: JsonRpcId): Promise<void> {
    try {
      return relatedRequestId === undefined
        ? this.transport.send(message)
        : this.transport.send(message, { relatedRequestId });
    } catch (err) {
      // A transport that throws instead of rejecting must not take the process down.
      return Promise.reject(err);
    }
  }

  /** Gives up on a request: settle the caller now, tell the other side best-effort. */
  private abandon(p: Pending, error: Error, reason: string): void {
    if (this.outbound.get(p.id) !== p) return;
    this.outbound.settle(p);
    p.reject(error);
    if (!this.isClosed) {
      this.notify(this.opts.cancelMethod, this.opts.cancelParams(p.id, reason)).catch(() => undefined);
    }
  }

  private receive(value: unknown): void {
    if (Array.isArray(value)) {
      this.receiveBatch(value);
      return;
    }
    const reply = this.dispatch(value);
    if (reply === undefined) return;
    if (reply instanceof Promise) void reply.then(this.sendReply);
    else this.sendReply(reply);
  }

  /** Writes a reply; a failed write is the transport's to report (onerror/onclose). */
  private readonly sendReply = (reply: Reply): void => {
    if (reply !== undefined) this.write(reply).catch(ignore);
  };

  private receiveBatch(items: unknown[]): void {
    if (items.length === 0 || !this.opts.batchesAllowed()) {
      const reason = items.length === 0 ? "empty batch" : "batches are not supported by the negotiated protocol version";
      this.write(errorResponse(null, ErrorCode.InvalidRequest, `Invalid Request: ${reason}`)).catch(() => undefined);
      return;
    }
    const replies = items.map((item) => this.dispatch(item)).filter((r) => r !== undefined);
    if (replies.length === 0) return;
    void Promise.all(replies).then((all: Reply[]) => {
      const answers = all.filter((r): r is JsonRpcResponse => r !== undefined);
      if (answers.length > 0) this.write(answers).catch(() => undefined);
    });
  }

  /** Handles one message; returns the reply to send, if any. */
  private dispatch(value: unknown): Reply | Promise<Reply> {
    const c = classifyMessage(value);
    switch (c.kind) {
      case "response":
        this.outbound.receive(c.message);
        return undefined;
      case "notification":
        this.receiveNotification(c.message);
        return undefined;
      case "request":
        return this.receiveRequest(c.message);
      case "invalid":
        this.stats.invalidMessages++;
        if (c.response === undefined) return errorResponse(c.id, ErrorCode.InvalidRequest, `Invalid Request: ${c.reason}`);
        // A malformed response is never answered (see ClassifiedMessage); its request fails.
        if (c.response.id !== null) {
          this.outbound.fail(c.response.id, (p) => new BridgeError("INVALID_MESSAGE", `request "${p.method}": the response is malformed: ${c.reason}`, {
            details: { method: p.method, reason: c.reason },
          }));
        }
        return undefined;
    }
  }

  private receiveNotification(n: JsonRpcNotification): void {
    const { method, params } = n;
    if (method === this.opts.cancelMethod) {
      const id = this.opts.cancelledId(params);
      if (id !== undefined) this.inbound.cancel(id);
    } else if (method === this.opts.progressMethod) {
      this.outbound.progress(params);
    }
    const handler = this.notificationHandlers?.get(method);
    try {
      const done = handler ? handler(params) : this.fallbackNotificationHandler?.(method, params);
      if (done instanceof Promise) done.catch((e: unknown) => this.reportHandlerError(method, e));
    } catch (e) {
      this.reportHandlerError(method, e);
    }
  }

  private receiveRequest(req: JsonRpcRequest): Reply | Promise<Reply> {
    const handler = this.requestHandlers?.get(req.method);
    if (handler) return this.inbound.run(req, handler);
    const fallback = this.fallbackRequestHandler;
    if (fallback) return this.inbound.run(req, (params, ctx) => fallback(req.method, params, ctx));
    return errorResponse(req.id, ErrorCode.MethodNotFound, `Method not found: ${req.method}`);
  }

  private transportError(e: Error): void {
    if (e instanceof BridgeError && (e.code === "PARSE_ERROR" || e.code === "INVALID_UTF8" || e.code === "LINE_TOO_LONG")) {
      this.stats.parseErrors++;
      if (e.code === "LINE_TOO_LONG") this.outbound.lineTooLong(e, this.nextId);
      if (this.opts.answerParseErrors) {
        this.write(errorResponse(null, ErrorCode.ParseError, `Parse error: ${e.message}`)).catch(() => undefined);
      }
    }
    this.onerror?.(e);
  }

  private reportHandlerError(method: string, e: unknown): void {
    // Plain: the fault is the handler's (the caller's code), reported for its log with the
    // handler's error as the cause; none of our codes describes it.
    this.onerror?.(new Error(`handler for "${method}" failed: ${errorMessage(e)}`, { cause: e }));
  }

  /** The connection ended (requested when `reason` is undefined). Runs once. */
  private ended(reason: Error | undefined): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.closedReason = reason;
    // An Error captures a stack trace: not worth it for a close with nothing left to settle
    // (every POST of a stateless HTTP server ends its own peer this way).
    if (this.outbound.size > 0 || this.inbound.size > 0) {
      const err = this.closedError();
      this.outbound.failAll(err);
      this.inbound.abortAll(err);
    }
    this.onclose?.(reason);
  }

  private closedError(): Error {
    const r = (this.closedReason ??= new BridgeError("CLOSED", "connection closed"));
    return r instanceof BridgeError ? r : new BridgeError("CLOSED", `connection closed: ${r.message}`, { cause: r });
  }
}

function ignore(): void {}

function cancelledError(method: string, signal: AbortSignal): BridgeError {
  return new BridgeError("CANCELLED", `request "${method}" was cancelled`, { cause: signal.reason });
}

function errorResponse(id: JsonRpcId | null, code: number, message: string): JsonRpcErrorResponse {
  return { jsonrpc: "2.0", id, error: { code, message } };
}
