/**
 * MCP over ACP: an MCP connection carried inside an ACP connection, so that a component on the
 * editor's side of an agent (an editor, a proxy, a conductor) can offer MCP servers that live
 * in its own process.
 *
 * The wire format is a *binding*, kept behind {@link McpOverAcpBinding}: the tunnel transport,
 * the provider and the conductor only ever ask the binding how to recognise a declaration, how
 * to wrap and unwrap a message and what capability to look for. Two bindings exist in the wild:
 *
 * 1. The early draft ({@link draftBinding}, implemented here; docs/decisions.md 7):
 *    - declaration `{"name": ..., "transport": "http", "url": "acp:<uuid>", "headers": {}}`;
 *    - capability `agentCapabilities._meta.mcp_acp_transport: true`;
 *    - methods `_mcp/client_to_server/request|notification` and
 *      `_mcp/server_to_client/request|notification`, params `{url, message}` with the whole
 *      inner JSON-RPC message, and a request's ACP result `{message: <inner response>}`.
 * 2. The upstream binding (ACP SDK 2.4.0 unstable schema), planned: declaration
 *    `{"type": "acp", "name", "serverId"}`, capability `mcpCapabilities.acp`, one method
 *    `mcp/message` both ways with `{serverId, requestId, method, params}` and a carrier result
 *    `{result}` / `{error}`. It is built on the stateless MCP revision, so it will also need a
 *    local answer to `initialize`; that lives in the tunnel endpoint, not here. It fits this
 *    interface: `serverKey` is the serverId, `encode`/`decode` split and rebuild the inner
 *    message instead of nesting it, `encodeResult`/`decodeResult` use the carrier. Nothing in
 *    the draft binding below has to change for it.
 *
 * Errors of the binding itself (not of the inner MCP server) are ACP errors on the outer
 * message: `-32602` for a malformed envelope, `-32002` with `data.url` for a url nobody
 * declared (the same code ACP uses for an unknown session, with the missing key in `data`).
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import {
  classifyMessage,
  type JsonRpcNotification,
  type JsonRpcParams,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from "../jsonrpc/message.ts";
import { McpNotification } from "../mcp/types.ts";
import { isPlainObject as isObject } from "../util/object.ts";

/** Which way an inner MCP message travels. */
export type TunnelDirection = "client_to_server" | "server_to_client";

/** An inner message taken out of an envelope. */
export type DecodedEnvelope =
  | { key: string; direction: TunnelDirection; kind: "request"; message: JsonRpcRequest }
  | { key: string; direction: TunnelDirection; kind: "notification"; message: JsonRpcNotification };

/** An envelope ready to send: the outer ACP method and params. */
export interface EncodedEnvelope {
  method: string;
  params: Record<string, unknown>;
  /** True when the outer message is a request (its result carries the inner response). */
  expectsResult: boolean;
}

/**
 * One wire format of MCP over ACP. Pure: no I/O, no state, so two bindings can serve one
 * ACP connection side by side (each claims its own methods through {@link handles}).
 */
export interface McpOverAcpBinding {
  /** A short name for logs and errors, e.g. `draft`. */
  readonly name: string;
  /** What an agent merges into its `initialize` result's `agentCapabilities` to say it speaks this binding. */
  agentCapabilities(): Record<string, unknown>;
  /** `agentCapabilities` with this binding's announcement added (everything else kept). */
  withCapability(agentCapabilities: unknown): Record<string, unknown>;
  /** Whether an agent's `agentCapabilities` (from its `initialize` result) announce this binding. */
  agentSupports(agentCapabilities: unknown): boolean;
  /** Whether an element of `mcpServers` is a server reached through this binding. */
  isAcpServer(declaration: unknown): boolean;
  /** The key that routes messages to a declared server (the draft's `acp:` url), if it is one. */
  serverKey(declaration: unknown): string | undefined;
  /** The server name of a declaration, if it has one. */
  serverName(declaration: unknown): string | undefined;
  /** A fresh, unguessable key for a new declaration. */
  newServerKey(): string;
  /** The `mcpServers` element that declares a server under `key`. */
  declaration(name: string, key: string): Record<string, unknown>;
  /** Whether an outer ACP method belongs to this binding. */
  handles(method: string): boolean;
  /** The outer methods that carry inner requests and notifications travelling `direction`. */
  methods(direction: TunnelDirection): { request: string; notification: string };
  /** Wraps an inner request or notification. */
  encode(direction: TunnelDirection, key: string, message: JsonRpcRequest | JsonRpcNotification): EncodedEnvelope;
  /**
   * Unwraps an outer message of one of this binding's methods. `expect` says what the receiver
   * serves: whether the outer message came as a request, and the direction it accepts (a
   * binding whose methods name a direction checks it; one that does not takes it from here).
   * Throws `RpcError -32601` for a direction the receiver does not serve and `-32602` for a
   * malformed envelope (including a request's envelope carrying a notification, or the reverse).
   */
  decode(method: string, params: unknown, expect: { isRequest: boolean; direction: TunnelDirection }): DecodedEnvelope;
  /** The outer result that answers an outer request with an inner response. */
  encodeResult(response: JsonRpcResponse): Record<string, unknown>;
  /**
   * The inner response inside an outer result. Throws `RpcError -32603` when the result has
   * no valid response, or answers another id than `request.id`.
   */
  decodeResult(request: JsonRpcRequest, result: unknown): JsonRpcResponse;
}

/** Methods of the draft binding. */
export const DRAFT_METHODS = {
  clientToServerRequest: "_mcp/client_to_server/request",
  clientToServerNotification: "_mcp/client_to_server/notification",
  serverToClientRequest: "_mcp/server_to_client/request",
  serverToClientNotification: "_mcp/server_to_client/notification",
} as const;

/** The `_meta` flag an agent sets in `agentCapabilities` when it speaks the draft binding. */
export const DRAFT_CAPABILITY_FLAG = "mcp_acp_transport";

const ACP_URL_PREFIX = "acp:";
const METHOD_PREFIX = "_mcp/";

function invalidParams(method: string, why: string, data?: Record<string, unknown>): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `${method}: ${why}`, data);
}

function parseMethod(method: string): { direction: TunnelDirection; kind: "request" | "notification" } | undefined {
  switch (method) {
    case DRAFT_METHODS.clientToServerRequest:
      return { direction: "client_to_server", kind: "request" };
    case DRAFT_METHODS.clientToServerNotification:
      return { direction: "client_to_server", kind: "notification" };
    case DRAFT_METHODS.serverToClientRequest:
      return { direction: "server_to_client", kind: "request" };
    case DRAFT_METHODS.serverToClientNotification:
      return { direction: "server_to_client", kind: "notification" };
    default:
      return undefined;
  }
}

function draftServerKey(declaration: unknown): string | undefined {
  if (!isObject(declaration)) return undefined;
  // The draft spells the kind `transport`; ACP's own union spells it `type`. Either names http.
  const kind = declaration.transport ?? declaration.type;
  const url = declaration.url;
  if (kind !== "http" || typeof url !== "string") return undefined;
  return url.startsWith(ACP_URL_PREFIX) && url.length > ACP_URL_PREFIX.length ? url : undefined;
}

/**
 * The early draft binding.
 *
 * ```ts
 * const key = draftBinding.newServerKey();                 // "acp:6f1c..."
 * draftBinding.declaration("tools", key);                  // {name, transport: "http", url: key, headers: {}}
 * draftBinding.encode("client_to_server", key, { jsonrpc: "2.0", id: 1, method: "tools/list" });
 * // {method: "_mcp/client_to_server/request", params: {url: key, message: {...}}, expectsResult: true}
 * ```
 */
export const draftBinding: McpOverAcpBinding = {
  name: "draft",

  agentCapabilities() {
    return { _meta: { [DRAFT_CAPABILITY_FLAG]: true } };
  },

  withCapability(agentCapabilities) {
    const caps = isObject(agentCapabilities) ? agentCapabilities : {};
    const meta = isObject(caps._meta) ? caps._meta : {};
    return { ...caps, _meta: { ...meta, [DRAFT_CAPABILITY_FLAG]: true } };
  },

  agentSupports(agentCapabilities) {
    if (!isObject(agentCapabilities)) return false;
    const meta = agentCapabilities._meta;
    return isObject(meta) && meta[DRAFT_CAPABILITY_FLAG] === true;
  },

  isAcpServer(declaration) {
    return draftServerKey(declaration) !== undefined;
  },

  serverKey: draftServerKey,

  serverName(declaration) {
    return isObject(declaration) && typeof declaration.name === "string" ? declaration.name : undefined;
  },

  newServerKey() {
    return `${ACP_URL_PREFIX}${globalThis.crypto.randomUUID()}`;
  },

  declaration(name, key) {
    return { name, transport: "http", url: key, headers: {} };
  },

  handles(method) {
    return method.startsWith(METHOD_PREFIX) && parseMethod(method) !== undefined;
  },

  methods(direction) {
    return direction === "client_to_server"
      ? { request: DRAFT_METHODS.clientToServerRequest, notification: DRAFT_METHODS.clientToServerNotification }
      : { request: DRAFT_METHODS.serverToClientRequest, notification: DRAFT_METHODS.serverToClientNotification };
  },

  encode(direction, key, message) {
    const isRequest = Object.prototype.hasOwnProperty.call(message, "id");
    const method = direction === "client_to_server"
      ? isRequest ? DRAFT_METHODS.clientToServerRequest : DRAFT_METHODS.clientToServerNotification
      : isRequest ? DRAFT_METHODS.serverToClientRequest : DRAFT_METHODS.serverToClientNotification;
    return { method, params: { url: key, message }, expectsResult: isRequest };
  },

  decode(method, params, expect) {
    const shape = parseMethod(method);
    if (!shape || shape.direction !== expect.direction) throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    if ((shape.kind === "request") !== expect.isRequest) {
      throw invalidParams(method, shape.kind === "request" ? "must be sent as a request" : "must be sent as a notification");
    }
    if (!isObject(params)) throw invalidParams(method, "params must be an object {url, message}");
    const url = params.url;
    if (typeof url !== "string" || !url.startsWith(ACP_URL_PREFIX)) {
      throw invalidParams(method, 'params.url must be a string starting with "acp:"');
    }
    const inner = classifyMessage(params.message);
    if (inner.kind === "invalid") throw invalidParams(method, `params.message is not a JSON-RPC message: ${inner.reason}`, { url });
    if (inner.kind !== shape.kind) {
      throw invalidParams(method, `params.message must be a JSON-RPC ${shape.kind} (got a ${inner.kind})`, { url });
    }
    return inner.kind === "request"
      ? { key: url, direction: shape.direction, kind: "request", message: inner.message }
      : { key: url, direction: shape.direction, kind: "notification", message: inner.message as JsonRpcNotification };
  },

  encodeResult(response) {
    return { message: response };
  },

  decodeResult(request, result) {
    const inner = isObject(result) ? classifyMessage(result.message) : undefined;
    if (inner?.kind !== "response") {
      throw new RpcError(ErrorCode.InternalError, `${request.method}: the tunnel answered without a JSON-RPC response in result.message`);
    }
    if (inner.message.id !== request.id) {
      throw new RpcError(
        ErrorCode.InternalError,
        `${request.method}: the tunnel answered id ${JSON.stringify(inner.message.id)} to request id ${JSON.stringify(request.id)}`,
      );
    }
    return inner.message;
  },
};

/** Params of an inner `notifications/cancelled`, if that is what `message` is. */
export function cancelledRequestId(message: JsonRpcNotification): string | number | undefined {
  if (message.method !== McpNotification.Cancelled) return undefined;
  const params: JsonRpcParams | undefined = message.params;
  const id = isObject(params) ? params.requestId : undefined;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The error for a message naming a server key nobody declared on this connection. */
export function unknownServerError(method: string, key: string): RpcError {
  return new RpcError(ErrorCode.ResourceNotFound, `${method}: no MCP server is declared at ${key}`, { url: key });
}
