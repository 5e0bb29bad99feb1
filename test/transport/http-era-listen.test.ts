/**
 * `subscriptions/listen`: a long-lived POST stream that opens with an acknowledgement and then
 * carries only the change notifications the client opted in to, each tagged with the
 * subscription id (the listen request's id).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { until } from "../helpers/wait.ts";
import { agent, messageOf } from "./http-test-helpers.ts";
import { eraPost, serveEra } from "./http-era-helpers.ts";

after(() => agent.destroy());

const SUB = "io.modelcontextprotocol/subscriptionId";

test("the listen stream acknowledges first, then carries tagged list_changed and resources/updated", async () => {
  const s = await serveEra();
  const listen = await eraPost(s.url, "L1", "subscriptions/listen", { notifications: { toolsListChanged: true, resourceSubscriptions: ["test://a"] } });
  assert.equal(listen.status, 200);
  const ack = messageOf(await listen.sse!.next());
  assert.deepEqual(ack, {
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { notifications: { toolsListChanged: true, resourceSubscriptions: ["test://a"] }, _meta: { [SUB]: "L1" } },
  });
  await eraPost(s.url, 1, "tools/call", { name: "toggle", arguments: {} });
  assert.deepEqual(messageOf(await listen.sse!.next()), { jsonrpc: "2.0", method: "notifications/tools/list_changed", params: { _meta: { [SUB]: "L1" } } });
  await s.mcp.notifyResourceUpdated("test://a");
  assert.deepEqual(messageOf(await listen.sse!.next()).params, { uri: "test://a", _meta: { [SUB]: "L1" } });
  listen.sse!.close();
  await until(() => s.mcp.sessions.size === 0, "the listening session to end with its stream");
  await s.stop();
});

test("a stream sees only the notification types it asked for", async () => {
  const s = await serveEra();
  const prompts = await eraPost(s.url, "P", "subscriptions/listen", { notifications: { promptsListChanged: true } });
  const tools = await eraPost(s.url, "T", "subscriptions/listen", { notifications: { toolsListChanged: true } });
  const granted = async (r: typeof prompts) => (messageOf(await r.sse!.next()).params as { notifications: unknown }).notifications;
  assert.deepEqual(await granted(prompts), { promptsListChanged: true });
  assert.deepEqual(await granted(tools), { toolsListChanged: true });
  await eraPost(s.url, 1, "tools/call", { name: "toggle", arguments: {} });
  assert.equal(messageOf(await tools.sse!.next()).method, "notifications/tools/list_changed");
  // A later prompt change is the next thing the prompts stream gets: the tool change never reached it.
  s.mcp.prompt({ name: "late" }, () => ({ messages: [] }));
  assert.equal(messageOf(await prompts.sse!.next()).method, "notifications/prompts/list_changed");
  assert.equal(prompts.sse!.events.length, 2);
  prompts.sse!.close();
  tools.sse!.close();
  await s.stop();
});

test("a malformed filter is 400 -32602; closing the server ends open listen streams", async () => {
  const s = await serveEra();
  const bad = await eraPost(s.url, 1, "subscriptions/listen", { notifications: { resourceSubscriptions: "test://a" } });
  assert.deepEqual([bad.status, JSON.parse(bad.body).error.code], [400, -32602]);
  const none = await eraPost(s.url, 2, "subscriptions/listen", {});
  assert.equal(none.status, 400);
  const open = await eraPost(s.url, 3, "subscriptions/listen", { notifications: { toolsListChanged: true } });
  await open.sse!.next();
  await s.stop();
  await open.sse!.ended;
});
