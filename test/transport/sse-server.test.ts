import assert from "node:assert/strict";
import { after, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { SseServer, type SseServerOptions } from "../../src/transport/sse-server.ts";
import { agent, call, messageOf, send, serveFixture, type SseReply } from "./http-test-helpers.ts";
import { until } from "../helpers/wait.ts";

after(() => agent.destroy());

const start = (options: Partial<SseServerOptions> = {}) => serveFixture((onSession) => new SseServer({ onSession, ...options }));

/** Opens the stream and reads the endpoint event; returns the absolute POST URL. */
async function connect(url: URL, headers: Record<string, string> = {}): Promise<{ stream: SseReply; endpoint: URL; raw: string }> {
  const r = await send(url, { method: "GET", headers: { accept: "text/event-stream", ...headers } });
  assert.equal(r.status, 200);
  assert.equal(r.headers["content-type"], "text/event-stream");
  const first = await r.sse!.next();
  assert.equal(first.event, "endpoint");
  return { stream: r.sse!, endpoint: new URL(first.data, url), raw: first.data };
}

const post = (endpoint: URL, body: unknown, headers: Record<string, string> = {}) =>
  send(endpoint, { headers: { "content-type": "application/json", ...headers }, body });

test("legacy flow: endpoint event first, POSTs get 202 Accepted, answers arrive as message events", async () => {
  const s = await start();
  const { stream, endpoint, raw } = await connect(s.url);
  assert.match(raw, /^\/messages\?sessionId=[0-9a-f-]{36}$/);
  assert.equal(s.http.sessionCount, 1);
  const init = await post(endpoint, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "0" } } });
  assert.equal(init.status, 202);
  assert.equal(init.body, "Accepted");
  const answer = await stream.next();
  assert.equal(answer.event, "message");
  assert.equal((messageOf(answer).result as { protocolVersion: string }).protocolVersion, "2024-11-05");
  assert.equal((await post(endpoint, { jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);
  assert.equal((await post(endpoint, call(2, "chatty"))).status, 202);
  const seen = [await stream.next(), await stream.next(), await stream.next()].map(messageOf);
  assert.deepEqual(seen.map((m) => m.method ?? `result:${m.id}`), ["notifications/message", "notifications/message", "result:2"]);
  stream.close();
  await s.stop();
});

test("legacy POST errors: 400 without sessionId, 404 unknown session, 415, 400 -32700 for bad JSON, 413", async () => {
  const s = await start({ maxBodyBytes: 256 });
  const { stream, endpoint } = await connect(s.url);
  const base = new URL("/messages", s.url);
  assert.equal((await post(base, call(1, "echo"))).status, 400);
  assert.equal((await post(new URL("/messages?sessionId=", s.url), call(1, "echo"))).status, 400);
  assert.equal((await post(new URL("/messages?sessionId=nope", s.url), call(1, "echo"))).status, 404);
  assert.equal((await send(endpoint, { headers: { "content-type": "text/plain" }, body: "{}" })).status, 415);
  const bad = await post(endpoint, "{oops");
  assert.equal(bad.status, 400);
  assert.equal(JSON.parse(bad.body).error.code, -32700);
  assert.equal((await post(endpoint, { pad: "x".repeat(400) })).status, 413);
  assert.equal((await send(new URL("/elsewhere", s.url), { method: "GET" })).status, 404);
  assert.equal((await send(s.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status, 405);
  assert.equal((await send(s.url, { method: "GET", headers: { accept: "application/json" } })).status, 406);
  stream.close();
  await s.stop();
});

test("the stream closing ends the session: later POSTs get 404 and the McpServer session is gone", async () => {
  const s = await start();
  const { stream, endpoint } = await connect(s.url);
  assert.equal(s.mcp.sessions.size, 1);
  stream.close();
  await until(() => s.http.sessionCount === 0, "the session to be forgotten");
  assert.equal(s.mcp.sessions.size, 0);
  assert.equal((await post(endpoint, call(1, "echo", { text: "x" }))).status, 404);
  await s.stop();
});

test("legacy guards: Host/Origin 403, bearer 401, maxSessions 503", async () => {
  const s = await start({ bearerToken: "tok", maxSessions: 1 });
  assert.equal((await send(s.url, { method: "GET", headers: { accept: "text/event-stream", host: "evil.example.com", authorization: "Bearer tok" } })).status, 403);
  assert.equal((await send(s.url, { method: "GET", headers: { accept: "text/event-stream", origin: "http://evil.example.com", authorization: "Bearer tok" } })).status, 403);
  const noToken = await send(s.url, { method: "GET", headers: { accept: "text/event-stream" } });
  assert.equal(noToken.status, 401);
  assert.equal(noToken.headers["www-authenticate"], "Bearer");
  const { stream, endpoint } = await connect(s.url, { authorization: "Bearer tok" });
  assert.equal((await post(endpoint, call(1, "echo", { text: "x" }))).status, 401, "POSTs need the token too");
  assert.equal((await send(s.url, { method: "GET", headers: { accept: "text/event-stream", authorization: "Bearer tok" } })).status, 503);
  stream.close();
  await s.stop();
});

test("an onSession refusing with LIMIT_EXCEEDED gets 503 with its message; another error 500", async () => {
  for (const [error, status] of [
    [new BridgeError("LIMIT_EXCEEDED", "the gateway is full (maxSessions)"), 503],
    [new Error("no backend"), 500],
  ] as const) {
    const legacy = new SseServer({
      onSession: () => {
        throw error;
      },
    });
    const { url } = await legacy.listen(0);
    const r = await send(url, { method: "GET", headers: { accept: "text/event-stream" } });
    assert.equal(r.status, status);
    assert.match(JSON.parse(r.body).error.message, status === 503 ? /^Service Unavailable: the gateway is full \(maxSessions\)$/ : /no backend/);
    assert.equal(legacy.sessionCount, 0);
    await legacy.close();
  }
});

test("close() ends open streams", async () => {
  const s = await start();
  const { stream } = await connect(s.url);
  await s.http.close();
  await stream.ended;
  assert.equal(s.mcp.sessions.size, 0);
  await s.mcp.close();
});
