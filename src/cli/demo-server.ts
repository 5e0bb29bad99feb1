/**
 * The MCP servers `mcp-bridge demo` starts, one per process, on stdio:
 *
 *   node demo-server.js echo           echo, add and upper
 *   node demo-server.js many-tools N   N tools, tool_0 .. tool_{N-1}
 *
 * They ship in the package (the repository's `fixtures/` do not), so the demo runs from an
 * installed package with plain Node. Each serves one client and exits when stdin ends.
 */
import type { CallToolResult } from "../mcp/types.ts";
import { McpServer } from "../mcp/server.ts";
import { StdioServerTransport } from "../transport/stdio-server.ts";

const textResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }] });

function echoServer(): McpServer {
  const server = new McpServer({ name: "echo", version: "1.0.0", title: "mcp-bridge demo: echo" });
  const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false };
  server.tool({ name: "echo", description: "Returns the text it was given.", inputSchema: text }, (args) => textResult(String(args.text)));
  server.tool({ name: "upper", description: "Returns the text in upper case.", inputSchema: text }, (args) => textResult(String(args.text).toUpperCase()));
  server.tool(
    {
      name: "add",
      description: "Adds two numbers.",
      inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
    },
    (args) => {
      const sum = Number(args.a) + Number(args.b);
      return { ...textResult(String(sum)), structuredContent: { sum } };
    },
  );
  return server;
}

function manyToolsServer(count: number): McpServer {
  const server = new McpServer({ name: "many-tools", version: "1.0.0", title: "mcp-bridge demo: many tools" });
  for (let i = 0; i < count; i++) {
    server.tool(
      { name: `tool_${i}`, description: `Demo tool ${i} of ${count}: answers with its own name.`, inputSchema: { type: "object" } },
      () => textResult(`tool_${i}`),
    );
  }
  return server;
}

const [kind, countText = "12"] = process.argv.slice(2);
const count = Number(countText);
const server = kind === "echo" ? echoServer() : kind === "many-tools" && Number.isInteger(count) && count >= 0 ? manyToolsServer(count) : undefined;
if (server === undefined) {
  process.stderr.write("usage: demo-server (echo | many-tools [count])\n");
  process.exit(2);
}
const session = await server.connect(new StdioServerTransport());
// stdin EOF closes the transport; once the session is gone nothing holds the event loop.
session.onclose = () => void server.close();
