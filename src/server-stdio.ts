/**
 * `mcp-bridge/server/stdio`: everything a stdio MCP server needs, from one module: McpServer,
 * the stdio server transport, and the error classes a handler throws. The package ships it as
 * one bundled file (dist/server-stdio.js), because a stdio server is started for every agent
 * session that uses it, and each module Node loads costs start-up time (docs/decisions.md
 * 79). Its error classes are the package's own, shared with every other subpath, so
 * `err instanceof RpcError` holds whichever subpath an error came from.
 *
 * ```ts
 * import { McpServer, StdioServerTransport } from "mcp-bridge/server/stdio";
 * const server = new McpServer({ name: "my-server", version: "1.0.0" });
 * await server.connect(new StdioServerTransport());
 * ```
 */
export * from "./mcp/server.ts";
export * from "./transport/stdio-server.ts";
export { BridgeError, RpcError, ErrorCode, type BridgeErrorCode } from "./jsonrpc/errors.ts";
