/**
 * Running incoming requests: each handler gets an AbortSignal and a context; a cancelled
 * request gets no response, or the peer's `cancelledReply` at once; a throwing handler becomes
 * an error response without a stack.
 */
import { isThenable } from "../util/object.ts";
import { BridgeError, ErrorCode, RpcError, errorMessage } from "./errors.ts";
import { IdTable, type JsonRpcErrorObject, type JsonRpcId, type JsonRpcParams, type JsonRpcRequest, type JsonRpcResponse } from "./message.ts";

/** What a request handler can do while it runs. */
export interface RequestContext {
  /** The id of the request being handled. */
  readonly id: JsonRpcId;
  readonly method: string;
  /** Aborted when the requester cancels, or the connection closes. */
  readonly signal: AbortSignal;
  /** `params._meta.progressToken`, when the requester asked for progress. */
  readonly progressToken: string | number | undefined;
  /**
   * Calls `listener` once with the reason when the request is aborted (at once when it already
   * was); returns a function that removes it. The same event as `signal`'s, for layers that
   * pass it on to a signal of their own: no AbortController is made for it (one costs far more
   * than a listener, on every call of a hot path). Optional: a context without it is followed
   * through `signal`.
   */
  onAbort?(listener: (reason: Error) => void): () => void;
  /** Sends a notification to the requester (logging, progress, ...), tied to this request. */
  notify(method: string, params?: JsonRpcParams): Promise<void>;
  /** Sends a request back to the requester (sampling, elicitation, roots, ...), tied to this request. */
  request<T = unknown>(method: string, params?: JsonRpcParams, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<T>;
  /** Reports progress; does nothing when the requester gave no progress token. */
  sendProgress(progress: number, total?: number, message?: string): Promise<void>;
}

interface Wiring {
  notify(method: string, params: JsonRpcParams | undefined, options: { relatedRequestId: JsonRpcId }): Promise<void>;
  request<T>(
    method: string,
    params: JsonRpcParams | undefined,
    options: { signal?: AbortSignal; timeoutMs?: number; relatedRequestId: JsonRpcId },
  ): Promise<T>;
  progressMethod: string | null;
  /** The answer to a cancelled request, or null for none (see `PeerOptions.cancelledReply`). */
  cancelledReply: ((id: JsonRpcId) => JsonRpcErrorObject) | null;
  /** Sends a reply outside a handler's own return (the answer to a cancellation). */
  reply(response: JsonRpcResponse): void;
}

/** A response, or undefined for a cancelled request; a promise when the handler is async. */
export type Reply = JsonRpcResponse | undefined;

export class InboundRequests {
  private readonly running = new IdTable<InboundContext>();
  private readonly wiring: Wiring;

  constructor(wiring: Wiring) {
    this.wiring = wiring;
  }

  /** Requests currently being handled. */
  get size(): number {
    return this.running.size;
  }

  /**
   * Runs the handler. A synchronous handler is answered synchronously (no promise, no extra
   * tick: the hot path of small servers); an async one through its promise.
   */
  run(req: JsonRpcRequest, handler: (params: unknown, ctx: RequestContext) => unknown): Reply | Promise<Reply> {
    // A duplicate id while the first is running: the first keeps its slot; the newcomer is
    // refused rather than silently sharing a cancellation channel.
    if (this.running.has(req.id)) {
      return { jsonrpc: "2.0", id: req.id, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: id ${JSON.stringify(req.id)} is already in use` } };
    }
    const ctx = new InboundContext(req, this.wiring);
    this.running.set(req.id, ctx);
    let result: unknown;
    try {
      result = handler(req.params, ctx);
    } catch (err) {
      return this.failed(ctx, err);
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        (value) => this.succeeded(ctx, value),
        (err: unknown) => this.failed(ctx, err),
      );
    }
    return this.succeeded(ctx, result);
  }

  /**
   * The requester cancelled: abort the handler; its own response will not be sent. With a
   * `cancelledReply` the request is answered now and its id is free again at once (the answer
   * ended it for the requester); without one the id stays taken until the handler returns.
   */
  cancel(id: JsonRpcId): void {
    const ctx = this.running.get(id);
    if (ctx === undefined || ctx.aborted) return;
    ctx.abort(new BridgeError("CANCELLED", "cancelled by the requester"));
    const answer = this.wiring.cancelledReply;
    if (answer === null) return;
    this.running.delete(id);
    this.wiring.reply({ jsonrpc: "2.0", id, error: answer(id) });
  }

  /** The connection ended: abort every running handler. */
  abortAll(reason: Error): void {
    for (const c of this.running.values()) c.abort(reason);
    this.running.clear();
  }

  private finish(ctx: InboundContext): void {
    if (this.running.get(ctx.id) === ctx) this.running.delete(ctx.id);
  }

  private succeeded(ctx: InboundContext, result: unknown): Reply {
    this.finish(ctx);
    if (ctx.aborted) return undefined;
    return { jsonrpc: "2.0", id: ctx.id, result: result ?? {} };
  }

  private failed(ctx: InboundContext, err: unknown): Reply {
    this.finish(ctx);
    if (ctx.aborted) return undefined;
    if (err instanceof RpcError) return { jsonrpc: "2.0", id: ctx.id, error: err.toJSON() };
    return { jsonrpc: "2.0", id: ctx.id, error: { code: ErrorCode.InternalError, message: errorMessage(err) } };
  }
}

/**
 * The context of one incoming request. Its AbortController is created only when a handler
 * reads `signal`: most handlers never do, and a controller costs more than the rest of the
 * request's bookkeeping together.
 */
class InboundContext implements RequestContext {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly progressToken: string | number | undefined;
  private controller: AbortController | undefined;
  private abortReason: Error | undefined;
  /** Listeners of {@link onAbort}, made with the first. */
  private abortListeners: ((reason: Error) => void)[] | undefined;
  private readonly wiring: Wiring;

  constructor(req: JsonRpcRequest, wiring: Wiring) {
    this.wiring = wiring;
    this.id = req.id;
    this.method = req.method;
    const params = req.params;
    const meta = params && !Array.isArray(params) ? (params._meta as Record<string, unknown> | undefined) : undefined;
    const token = meta?.progressToken;
    this.progressToken = typeof token === "string" || typeof token === "number" ? token : undefined;
  }

  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const listeners = this.abortListeners;
    this.abortListeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener(reason);
      } catch {
        // One listener's failure must not keep the others from hearing of the abort.
      }
    }
  }

  onAbort(listener: (reason: Error) => void): () => void {
    if (this.abortReason) {
      listener(this.abortReason);
      return () => undefined;
    }
    (this.abortListeners ??= []).push(listener);
    return () => {
      const i = this.abortListeners?.indexOf(listener) ?? -1;
      if (i !== -1) this.abortListeners!.splice(i, 1);
    };
  }

  notify(method: string, params?: JsonRpcParams): Promise<void> {
    return this.wiring.notify(method, params, { relatedRequestId: this.id });
  }

  request<T = unknown>(method: string, params?: JsonRpcParams, options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<T> {
    return this.wiring.request<T>(method, params, { ...options, relatedRequestId: this.id });
  }

  async sendProgress(progress: number, total?: number, message?: string): Promise<void> {
    const method = this.wiring.progressMethod;
    if (this.progressToken === undefined || method === null || this.aborted) return;
    const body: Record<string, unknown> = { progressToken: this.progressToken, progress };
    if (total !== undefined) body.total = total;
    if (message !== undefined) body.message = message;
    await this.wiring.notify(method, body, { relatedRequestId: this.id });
  }
}
