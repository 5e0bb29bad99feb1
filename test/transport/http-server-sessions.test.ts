/**
 * StreamableHttpServer session limits on a real loopback server: a full server closes the
 * session idle the longest instead of locking new clients out, refuses only when every session
 * has a request in flight, and expires idle sessions after 5 minutes by default.
 */
import assert from "node:assert/strict";
import { after, mock, test } from "node:test";
import { StreamableHttpServer, type StreamableHttpServerOptions } from "../../src/transport/http-server.ts";
import { agent, call, initSession, JSON_POST, send, serveFixture, type Session } from "./http-test-helpers.ts";
import { until } from "../helpers/wait.ts";

after(() => agent.destroy());

const start = (options: Partial<StreamableHttpServerOptions> = {}) =>
  serveFixture((onSession) => new StreamableHttpServer({ onSession, ...options }));

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

/** The HTTP status of an echo call on `session`. */
async function echoStatus(url: URL, session: Session): Promise<number> {
  return (await send(url, { headers: session.post(), body: call(7, "echo", { text: "x" }) })).status;
}

test("a full server closes the session idle the longest to admit a new one, and closes its transport", async () => {
  const s = await start({ maxSessions: 2 });
  const a = await initSession(s.url);
  const b = await initSession(s.url);
  assert.equal(await echoStatus(s.url, a), 200, "a is used after b was created: b is now the idlest");
  const c = await send(s.url, { headers: JSON_POST, body: INIT });
  assert.equal(c.status, 200);
  assert.equal(typeof c.headers["mcp-session-id"], "string");
  assert.deepEqual([s.http.sessionCount, s.mcp.sessions.size], [2, 2], "b's transport and McpServer session are gone");
  assert.equal(await echoStatus(s.url, b), 404);
  assert.equal(await echoStatus(s.url, a), 200);
  await s.stop();
});

test("a GET stream alone does not protect an idle session: it is ended when its session is evicted", async () => {
  const s = await start({ maxSessions: 2 });
  const listening = await initSession(s.url);
  const get = await send(s.url, { method: "GET", headers: listening.get() });
  assert.equal(get.status, 200);
  const other = await initSession(s.url);
  assert.equal((await send(s.url, { headers: JSON_POST, body: INIT })).status, 200);
  await get.sse!.ended;
  assert.equal(await echoStatus(s.url, listening), 404);
  assert.equal(await echoStatus(s.url, other), 200);
  await s.stop();
});

test("sessions with a request in flight are never evicted; 503 only when every session has one", async () => {
  const s = await start({ maxSessions: 2 });
  const busy = await initSession(s.url);
  const idle = await initSession(s.url);
  // busy is the least recently used once its call is sent, but it is waiting for an answer.
  const waiting = send(s.url, { headers: busy.post(), body: call(2, "wait") });
  await until(() => s.steps.includes("wait:start"), "the wait tool to start");
  assert.equal(await echoStatus(s.url, idle), 200);
  const third = await initSession(s.url);
  assert.equal(await echoStatus(s.url, idle), 404, "the idle session went, not the busy one");
  const thirdWaits = send(s.url, { headers: third.post(), body: call(3, "wait") });
  await until(() => s.steps.filter((x) => x === "wait:start").length === 2, "the second wait to start");
  const refused = await send(s.url, { headers: JSON_POST, body: INIT });
  assert.equal(refused.status, 503);
  assert.equal(refused.headers["retry-after"], "5");
  assert.match(JSON.parse(refused.body).error.message, /2 sessions already open, each with a request in flight/);
  s.gate.release();
  s.gate.release();
  assert.deepEqual([(await waiting).status, (await thirdWaits).status], [200, 200]);
  assert.equal((await send(s.url, { headers: JSON_POST, body: INIT })).status, 200, "admitted once a session is idle again");
  assert.equal(s.http.sessionCount, 2);
  await s.stop();
});

test("by default an idle session expires after 5 minutes", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  let s: Awaited<ReturnType<typeof start>> | undefined;
  try {
    s = await start();
    await initSession(s.url);
    mock.timers.tick(5 * 60_000 - 1);
    assert.equal(s.http.sessionCount, 1);
    mock.timers.tick(1);
    assert.equal(s.http.sessionCount, 0);
  } finally {
    mock.timers.reset();
    await s?.stop();
  }
});
