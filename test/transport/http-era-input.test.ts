/**
 * Asking the client, one API in both eras: the same tool handler sends `elicitation/create`
 * on a 2025 session and answers `input_required` on the stateless wire, where the retry
 * carries `inputResponses` and the sealed `requestState`.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { agent, call, initSession, messageOf, send } from "./http-test-helpers.ts";
import { bodyOf, eraMeta, eraPost, serveEra } from "./http-era-helpers.ts";

after(() => agent.destroy());

const ELICIT = { elicitation: {} };
const accept = (content: Record<string, unknown>) => ({ action: "accept", content });

test("the same handler asks by elicitation/create on 2025 and by an input round trip on 2026-07-28", async () => {
  const s = await serveEra();
  // 2025: a server-to-client request on the call's stream, answered by a POST.
  const session = await initSession(s.url, "2025-11-25", ELICIT);
  const post = await send(s.url, { headers: session.post(), body: call(1, "greet") });
  assert.equal((await post.sse!.next()).data, "");
  const ask = messageOf(await post.sse!.next());
  assert.equal(ask.method, "elicitation/create");
  await send(s.url, { headers: session.post(), body: { jsonrpc: "2.0", id: ask.id, result: accept({ name: "Ada" }) } });
  assert.equal((await bodyOf(post)).result.content[0].text, "Hello, Ada");
  // 2026-07-28: input_required, then the retry with a new id completes.
  const params = { name: "greet", arguments: {}, _meta: eraMeta(ELICIT) };
  const r1 = (await bodyOf(await eraPost(s.url, 2, "tools/call", params))).result;
  assert.equal(r1.resultType, "input_required");
  assert.deepEqual(Object.keys(r1.inputRequests), ["name"]);
  assert.equal(r1.inputRequests.name.method, "elicitation/create");
  assert.equal(typeof r1.requestState, "string");
  const r2 = await bodyOf(await eraPost(s.url, 3, "tools/call", { ...params, inputResponses: { name: accept({ name: "Bo" }), extra: 1 }, requestState: r1.requestState }));
  assert.deepEqual([r2.id, r2.result.resultType, r2.result.content[0].text], [3, "complete", "Hello, Bo"]);
  await s.stop();
});

test("answers accumulate across rounds in the sealed state; a missing answer is asked again", async () => {
  const s = await serveEra();
  const params = { name: "two_steps", arguments: {}, _meta: eraMeta(ELICIT) };
  const r1 = (await bodyOf(await eraPost(s.url, 1, "tools/call", params))).result;
  const [k1] = Object.keys(r1.inputRequests) as [string];
  const again = (await bodyOf(await eraPost(s.url, 2, "tools/call", { ...params, inputResponses: { wrong: accept({}) }, requestState: r1.requestState }))).result;
  assert.deepEqual([again.resultType, Object.keys(again.inputRequests)], ["input_required", [k1]]);
  const r2 = (await bodyOf(await eraPost(s.url, 3, "tools/call", { ...params, inputResponses: { [k1]: accept({ v: "a" }) }, requestState: r1.requestState }))).result;
  const [k2] = Object.keys(r2.inputRequests) as [string];
  assert.notEqual(k2, k1);
  // Only the new answer is sent; the first comes back from the state.
  const r3 = (await bodyOf(await eraPost(s.url, 4, "tools/call", { ...params, inputResponses: { [k2]: accept({ v: "b" }) }, requestState: r2.requestState }))).result;
  assert.equal(r3.content[0].text, "a+b");
  await s.stop();
});

test("a tampered, foreign or misapplied requestState and a malformed answer are 400 -32602", async () => {
  const s = await serveEra();
  const other = await serveEra();
  const params = { name: "greet", arguments: {}, _meta: eraMeta(ELICIT) };
  const { requestState } = (await bodyOf(await eraPost(s.url, 1, "tools/call", params))).result as { requestState: string };
  const foreign = (await bodyOf(await eraPost(other.url, 1, "tools/call", params))).result.requestState as string;
  const tampered = requestState.slice(0, -2) + (requestState.endsWith("AA") ? "BB" : "AA");
  const answers = { name: accept({ name: "x" }) };
  for (const [what, state, p] of [
    ["tampered", tampered, params],
    ["foreign", foreign, params],
    ["other arguments", requestState, { ...params, arguments: { text: "changed" } }],
  ] as const) {
    const r = await eraPost(s.url, 2, "tools/call", { ...p, inputResponses: answers, requestState: state });
    assert.equal(r.status, 400, what);
    assert.deepEqual([JSON.parse(r.body).id, JSON.parse(r.body).error.code], [2, -32602], what);
  }
  const malformed = await eraPost(s.url, 3, "tools/call", { ...params, inputResponses: { name: { action: "maybe" } }, requestState });
  assert.deepEqual([malformed.status, JSON.parse(malformed.body).error.data], [400, { key: "name" }]);
  await Promise.all([s.stop(), other.stop()]);
});

test("asking for a capability the request did not declare is 400 -32021 naming it", async () => {
  const s = await serveEra();
  const r = await eraPost(s.url, 1, "tools/call", { name: "sample", arguments: {} });
  assert.equal(r.status, 400);
  const e = JSON.parse(r.body).error;
  assert.deepEqual([e.code, e.data], [-32021, { requiredCapabilities: { sampling: {} } }]);
  await s.stop();
});

test("prompts/get takes input rounds too", async () => {
  const s = await serveEra();
  const params = { name: "ask_prompt", _meta: eraMeta(ELICIT) };
  const r1 = (await bodyOf(await eraPost(s.url, 1, "prompts/get", params))).result;
  assert.deepEqual(Object.keys(r1.inputRequests), ["topic"]);
  const r2 = (await bodyOf(await eraPost(s.url, 2, "prompts/get", { ...params, inputResponses: { topic: accept({ topic: "tea" }) }, requestState: r1.requestState }))).result;
  assert.equal(r2.messages[0].content.text, "About tea");
  await s.stop();
});

test("requestInputs: several inputs at once, as requests on 2025 and as one input round on 2026-07-28", async () => {
  const s = await serveEra();
  const caps = { elicitation: {}, roots: {} };
  const session = await initSession(s.url, "2025-11-25", caps);
  const post = await send(s.url, { headers: session.post(), body: call(1, "pair") });
  await post.sse!.next(); // priming event
  const asks = [messageOf(await post.sse!.next()), messageOf(await post.sse!.next())];
  assert.deepEqual(asks.map((a) => a.method).sort(), ["elicitation/create", "roots/list"]);
  for (const a of asks) {
    const result = a.method === "roots/list" ? { roots: [{ uri: "file:///w" }] } : accept({ name: "Ada" });
    await send(s.url, { headers: session.post(), body: { jsonrpc: "2.0", id: a.id, result } });
  }
  assert.equal((await bodyOf(post)).result.content[0].text, "Ada in file:///w");
  const params = { name: "pair", arguments: {}, _meta: eraMeta(caps) };
  const r1 = (await bodyOf(await eraPost(s.url, 2, "tools/call", params))).result;
  assert.deepEqual(Object.keys(r1.inputRequests).sort(), ["where", "who"]);
  const inputResponses = { who: accept({ name: "Bo" }), where: { roots: [{ uri: "file:///x" }] } };
  const r2 = (await bodyOf(await eraPost(s.url, 3, "tools/call", { ...params, inputResponses, requestState: r1.requestState }))).result;
  assert.equal(r2.content[0].text, "Bo in file:///x");
  // Without the roots capability the request is refused rather than asked half.
  const partial = await eraPost(s.url, 4, "tools/call", { ...params, _meta: eraMeta(ELICIT) });
  assert.deepEqual(JSON.parse(partial.body).error.data, { requiredCapabilities: { roots: {} } });
  await s.stop();
});
