import assert from "node:assert/strict";
import { request } from "node:http";
import { after, test } from "node:test";
import type { SseEvent } from "../../src/jsonrpc/sse.ts";
import { StreamableHttpServer, type StreamableHttpServerOptions } from "../../src/transport/http-server.ts";
import { agent, call, initSession, messageOf, send, serveFixture } from "./http-test-helpers.ts";
import { until } from "../helpers/wait.ts";

after(() => agent.destroy());

const start = (options: Partial<StreamableHttpServerOptions> = {}) => serveFixture((onSession) => new StreamableHttpServer({ onSession, ...options }));

/** Log lines and results of message events, for comparing sequences. */
function summary(events: SseEvent[]): string[] {
  return events.filter((e) => e.data !== "").map((e) => {
    const m = messageOf(e);
    if (m.method === "notifications/message") return `log:${(m.params as { data: string }).data}`;
    if (m.method !== undefined) return String(m.method);
    const result = m.result as { content: Array<{ text: string }> };
    return `result:${m.id}:${result.content[0].text}`;
  });
}

test("a plain answer is JSON; a handler that notifies first turns the reply into SSE with a priming event (2025-11-25)", async () => {
  const s = await start({ retryMs: 1234 });
  const session = await initSession(s.url, "2025-11-25");
  const json = await send(s.url, { headers: session.post(), body: call(1, "echo", { text: "plain" }) });
  assert.equal(json.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(json.body), { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "plain" }] } });

  const r = await send(s.url, { headers: session.post(), body: { ...call(2, "chatty"), params: { name: "chatty", arguments: {}, _meta: { progressToken: "p" } } } });
  assert.equal(r.status, 200);
  assert.equal(r.headers["content-type"], "text/event-stream");
  await r.sse!.ended;
  const events = r.sse!.events;
  assert.equal(events[0].data, "", "the priming event comes first");
  assert.equal(events[0].retry, 1234);
  assert.ok(events[0].id);
  assert.deepEqual(summary(events), ["log:one", "notifications/progress", "log:two", "result:2:chatted"]);
  const ids = events.map((e) => e.id);
  assert.ok(ids.every((id) => typeof id === "string" && id.length > 0), "every event has an id");
  assert.equal(new Set(ids).size, ids.length, "ids are unique");
  await s.stop();
});

test("on a 2025-03-26 session the SSE reply has no priming event and no retry, but ids", async () => {
  const s = await start();
  const session = await initSession(s.url, "2025-03-26");
  const r = await send(s.url, { headers: session.post(), body: call(1, "chatty") });
  assert.equal(r.headers["content-type"], "text/event-stream");
  await r.sse!.ended;
  assert.ok(r.sse!.events.every((e) => e.data !== "" && e.retry === undefined && e.id !== undefined));
  assert.deepEqual(summary(r.sse!.events), ["log:one", "log:two", "result:1:chatted"]);
  assert.doesNotMatch(r.sse!.raw(), /retry:/);
  await s.stop();
});

test("the GET stream carries list_changed; a second GET gets 409; GET needs Accept: text/event-stream", async () => {
  const s = await start();
  const session = await initSession(s.url);
  assert.equal((await send(s.url, { method: "GET", headers: session.get({ accept: "application/json" }) })).status, 406);
  const get = await send(s.url, { method: "GET", headers: session.get() });
  assert.equal(get.status, 200);
  assert.equal(get.headers["content-type"], "text/event-stream");
  const priming = await get.sse!.next();
  assert.equal(priming.data, "");
  const second = await send(s.url, { method: "GET", headers: session.get() });
  assert.equal(second.status, 409);
  s.mcp.tool({ name: "late", inputSchema: { type: "object" } }, () => ({ content: [] }));
  const note = await get.sse!.next();
  assert.deepEqual(messageOf(note), { jsonrpc: "2.0", method: "notifications/tools/list_changed" });
  assert.ok(note.id);
  get.sse!.close();
  // Once the server has seen the first stream go, a new GET is welcome.
  let again = await send(s.url, { method: "GET", headers: session.get() });
  for (let i = 0; again.status === 409 && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 10));
    again = await send(s.url, { method: "GET", headers: session.get() });
  }
  assert.equal(again.status, 200);
  again.sse!.close();
  await s.stop();
});

test("messages for the GET stream wait in the event store until a GET opens it", async () => {
  const s = await start();
  const session = await initSession(s.url);
  s.mcp.tool({ name: "late", inputSchema: { type: "object" } }, () => ({ content: [] }));
  // The coalesced list_changed goes out on a 0 ms timer set before this one.
  await new Promise((r) => setTimeout(r, 0));
  const get = await send(s.url, { method: "GET", headers: session.get() });
  assert.equal((await get.sse!.next()).data, "");
  assert.equal(messageOf(await get.sse!.next()).method, "notifications/tools/list_changed");
  get.sse!.close();
  await s.stop();
});

test("resumption after a dropped POST stream: exact sequence, nothing lost, nothing repeated", async () => {
  const s = await start();
  const session = await initSession(s.url);
  const post = await send(s.url, { headers: session.post(), body: call(7, "stepper") });
  assert.equal(post.headers["content-type"], "text/event-stream");
  const priming = await post.sse!.next();
  const a = await post.sse!.next();
  assert.deepEqual(summary([a]), ["log:a"]);
  post.sse!.close(); // the connection drops; the request goes on (a disconnect is not a cancel)
  s.gate.release(); // "b" and "c" are sent while no connection carries the stream
  await until(() => s.steps.includes("stepper:c"), "b and c to be sent");

  const resumed = await send(s.url, { method: "GET", headers: session.get({ "last-event-id": a.id! }) });
  assert.equal(resumed.status, 200);
  const replay = [await resumed.sse!.next(), await resumed.sse!.next(), await resumed.sse!.next()];
  assert.equal(replay[0].data, "", "a resumed stream is primed at the position asked for");
  assert.equal(replay[0].id, a.id);
  assert.deepEqual(summary(replay), ["log:b", "log:c"]);
  s.gate.release(); // the result arrives live on the resumed GET, which then ends
  await resumed.sse!.ended;
  const all = [priming, a, ...resumed.sse!.events];
  assert.deepEqual(summary(all), ["log:a", "log:b", "log:c", "result:7:stepped"]);
  const messageIds = all.filter((e) => e.data !== "").map((e) => e.id);
  assert.equal(new Set(messageIds).size, 4, "no event id repeats");
  const stream = a.id!.split(":")[0];
  assert.ok(messageIds.every((id) => id!.startsWith(`${stream}:`)), "all on the POST's stream");

  // The stream is finished; resuming from "b" replays exactly what followed it, then ends.
  const late = await send(s.url, { method: "GET", headers: session.get({ "last-event-id": replay[1].id! }) });
  await late.sse!.ended;
  assert.deepEqual(summary(late.sse!.events), ["log:c", "result:7:stepped"]);
  // The standalone stream is still free: a finished stream's replay did not take it.
  const get = await send(s.url, { method: "GET", headers: session.get() });
  assert.equal(get.status, 200);
  get.sse!.close();
  await s.stop();
});

test("closeRequestStream (SEP-1699): the POST ends after priming, the result comes on the resumed GET", async () => {
  const s = await start();
  const session = await initSession(s.url);
  // The conformance probe sends 2025-03-26 in the header on a 2025-11-25 session.
  const post = await send(s.url, { headers: session.post({ "mcp-protocol-version": "2025-03-26" }), body: call(1, "poll") });
  assert.equal(post.headers["content-type"], "text/event-stream");
  await post.sse!.ended;
  assert.deepEqual(s.closeResults, [true]);
  const [priming] = post.sse!.events;
  assert.equal(post.sse!.events.length, 1);
  assert.equal(priming.data, "");
  assert.equal(priming.retry, 1000);
  const get = await send(s.url, { method: "GET", headers: session.get({ "mcp-protocol-version": "2025-03-26", "last-event-id": priming.id! }) });
  assert.equal(get.status, 200);
  s.gate.release();
  await get.sse!.ended;
  assert.deepEqual(summary(get.sse!.events), ["log:after-close", "result:1:polled"]);

  // Same flow when the result is ready before the client comes back: it is replayed.
  const post2 = await send(s.url, { headers: session.post(), body: call(2, "poll") });
  await post2.sse!.ended;
  s.gate.release();
  await until(() => s.steps.filter((x) => x === "poll:done").length === 2, "the second poll to finish");
  await new Promise((r) => setImmediate(r));
  const get2 = await send(s.url, { method: "GET", headers: session.get({ "last-event-id": post2.sse!.events[0].id! }) });
  await get2.sse!.ended;
  assert.deepEqual(summary(get2.sse!.events), ["log:after-close", "result:2:polled"]);
  await s.stop();
});

test("closeRequestStream is refused on a 2025-03-26 session (no priming, so no way back); the reply stays whole", async () => {
  const s = await start();
  const session = await initSession(s.url, "2025-03-26");
  const post = await send(s.url, { headers: session.post(), body: call(1, "poll") });
  s.gate.release();
  await post.sse!.ended;
  assert.deepEqual(s.closeResults, [false]);
  assert.deepEqual(summary(post.sse!.events), ["log:after-close", "result:1:polled"]);
  await s.stop();
});

test("the event store is bounded: a resume after eviction replays only what is kept", async () => {
  const s = await start({ eventStore: { maxEvents: 2 } });
  const session = await initSession(s.url);
  const post = await send(s.url, { headers: session.post(), body: call(1, "stepper") });
  await post.sse!.next();
  const a = await post.sse!.next();
  post.sse!.close();
  s.gate.release();
  s.gate.release();
  await until(() => s.steps.includes("stepper:done"), "the stepper to finish");
  await new Promise((r) => setImmediate(r));
  const get = await send(s.url, { method: "GET", headers: session.get({ "last-event-id": a.id! }) });
  await get.sse!.ended;
  assert.deepEqual(summary(get.sse!.events), ["log:c", "result:1:stepped"], "b was evicted by the count limit");
  await s.stop();
});

test("a Last-Event-ID naming no stream of the session gets 400", async () => {
  const s = await start();
  const session = await initSession(s.url);
  for (const id of ["garbage", "99:1", "1:x", ""]) {
    const r = await send(s.url, { method: "GET", headers: session.get({ "last-event-id": id }) });
    assert.equal(r.status, 400, JSON.stringify(id));
  }
  await s.stop();
});

test("a server request related to a tool call rides its POST stream; the client's answer gets 202", async () => {
  const s = await start();
  const session = await initSession(s.url, "2025-11-25", { sampling: {} });
  const post = await send(s.url, { headers: session.post(), body: call(1, "sample") });
  assert.equal((await post.sse!.next()).data, "");
  const ask = messageOf(await post.sse!.next());
  assert.equal(ask.method, "sampling/createMessage");
  const answer = await send(s.url, {
    headers: session.post(),
    body: { jsonrpc: "2.0", id: ask.id, result: { role: "assistant", content: { type: "text", text: "yo" }, model: "m1" } },
  });
  assert.equal(answer.status, 202);
  await post.sse!.ended;
  assert.deepEqual(summary(post.sse!.events).slice(1), ["result:1:model=m1"]);
  await s.stop();
});

test("a cancelled request's POST ends with 202 instead of waiting forever", async () => {
  const s = await start();
  const session = await initSession(s.url);
  const pending = send(s.url, { headers: session.post(), body: call("w1", "wait") });
  await until(() => s.steps.includes("wait:start"), "the wait tool to start");
  const cancel = await send(s.url, { headers: session.post(), body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "w1" } } });
  assert.equal(cancel.status, 202);
  const r = await pending;
  assert.equal(r.status, 202);
  assert.equal(r.body, "");
  await s.stop();
});

test("a client that leaves before its JSON answer does not disturb the session", async (t) => {
  // The idle clock is mocked, so only the test's ticks can expire the session (see http-server.test.ts).
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const s = await start({ sessionIdleMs: 100 });
  try {
    const session = await initSession(s.url);
    const req = request(s.url, { method: "POST", headers: session.post() });
    req.on("error", () => undefined);
    req.end(JSON.stringify(call(1, "wait")));
    await until(() => s.steps.includes("wait:start"), "the wait tool to start", { spin: true });
    req.destroy();
    s.gate.release(); // the answer finds no client and is dropped
    const r = await send(s.url, { headers: session.post(), body: call(2, "echo", { text: "still here" }) });
    assert.equal(JSON.parse(r.body).result.content[0].text, "still here");
    const expired = () => {
      t.mock.timers.tick(100);
      return s.http.sessionCount === 0;
    };
    await until(expired, "the session to go idle and expire", { spin: true });
  } finally {
    t.mock.timers.reset();
    await s.stop();
  }
});

test("open SSE responses get keep-alive comments; close() ends them and every session", async () => {
  const s = await start({ keepAliveMs: 20 });
  const session = await initSession(s.url);
  const get = await send(s.url, { method: "GET", headers: session.get() });
  await until(() => get.sse!.raw().includes(": keep-alive\n\n"), "a keep-alive comment");
  await s.http.close();
  await get.sse!.ended;
  assert.equal(s.http.sessionCount, 0);
  assert.equal(s.mcp.sessions.size, 0);
  await s.mcp.close();
});
