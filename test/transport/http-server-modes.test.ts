import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { StreamableHttpServer, type StreamableHttpServerOptions } from "../../src/transport/http-server.ts";
import { agent, buildMcp, call, initSession, JSON_POST, messageOf, send, serveFixture } from "./http-test-helpers.ts";
import { until } from "../helpers/wait.ts";

after(() => agent.destroy());

const start = (options: Partial<StreamableHttpServerOptions> = {}) => serveFixture((onSession) => new StreamableHttpServer({ onSession, ...options }));

const note = { jsonrpc: "2.0", method: "notifications/roots/list_changed" };
const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });

test("a batch on a 2025-03-26 session gets one JSON array with every answer", async () => {
  const s = await start();
  const session = await initSession(s.url, "2025-03-26");
  const r = await send(s.url, { headers: session.post(), body: [call(1, "echo", { text: "x" }), note, ping(2)] });
  assert.equal(r.status, 200);
  assert.equal(r.headers["content-type"], "application/json");
  const answers = JSON.parse(r.body) as Array<{ id: number; result: unknown }>;
  assert.deepEqual(answers.map((a) => a.id).sort(), [1, 2]);
  assert.deepEqual(answers.find((a) => a.id === 2)!.result, {});
  const notesOnly = await send(s.url, { headers: session.post(), body: [note, note] });
  assert.equal(notesOnly.status, 202);
  await s.stop();
});

test("a batch whose handler notifies first is one SSE stream ending with the array", async () => {
  const s = await start();
  const session = await initSession(s.url, "2025-03-26");
  const r = await send(s.url, { headers: session.post(), body: [call(1, "chatty"), ping(2)] });
  assert.equal(r.headers["content-type"], "text/event-stream");
  await r.sse!.ended;
  const data = r.sse!.events.map((e) => JSON.parse(e.data) as unknown);
  const last = data[data.length - 1] as Array<{ id: number }>;
  assert.ok(Array.isArray(last));
  assert.deepEqual(last.map((a) => a.id).sort(), [1, 2]);
  assert.deepEqual(data.slice(0, -1).map((m) => (m as { method: string }).method), ["notifications/message", "notifications/message"]);
  await s.stop();
});

test("batches are refused with 400 -32600 outside 2025-03-26, and when empty, duplicated or holding initialize", async () => {
  const s = await start();
  const modern = await initSession(s.url, "2025-11-25");
  const refused = await send(s.url, { headers: modern.post(), body: [ping(901), ping(902)] });
  assert.equal(refused.status, 400);
  assert.equal(JSON.parse(refused.body).error.code, -32600);
  assert.equal(JSON.parse(refused.body).id, null);
  const old = await initSession(s.url, "2025-03-26");
  for (const body of [[], [ping(1), ping(1)], [ping(1), { jsonrpc: "2.0", id: 3, method: "initialize", params: {} }], [ping(1), { bad: true }]]) {
    const r = await send(s.url, { headers: old.post(), body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(JSON.parse(r.body).error.code, -32600);
  }
  const again = await send(s.url, { headers: old.post(), body: [ping(5)] });
  assert.equal(again.status, 200);
  await s.stop();
});

test("a request id already in flight on the session is refused", async () => {
  const s = await start();
  const session = await initSession(s.url);
  const first = send(s.url, { headers: session.post(), body: call(1, "wait") });
  await until(() => s.steps.includes("wait:start"), "the wait tool to start");
  const dup = await send(s.url, { headers: session.post(), body: call(1, "echo", { text: "x" }) });
  assert.equal(dup.status, 400);
  assert.deepEqual(JSON.parse(dup.body).id, 1);
  s.gate.release();
  const r = await first;
  assert.equal(JSON.parse(r.body).result.content[0].text, "waited");
  await s.stop();
});

test("stateless mode: no session header, a fresh session per POST, GET and DELETE get 405", async () => {
  const s = await start({ stateless: true });
  const init = await send(s.url, {
    headers: JSON_POST,
    body: { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } },
  });
  assert.equal(init.status, 200);
  assert.equal(init.headers["mcp-session-id"], undefined);
  assert.equal(JSON.parse(init.body).result.protocolVersion, "2025-11-25");
  // No initialize on this "connection": the server takes the version from the header.
  const r = await send(s.url, { headers: { ...JSON_POST, "mcp-protocol-version": "2025-11-25" }, body: call(2, "echo", { text: "stateless" }) });
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).result.content[0].text, "stateless");
  const streamed = await send(s.url, { headers: JSON_POST, body: call(3, "chatty") });
  assert.equal(streamed.headers["content-type"], "text/event-stream");
  await streamed.sse!.ended;
  assert.ok(streamed.sse!.events.every((e) => e.id === undefined && e.data !== ""), "no ids, no priming: nothing to resume");
  assert.equal(messageOf(streamed.sse!.events.at(-1)!).id, 3);
  assert.equal((await send(s.url, { headers: { ...JSON_POST, "mcp-protocol-version": "1999-01-01" }, body: ping(4) })).status, 400);
  // Without a version header 2025-03-26 is assumed, so a batch is fine.
  const batch = await send(s.url, { headers: JSON_POST, body: [ping(5), ping(6)] });
  assert.equal(JSON.parse(batch.body).length, 2);
  assert.equal((await send(s.url, { headers: JSON_POST, body: note })).status, 202);
  const get = await send(s.url, { method: "GET", headers: { accept: "text/event-stream" } });
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, "POST");
  assert.equal((await send(s.url, { method: "DELETE" })).status, 405);
  await until(() => s.mcp.sessions.size === 0, "every per-POST session to end");
  assert.equal(s.http.sessionCount, 0);
  await s.stop();
});

test("mounted in an existing node:http server with configured allow-lists", async () => {
  const { mcp } = buildMcp();
  const mcpHttp = new StreamableHttpServer({
    onSession: (t) => mcp.connect(t),
    path: "/api/mcp",
    allowedHosts: ["tools.internal:9000"],
    allowedOrigins: ["https://ui.internal"],
  });
  const server = createServer((req, res) => {
    if (req.url?.startsWith("/api/mcp")) return void mcpHttp.handle(req, res);
    res.writeHead(200, { "content-type": "text/plain" }).end("app");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  assert.equal((await send(`${base}/`, { method: "GET" })).body, "app");
  const body = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };
  assert.equal((await send(`${base}/api/mcp`, { headers: JSON_POST, body })).status, 403, "loopback Host is not on the configured list");
  const ok = await send(`${base}/api/mcp`, { headers: { ...JSON_POST, host: "tools.internal:9000", origin: "https://ui.internal" }, body });
  assert.equal(ok.status, 200);
  assert.equal((await send(`${base}/api/mcp/x`, { headers: { ...JSON_POST, host: "tools.internal:9000" }, body })).status, 404);
  await mcpHttp.close();
  await mcp.close();
  await new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
});

test("DELETE while a request is pending: its POST gets 404, the McpServer session ends", async () => {
  const s = await start();
  const session = await initSession(s.url);
  const pending = send(s.url, { headers: session.post(), body: call(1, "wait") });
  const stream = await send(s.url, { method: "GET", headers: session.get() });
  await until(() => s.steps.includes("wait:start"), "the wait tool to start");
  const del = await send(s.url, { method: "DELETE", headers: { "mcp-session-id": session.id } });
  assert.equal(del.status, 204);
  assert.equal((await pending).status, 404);
  await stream.sse!.ended;
  assert.equal(s.mcp.sessions.size, 0);
  await s.stop();
});
