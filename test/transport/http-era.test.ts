/**
 * Both eras on one Streamable HTTP endpoint: 2026-07-28 requests are served statelessly
 * (per-request `_meta`, header checks, era status codes), while `initialize` still opens a
 * 2025 session.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { request } from "node:http";
import { until } from "../helpers/wait.ts";
import { agent, call, initSession, JSON_POST, send } from "./http-test-helpers.ts";
import { bodyOf, eraHeaders, eraMeta, eraPost, serveEra, V } from "./http-era-helpers.ts";

after(() => agent.destroy());

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

test("server/discover is served statelessly beside a 2025 session on the same endpoint", async () => {
  const s = await serveEra();
  const legacy = await initSession(s.url, "2025-11-25");
  const d = await eraPost(s.url, "d1", "server/discover");
  assert.equal(d.status, 200);
  assert.equal(d.headers["mcp-session-id"], undefined);
  const body = await bodyOf(d);
  assert.equal(body.id, "d1");
  assert.deepEqual(body.result.supportedVersions, [V]);
  assert.deepEqual(Object.keys(body.result.capabilities).sort(), ["logging", "prompts", "resources", "tools"]);
  assert.equal(body.result.resultType, "complete");
  assert.deepEqual(body.result._meta[SERVER_INFO], { name: "era-test", version: "2.0.0" });
  assert.deepEqual([body.result.ttlMs, body.result.cacheScope], [1000, "public"]);
  // The 2025 session still works, and stateless requests opened no session.
  const old = await send(s.url, { headers: legacy.post(), body: call(2, "echo", { text: "still here" }) });
  assert.equal(JSON.parse(old.body).result.content[0].text, "still here");
  assert.equal(JSON.parse(old.body).result.resultType, undefined);
  assert.equal(s.http.sessionCount, 1);
  await s.stop();
});

test("lists, reads and calls carry resultType, serverInfo and (lists, reads) cache hints; tool order is registration order", async () => {
  const s = await serveEra();
  const tools = await bodyOf(await eraPost(s.url, 1, "tools/list"));
  assert.deepEqual(tools.result.tools.map((t: { name: string }) => t.name), ["echo", "talk", "greet", "two_steps", "sample", "pair", "hang", "toggle"]);
  assert.deepEqual([tools.result.resultType, tools.result.ttlMs, tools.result.cacheScope], ["complete", 1000, "public"]);
  const read = await bodyOf(await eraPost(s.url, 2, "resources/read", { uri: "test://a" }));
  assert.deepEqual([read.result.contents[0].text, read.result.ttlMs], ["A", 1000]);
  const echoed = await bodyOf(await eraPost(s.url, 3, "tools/call", { name: "echo", arguments: { text: "hi" } }));
  assert.equal(echoed.result.content[0].text, "hi");
  assert.equal(echoed.result.resultType, "complete");
  assert.equal(echoed.result.ttlMs, undefined);
  assert.ok(echoed.result._meta[SERVER_INFO]);
  await s.stop();
});

test("_meta problems: missing fields are 400 -32602, an unknown version 400 -32022; clientInfo may be absent", async () => {
  const s = await serveEra();
  const missing = await eraPost(s.url, 101, "server/discover", { _meta: undefined });
  assert.equal(missing.status, 400);
  assert.deepEqual([JSON.parse(missing.body).id, JSON.parse(missing.body).error.code], [101, -32602]);
  const noCaps = await eraPost(s.url, 102, "server/discover", { _meta: { "io.modelcontextprotocol/protocolVersion": V } });
  assert.deepEqual([noCaps.status, JSON.parse(noCaps.body).error.code], [400, -32602]);
  const v999 = { ...eraMeta(), "io.modelcontextprotocol/protocolVersion": "v999" };
  const unsupported = await eraPost(s.url, 103, "server/discover", { _meta: v999 }, eraHeaders("server/discover", undefined, { "mcp-protocol-version": "v999" }));
  assert.equal(unsupported.status, 400);
  assert.deepEqual(JSON.parse(unsupported.body), { jsonrpc: "2.0", id: 103, error: { code: -32022, message: 'Unsupported protocol version "v999" (supported: 2026-07-28)', data: { supported: [V], requested: "v999" } } });
  const anonymous = { ...eraMeta() };
  delete anonymous["io.modelcontextprotocol/clientInfo"];
  assert.equal((await eraPost(s.url, 104, "server/discover", { _meta: anonymous })).status, 200);
  await s.stop();
});

test("headers must mirror the body: 400 -32020 echoing the id, Base64 Mcp-Name decoded", async () => {
  const s = await serveEra();
  const cases: Array<[string, Record<string, string>, Record<string, unknown>]> = [
    ["version header vs _meta", eraHeaders("server/discover"), { _meta: { ...eraMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } }],
    ["no Mcp-Method", { ...JSON_POST, "mcp-protocol-version": V }, {}],
    ["wrong-case Mcp-Method", eraHeaders("Tools/List"), {}],
    ["no Mcp-Name", eraHeaders("tools/call"), { name: "echo", arguments: {} }],
    ["other Mcp-Name", eraHeaders("tools/call", "talk"), { name: "echo", arguments: {} }],
    ["bad Base64", eraHeaders("tools/call", "=?base64?***?="), { name: "echo", arguments: {} }],
  ];
  for (const [what, headers, params] of cases) {
    const method = headers["mcp-method"] === "Tools/List" ? "tools/list" : (headers["mcp-method"] ?? "server/discover");
    const r = await send(s.url, { headers, body: { jsonrpc: "2.0", id: 7, method, params: { _meta: eraMeta(), ...params } } });
    assert.equal(r.status, 400, what);
    assert.deepEqual([JSON.parse(r.body).id, JSON.parse(r.body).error.code], [7, -32020], what);
  }
  const encoded = `=?base64?${Buffer.from("echo").toString("base64")}?=`;
  const ok = await eraPost(s.url, 8, "tools/call", { name: "echo", arguments: { text: "b64" } }, eraHeaders("tools/call", encoded));
  assert.equal((await bodyOf(ok)).result.content[0].text, "b64");
  // Without any header, a body declaring the era is refused for the missing header, not sent to 2025.
  const bare = await send(s.url, { headers: JSON_POST, body: { jsonrpc: "2.0", id: 9, method: "tools/list", params: { _meta: eraMeta() } } });
  assert.deepEqual([bare.status, JSON.parse(bare.body).error.code], [400, -32020]);
  await s.stop();
});

test("methods the era removed, and unknown ones, are 404 -32601", async () => {
  const s = await serveEra();
  for (const method of ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "no/such"]) {
    const r = await eraPost(s.url, 500, method, { uri: "test://a", level: "info" }, eraHeaders(method));
    assert.equal(r.status, 404, method);
    assert.deepEqual([JSON.parse(r.body).id, JSON.parse(r.body).error.code], [500, -32601], method);
  }
  assert.equal(s.http.sessionCount, 0);
  await s.stop();
});

test("log messages flow only for a request that set _meta logLevel", async () => {
  const s = await serveEra();
  const quiet = await eraPost(s.url, 1, "tools/call", { name: "talk", arguments: {} });
  assert.equal(quiet.sse, undefined, "no log line, so a plain JSON answer");
  assert.equal(JSON.parse(quiet.body).result.content[0].text, "talked");
  const loud = await eraPost(s.url, 2, "tools/call", { name: "talk", arguments: {}, _meta: eraMeta({}, { "io.modelcontextprotocol/logLevel": "info" }) });
  assert.ok(loud.sse);
  await loud.sse.ended;
  const methods = loud.sse.events.map((e) => (JSON.parse(e.data) as { method?: string }).method);
  assert.deepEqual(methods, ["notifications/message", undefined]);
  const above = await eraPost(s.url, 3, "tools/call", { name: "talk", arguments: {}, _meta: eraMeta({}, { "io.modelcontextprotocol/logLevel": "error" }) });
  assert.equal(above.sse, undefined);
  await s.stop();
});

test("an unknown resource is -32602 with data.uri (no longer -32002)", async () => {
  const s = await serveEra();
  const r = await eraPost(s.url, 1, "resources/read", { uri: "test://none" });
  assert.equal(r.status, 400);
  const e = JSON.parse(r.body).error;
  assert.deepEqual([e.code, e.data], [-32602, { uri: "test://none" }]);
  // The 2025 era keeps its code.
  const legacy = await initSession(s.url);
  const old = await send(s.url, { headers: legacy.post(), body: { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "test://none" } } });
  assert.equal(JSON.parse(old.body).error.code, -32002);
  await s.stop();
});

test("tools/call checks Mcp-Param-* headers against the arguments (x-mcp-header): 400 -32020", async () => {
  const s = await serveEra();
  s.mcp.tool({ name: "region", inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } } }, (args) => ({
    content: [{ type: "text", text: String(args.region) }],
  }));
  const params = { name: "region", arguments: { region: "eu" } };
  const ok = await eraPost(s.url, 1, "tools/call", params, eraHeaders("tools/call", "region", { "mcp-param-region": "eu" }));
  assert.equal((await bodyOf(ok)).result.content[0].text, "eu");
  for (const headers of [eraHeaders("tools/call", "region"), eraHeaders("tools/call", "region", { "mcp-param-region": "us" })]) {
    const r = await eraPost(s.url, 2, "tools/call", params, headers);
    assert.deepEqual([r.status, JSON.parse(r.body).id, JSON.parse(r.body).error.code], [400, 2, -32020]);
  }
  await s.stop();
});

test("GET and DELETE with a stateless-era version are 405 (POST only); a notification POST needs no Mcp-Method", async () => {
  const s = await serveEra();
  for (const method of ["GET", "DELETE"]) {
    const r = await send(s.url, { method, headers: { accept: "text/event-stream", "mcp-protocol-version": V } });
    assert.deepEqual([r.status, r.headers.allow], [405, "POST"], method);
  }
  const note = await send(s.url, { headers: { ...JSON_POST, "mcp-protocol-version": V }, body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } } });
  assert.equal(note.status, 202);
  const wrong = await send(s.url, { headers: eraHeaders("notifications/progress"), body: { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } } });
  assert.equal(wrong.status, 400);
  await s.stop();
});

test("closing the connection of a stateless request cancels it", async () => {
  const s = await serveEra();
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {}, _meta: eraMeta() } });
  const req = request(s.url, { method: "POST", headers: eraHeaders("tools/call", "hang") });
  req.on("error", () => undefined);
  req.end(body);
  await until(() => s.events.includes("hang:start"), "the tool to start");
  req.destroy();
  await until(() => s.events.includes("hang:aborted"), "the tool's signal to abort");
  await until(() => s.mcp.sessions.size === 0, "the request's session to end");
  await s.stop();
});
