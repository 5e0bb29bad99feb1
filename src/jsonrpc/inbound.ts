/**
 * Running incoming requests: each handler gets an AbortSignal and a context; a cancelled
 * request sends no response; a throwing handler becomes an error response without a stack.
 */
import { ErrorCode, RpcError, errorMessage } from "./errors.ts";
import type { JsonRpcId, JsonRpcParams, JsonRpcRequest, JsonRpcResponse } from "./message.ts";

/** What a request handler can do while it runs. */
export interface RequestContext {
  /** The id of the request being handled. */
  readonly id: JsonRpcId;
  readonly method: string;
  /** Aborted when the requester cancels, or the connection closes. */
  readonly signal: AbortSignal;
  /** `params._meta.progressToken`, when the requester asked for progress. */
  readonly progressToken: string | number | undefined;
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
}

export class InboundRequests {
  private readonly running = new Map<JsonRpcId, AbortController>();

  constructor(private readonly wiring: Wiring) {}

  /** Requests currently being handled. */
  get size(): number {
    return this.running.size;
  }

  /** Runs the handler; resolves with the response, or undefined when it was cancelled. */
  async run(
    req: JsonRpcRequest,
    handler: (params: unknown, ctx: RequestContext) => unknown,
  ): Promise<JsonRpcResponse | undefined> {
    const controller = new AbortController();
    // A duplicate id while the first is running: the first keeps its slot; the newcomer is
    // refused rather than silently sharing a cancellation channel.
    if (this.running.has(req.id)) {
      return { jsonrpc: "2.0", id: req.id, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: id ${JSON.stringify(req.id)} is already in use` } };
    }
    this.running.set(req.id, controller);
    const ctx = this.context(req, controller.signal);
    try {
      const result = await handler(req.params, ctx);
      if (controller.signal.aborted) return undefined;
      return { jsonrpc: "2.0", id: req.id, result: result ?? {} };
    } catch (err) {
      if (controller.signal.aborted) return undefined;
      if (err instanceof RpcError) return { jsonrpc: "2.0", id: req.id, error: err.toJSON() };
      return { jsonrpc: "2.0", id: req.id, error: { code: ErrorCode.InternalError, message: errorMessage(err) } };
    } finally {
      if (this.running.get(req.id) === controller) this.running.delete(req.id);
    }
  }

  /** The requester cancelled: abort the handler; its response will not be sent. */
  cancel(id: JsonRpcId): void {
    this.running.get(id)?.abort(new Error("cancelled by the requester"));
  }

  /** The connection ended: abort every running handler. */
  abortAll(reason: Error): void {
    for (const c of this.running.values()) c.abort(reason);
    this.running.clear();
  }

  private context(req: JsonRpcRequest, signal: AbortSignal): RequestContext {
    const w = this.wiring;
    const params = req.params;
    const meta = params && !Array.isArray(params) ? (params._meta as Record<string, unknown> | undefined) : undefined;
    const token = meta?.progressToken;
    const progressToken = typeof token === "string" || typeof token === "number" ? token : undefined;
    return {
      id: req.id,
      method: req.method,
      signal,
      progressToken,
      notify: (method, p) => w.notify(method, p, { relatedRequestId: req.id }),
      request: (method, p, o) => w.request(method, p, { ...o, relatedRequestId: req.id }),
      sendProgress: async (progress, total, message) => {
        if (progressToken === undefined || w.progressMethod === null || signal.aborted) return;
        const body: Record<string, unknown> = { progressToken, progress };
        if (total !== undefined) body.total = total;
        if (message !== undefined) body.message = message;
        await w.notify(w.progressMethod, body, { relatedRequestId: req.id });
      },
    };
  }
}
