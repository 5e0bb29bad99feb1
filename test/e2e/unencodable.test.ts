/**
 * A tool result JSON cannot carry (a BigInt, a cycle, 10^5 nested arrays) over every transport
 * with a real far end: the client gets -32603 for that call, the server process or session
 * stays up, and the next call works. Before, the stdio, TCP and legacy SSE servers threw
 * inside the reply path (a stdio server process exited).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Socket } from "node:net";
import { McpClient } from "../../src/mcp/client.ts";
import type { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { SseClientTransport } from "../../src/transport/sse-client.ts";
import { SseServer } from "../../src/transport/sse-server.ts";
import { TcpClientTransport, TcpTransport } from "../../src/transport/tcp.ts";
import { createUnencodableServer, UNENCODABLE_KINDS } from "../../fixtures/servers/unencodable.ts";
import { alive, connectFixture } from "./helpers.ts";

const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

/** Every unencodable kind answers -32603 naming JSON; an ordinary call still works after each. */
async function expectInternalErrors(client: McpClient): Promise<void> {
  for (const kind of UNENCODABLE_KINDS) {
    await assert.rejects(client.callTool("value", { kind }), {
      name: "RpcError",
      code: -32603,
      message: /^Internal error: the result cannot be serialised as JSON \(/,
    }, kind);
    assert.equal(text(await client.callTool("echo", { text: `after ${kind}` })), `after ${kind}`);
  }
}

test("stdio: a server child whose tool returns an unencodable value answers -32603 and keeps serving", async () => {
  const { client, transport } = await connectFixture("unencodable.ts");
  try {
    await expectInternalErrors(client);
    assert.equal(alive(transport.pid), true, "the server process is still running");
  } finally {
    await client.close();
  }
  assert.equal(alive(transport.pid), false);
});

test("tcp: an unencodable result is answered -32603 on the socket and the connection goes on", async () => {
  const mcp: McpServer = createUnencodableServer();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    void mcp.connect(new TcpTransport(socket, { name: "tcp test server" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const client = new McpClient();
  try {
    await client.connect(new TcpClientTransport({ port }));
    await expectInternalErrors(client);
  } finally {
    await client.close();
    await mcp.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test("Streamable HTTP and legacy SSE: an unencodable result is answered -32603 and the session goes on", async () => {
  for (const kind of ["http", "sse"] as const) {
    const mcp = createUnencodableServer();
    const http = kind === "http" ? new StreamableHttpServer({ onSession: (t) => mcp.connect(t) }) : new SseServer({ onSession: (t) => mcp.connect(t) });
    const { url } = await http.listen(0);
    const client = new McpClient();
    try {
      await client.connect(kind === "http" ? new StreamableHttpClientTransport({ url }) : new SseClientTransport({ url }));
      await expectInternalErrors(client);
    } finally {
      await client.close();
      await http.close();
      await mcp.close();
    }
  }
});
