/**
 * mcp-bridge: public API. Re-exports only; every symbol lives in its layer's file.
 */
export { BridgeError, RpcError, ErrorCode, type BridgeErrorCode } from "./jsonrpc/errors.ts";
export type {
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcParams,
} from "./jsonrpc/message.ts";
export { classifyMessage } from "./jsonrpc/message.ts";
export { LineDecoder, encodeLine, DEFAULT_MAX_LINE_BYTES, type DecodedLine } from "./jsonrpc/ndjson.ts";
export {
  JsonRpcPeer,
  type PeerOptions,
  type RequestOptions,
  type RequestContext,
  type ProgressInfo,
  type PeerStats,
} from "./jsonrpc/peer.ts";

export type { Transport } from "./transport/transport.ts";
export { InMemoryTransport } from "./transport/memory.ts";
export {
  StdioClientTransport,
  StdioServerTransport,
  buildChildEnv,
  resolveCommand,
  type StdioClientOptions,
  type StdioServerOptions,
} from "./transport/stdio.ts";

export { McpClient, type McpClientOptions, type McpClientEvents, type ClientHandlers, type CallOptions } from "./mcp/client.ts";
export { McpServer, ServerSession, type McpServerOptions, type ToolHandler, type ToolContext, type Registration } from "./mcp/server.ts";
export {
  SUPPORTED_PROTOCOL_VERSIONS,
  LATEST_PROTOCOL_VERSION,
  negotiateVersion,
  isSupportedVersion,
  type ProtocolVersion,
} from "./mcp/versions.ts";
export type * from "./mcp/types.ts";
export { compileSchema, validateSchema, formatSchemaErrors, type SchemaError, type ValidationResult } from "./schema/validate.ts";
