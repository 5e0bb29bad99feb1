// A server written with the official MCP TypeScript SDK (pinned in scripts/interop/), for our
// McpClient to reach in `npm run interop` (scripts/interop-sdk.ts starts it with Node 22). It
// speaks the 2025 session era only, which is what our dual-era client must fall back to.
//
//   node sdk-server.mjs stdio
//   node sdk-server.mjs http     listens on 127.0.0.1, a free port; prints "listening on <url>"
//
// Tools `echo` and `add`, a resource `sdk://greeting`, a prompt `hello`. Exits on stdin EOF
// (stdio) or SIGTERM/SIGINT (http).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const interop = join(fileURLToPath(new URL(".", import.meta.url)), "..", "interop", "package.json");
const sdk = createRequire(interop);
const load = (sub) => import(sdk.resolve(sub));
const { McpServer } = await load("@modelcontextprotocol/sdk/server/mcp.js");
const { z } = await load("zod");

function build() {
  const server = new McpServer({ name: "sdk-interop-server", version: "1.0.0" });
  server.registerTool("echo", { description: "Echoes its text.", inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() }, outputSchema: { sum: z.number() } },
    ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  server.registerResource("greeting", "sdk://greeting", { mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello from the SDK" }],
  }));
  server.registerPrompt("hello", { description: "Says hello." }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "hello" } }],
  }));
  return server;
}

const mode = process.argv[2];
if (mode === "stdio") {
  const { StdioServerTransport } = await load("@modelcontextprotocol/sdk/server/stdio.js");
  await build().connect(new StdioServerTransport());
} else if (mode === "http") {
  const { StreamableHTTPServerTransport } = await load("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (transport === undefined) {
        if (typeof id === "string") {
          res.writeHead(404, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await build().connect(transport);
      }
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  http.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
  });
  const stop = () => {
    http.close();
    http.closeAllConnections();
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
} else {
  process.stderr.write("usage: sdk-server.mjs stdio|http\n");
  process.exit(2);
}
