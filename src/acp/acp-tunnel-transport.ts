/**
 * An MCP connection carried over an ACP connection (MCP over ACP), as a {@link Transport}: the
 * MCP client or server on top of it is the same `McpClient` / `McpServer` as over stdio.
 *
 * - {@link AcpTunnelTransport} is one end of one tunnelled MCP connection. On the agent side
 *   (`side: "client"`) it sends what the MCP client writes as `client_to_server` envelopes and
 *   hands it the `server_to_client` ones; a provider uses `side: "server"`, the other way round.
 * - {@link AcpTunnelRouter} owns the tunnels of one ACP connection and dispatches the incoming
 *   envelopes to them by server key (the draft's `acp:` url). It lives in acp-tunnel-router.ts;
 *   the agent-side sessions hook {@link mcpOverAcpHook} in mcp-over-acp-hook.ts. Both are
 *   re-exported here.
 *
 * Requests map one to one: an inner request becomes an outer ACP request whose result carries
 * the inner response. Cancelling keeps both layers in step: an inner `notifications/cancelled`
 * also ends the outer request (the receiving end answers it `-32800`), and an outer request
 * cancelled at the ACP level reaches the inner handler as `notifications/cancelled`.
 */
import { BridgeError, ErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import {
  classifyMessage,
  IdTable,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcParams,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../jsonrpc/message.ts";
import { McpNotification } from "../mcp/types.ts";
import type { Transport } from "../transport/transport.ts";
import {
  cancelledRequestId,
  draftBinding,
  type McpOverAcpBinding,
  type TunnelDirection,
} from "./mcp-over-acp.ts";
import { TransportLifecycle } from "../transport/lifecycle.ts";

/** The ACP connection as a tunnel needs it. A `JsonRpcPeer` fits as it is. */
export interface AcpMessageLink {
  request(
    method: string,
    params: JsonRpcParams,
    options?: { signal?: AbortSignal; timeoutMs?: number; maxTotalTimeoutMs?: number },
  ): Promise<unknown>;
  notify(method: string, params: JsonRpcParams): Promise<void>;
}

/** Which end of the MCP connection this process is: the MCP client (agent) or the MCP server (provider). */
export type TunnelSide = "client" | "server";

export interface AcpTunnelOptions {
  /** The server key (draft: the `acp:` url) every envelope names. */
  key: string;
  link: AcpMessageLink;
  /** Default `client`. */
  side?: TunnelSide;
  /** Default {@link draftBinding}. */
  binding?: McpOverAcpBinding;
  /**
   * Time cap of one outer request, ms. Default one hour: the inner MCP peer times its own
   * requests out and its cancel ends the outer request, so this only bounds a stuck tunnel.
   */
  outerTimeoutMs?: number;
  /** Called once when the tunnel closes (the router uses it to forget the key). */
  onDetach?: () => void;
}

const DEFAULT_OUTER_TIMEOUT_MS = 60 * 60 * 1000;

const outgoingDirection = (side: TunnelSide): TunnelDirection => (side === "client" ? "client_to_server" : "server_to_client");

interface Incoming {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

/**
 * One tunnelled MCP connection.
 *
 * ```ts
 * const router = new AcpTunnelRouter({ link: acpPeer, side: "client" });
 * const client = new McpClient();
 * await client.connect(router.open("acp:6f1c..."));
 * ```
 *
 * The other side cannot close a tunnel (the draft has no such message); it ends when it is
 * closed here, or when its router is closed because the ACP connection ended.
 */
export class AcpTunnelTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  readonly key: string;
  readonly side: TunnelSide;
  private readonly link: AcpMessageLink;
  private readonly binding: McpOverAcpBinding;
  private readonly outerTimeoutMs: number;
  private readonly onDetach: (() => void) | undefined;
  /** Outer requests we sent, by inner id: aborting one cancels it at the ACP level. */
  private readonly outgoing = new IdTable<AbortController>();
  /** Outer requests we received, by inner id, waiting for the inner response. */
  private readonly incoming = new IdTable<Incoming>();
  private readonly life: TransportLifecycle;

  constructor(options: AcpTunnelOptions) {
    this.key = options.key;
    this.life = new TransportLifecycle(this, `MCP over ACP ${options.key}`);
    this.side = options.side ?? "client";
    this.link = options.link;
    this.binding = options.binding ?? draftBinding;
    this.outerTimeoutMs = options.outerTimeoutMs ?? DEFAULT_OUTER_TIMEOUT_MS;
    this.onDetach = options.onDetach;
  }

  /** Inner requests waiting for an answer, both ways (for diagnostics and tests). */
  get pendingCount(): number {
    return this.outgoing.size + this.incoming.size;
  }

  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  async send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") throw this.life.notOpen();
    // The draft carries one message per envelope; a batch travels as its elements, in order.
    const items = Array.isArray(message) ? message : [message];
    const sent: Promise<void>[] = [];
    for (const item of items) {
      const c = classifyMessage(item);
      if (c.kind === "request") this.sendRequest(c.message);
      else if (c.kind === "notification") sent.push(this.sendNotification(c.message));
      else if (c.kind === "response") this.answer(c.message);
      else throw new BridgeError("INVALID_MESSAGE", `MCP over ACP ${this.key}: not a JSON-RPC message: ${c.reason}`);
    }
    await Promise.all(sent);
  }

  close(): Promise<void> {
    return this.shutdown(undefined);
  }

  /**
   * An outer request carried an inner request for this tunnel; resolves with the outer result
   * once the inner side answers. `signal` aborts when the outer request is cancelled.
   */
  receiveRequest(message: JsonRpcRequest, signal?: AbortSignal): Promise<Record<string, unknown>> {
    if (this.life.state !== "open") {
      return Promise.reject(new RpcError(ErrorCode.InternalError, `MCP over ACP ${this.key}: the MCP connection is not open`, { url: this.key }));
    }
    const id = message.id;
    if (this.incoming.has(id)) {
      return Promise.reject(new RpcError(ErrorCode.InvalidRequest, `MCP over ACP ${this.key}: inner id ${JSON.stringify(id)} is already in use`));
    }
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (this.incoming.get(id) !== entry) return;
        this.incoming.delete(id);
        reject(requestCancelled());
        this.deliver({ jsonrpc: "2.0", method: McpNotification.Cancelled, params: { requestId: id, reason: "cancelled over ACP" } });
      };
      const entry: Incoming = {
        resolve: (r) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      this.incoming.set(id, entry);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.deliver(message);
    });
  }

  /** An outer notification carried an inner notification for this tunnel. */
  receiveNotification(message: JsonRpcNotification): void {
    if (this.life.state !== "open") return;
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) {
      // The inner handler stops and sends nothing; the outer request still needs its answer.
      const entry = this.incoming.get(cancelled);
      if (entry) {
        this.incoming.delete(cancelled);
        entry.reject(requestCancelled());
      }
    }
    this.deliver(message);
  }

  /** Closes with a reason (the ACP connection ended); `onclose` gets it. */
  shutdown(reason: Error | undefined): Promise<void> {
    return this.life.close(async () => {
      const gone = new RpcError(ErrorCode.InternalError, `MCP over ACP ${this.key}: the MCP connection closed`, { url: this.key });
      for (const entry of this.incoming.values()) entry.reject(gone);
      this.incoming.clear();
      for (const controller of this.outgoing.values()) controller.abort(gone);
      this.outgoing.clear();
      this.onDetach?.();
      this.life.ended(reason);
    });
  }

  private sendRequest(request: JsonRpcRequest): void {
    const envelope = this.binding.encode(outgoingDirection(this.side), this.key, request);
    const controller = new AbortController();
    const previous = this.outgoing.get(request.id);
    previous?.abort(new BridgeError("CANCELLED", "inner id reused"));
    this.outgoing.set(request.id, controller);
    this.link
      .request(envelope.method, envelope.params, {
        signal: controller.signal,
        timeoutMs: this.outerTimeoutMs,
        maxTotalTimeoutMs: this.outerTimeoutMs,
      })
      .then((result) => this.binding.decodeResult(request, result))
      .catch((err: unknown) => errorAnswer(request, err))
      .then((response) => {
        if (this.outgoing.get(request.id) !== controller) return;
        this.outgoing.delete(request.id);
        this.deliver(response);
      });
  }

  private async sendNotification(notification: JsonRpcNotification): Promise<void> {
    const envelope = this.binding.encode(outgoingDirection(this.side), this.key, notification);
    const sent = this.link.notify(envelope.method, envelope.params);
    const cancelled = cancelledRequestId(notification);
    const controller = cancelled === undefined ? undefined : this.outgoing.get(cancelled);
    if (cancelled !== undefined && controller) {
      // The inner peer has given up on it; stop waiting for the outer answer too.
      this.outgoing.delete(cancelled);
      controller.abort(new BridgeError("CANCELLED", "cancelled by the MCP peer"));
    }
    await sent;
  }

  private answer(response: JsonRpcResponse): void {
    const id = response.id;
    const entry = id === null ? undefined : this.incoming.get(id);
    // No entry: the request was cancelled meanwhile, and its answer is not wanted.
    if (!entry || id === null) return;
    this.incoming.delete(id);
    entry.resolve(this.binding.encodeResult(response));
  }

  private deliver(message: JsonRpcMessage): void {
    if (this.life.ending) return;
    try {
      this.onmessage?.(message);
    } catch (err) {
      // Plain: the value was thrown by the caller's onmessage; it is passed on, not classified.
      this.onerror?.(err instanceof Error ? err : new Error(errorMessage(err)));
    }
  }
}

/** ACP's answer to a request that was cancelled. */
function requestCancelled(): RpcError {
  return new RpcError(ErrorCode.RequestCancelled, "Request cancelled");
}

/** The inner error response that stands for an outer request that failed. */
function errorAnswer(request: JsonRpcRequest, err: unknown): JsonRpcErrorResponse {
  if (err instanceof RpcError) {
    const error = { code: err.code, message: `MCP over ACP: ${err.message}` } as JsonRpcErrorResponse["error"];
    if (err.data !== undefined) error.data = err.data;
    return { jsonrpc: "2.0", id: request.id, error };
  }
  return { jsonrpc: "2.0", id: request.id, error: { code: ErrorCode.InternalError, message: `MCP over ACP: ${errorMessage(err)}` } };
}
