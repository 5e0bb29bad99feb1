/**
 * `mcp-bridge/client/stdio`: everything an agent needs to use a stdio MCP server, from one
 * module: McpClient, the stdio client transport, and the error classes its calls reject with.
 * The package ships it as one bundled file (dist/client-stdio.js), because an agent imports
 * the client as it starts, and each module Node loads costs start-up time (docs/decisions.md
 * 170). Its error classes are the package's own, shared with every other subpath, so
 * `err instanceof BridgeError` holds whichever subpath an error came from.
 *
 * ```ts
 * import { McpClient, StdioClientTransport } from "mcp-bridge/client/stdio";
 * const client = new McpClient({ clientInfo: { name: "my-agent", version: "1.0.0" } });
 * await client.connect(new StdioClientTransport({ command: "npx", args: ["-y", "some-server"] }));
 * const result = await client.callTool("echo", { text: "hi" });
 * await client.close();
 * ```
 */
export * from "./mcp/client.ts";
export * from "./transport/stdio-client.ts";
export { BridgeError, RpcError, ErrorCode, type BridgeErrorCode } from "./jsonrpc/errors.ts";
