/**
 * The HTTP section's baseline server: node:http with nothing but JSON.parse and JSON.stringify,
 * no part of mcp-bridge. Each POST carries one JSON-RPC message: a request is answered with its
 * JSON response (200, application/json), a notification with 202. The reply to `initialize`
 * carries an `Mcp-Session-Id`, as the protocol has every stateful server send, so that both
 * pairs exchange the same headers (see raw-http-client.ts). No session state, no header checks,
 * no SSE: what any node:http JSON endpoint pays anyway. A request of the stateless era
 * (2026-07-28, `_meta` protocolVersion) needs no session and gets the era's result fields.
 *
 *   node raw-http-server.js      prints {"url": "http://127.0.0.1:PORT/mcp"}, exits on stdin EOF
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

interface Message {
  id?: number | string;
  method?: string;
  params?: { protocolVersion?: string; name?: string; arguments?: { text?: unknown }; _meta?: Record<string, unknown> };
}

/** The stateless era (2026-07-28): a request names its version in `_meta`. */
const ERA_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
/**
 * What a 2026-07-28 result carries besides its fields, as the echo fixture's McpServer sends
 * it (the same serverInfo, so both sides send the same bytes).
 */
const ERA_RESULT_FIELDS = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": { name: "echo", version: "1.0.0", title: "Echo fixture" } } };

function answer(message: Message): unknown {
  switch (message.method) {
    case "initialize":
      return {
        protocolVersion: message.params?.protocolVersion ?? "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "raw-http-echo", version: "1.0.0" },
      };
    case "ping":
      return {};
    case "tools/call":
      if (message.params?.name === "echo") return { content: [{ type: "text", text: String(message.params.arguments?.text) }] };
      return { content: [{ type: "text", text: "unknown tool" }], isError: true };
    default:
      return undefined;
  }
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const message = JSON.parse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")) as Message;
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const plain = answer(message);
    const result = plain !== undefined && message.params?._meta?.[ERA_VERSION_KEY] !== undefined ? { ...plain, ...ERA_RESULT_FIELDS } : plain;
    const reply =
      result === undefined
        ? { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }
        : { jsonrpc: "2.0", id: message.id, result };
    const headers = message.method === "initialize" ? { "content-type": "application/json", "mcp-session-id": randomUUID() } : { "content-type": "application/json" };
    res.writeHead(200, headers).end(JSON.stringify(reply));
  });
}

const server = createServer(onRequest);
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
process.stdin.resume();
process.stdin.on("end", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
