/**
 * The stateless era on a connection (stdio, in-memory): a first request of the era makes the
 * session stateless for good; `initialize` first keeps it a 2025 session, where the era's
 * methods do not exist.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { rawStdioChild } from "../e2e/helpers.ts";
import { connect } from "./server-harness.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
};

function build(): McpServer {
  const server = new McpServer({ name: "conn", version: "1" });
  server.tool({ name: "greet", inputSchema: { type: "object" } }, async (_args, ctx) => {
    const a = await ctx.session.elicit({ message: "Name?", requestedSchema: { type: "object", properties: {} } }, { inputKey: "name", relatedRequestId: ctx.requestId });
    return { content: [{ type: "text", text: `Hello, ${String(a.content?.name)}` }] };
  });
  return server;
}

async function code(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof RpcError);
    return err.code;
  }
  assert.fail("expected an error");
}

test("server/discover first: the connection speaks 2026-07-28, with input rounds and per-request _meta", async () => {
  const server = build();
  const h = await connect(server);
  const d = await h.client.request<{ supportedVersions: string[]; resultType: string }>("server/discover", { _meta: META });
  assert.deepEqual([d.supportedVersions, d.resultType], [["2026-07-28"], "complete"]);
  const params = { name: "greet", arguments: {}, _meta: META };
  // Two calls in flight together keep their own _meta and rounds.
  const [a, b] = await Promise.all([h.client.request<Record<string, any>>("tools/call", params), h.client.request<Record<string, any>>("tools/call", params)]);
  assert.deepEqual([a.resultType, b.resultType], ["input_required", "input_required"]);
  const done = await h.client.request<Record<string, any>>("tools/call", { ...params, inputResponses: { name: { action: "accept", content: { name: "Ada" } } }, requestState: a.requestState });
  assert.equal(done.content[0].text, "Hello, Ada");
  assert.equal(await code(h.client.request("tools/call", { name: "greet", arguments: {} })), -32602, "later requests still need _meta");
  for (const removed of ["initialize", "ping", "logging/setLevel"]) assert.equal(await code(h.client.request(removed, {})), -32601, removed);
  await server.close();
});

test("a first tools/call carrying _meta switches the connection too; an unknown version is -32022", async () => {
  const server = build();
  const h = await connect(server);
  const before = h.session.serverCapabilities;
  assert.equal(before, undefined, "nothing declared before the first request");
  const v999 = { ...META, "io.modelcontextprotocol/protocolVersion": "v999" };
  assert.equal(await code(h.client.request("tools/call", { name: "greet", arguments: {}, _meta: v999 })), -32022);
  assert.equal(await code(h.client.request("ping")), -32601);
  assert.equal(await code(h.client.request("resources/subscribe", { uri: "x:/", _meta: META })), -32601, "removed by the era");
  assert.equal(await code(h.client.request("no/such/method", { _meta: META })), -32601);
  // A stateless session declares what the server offers when asked.
  const declared = h.session.serverCapabilities;
  assert.deepEqual(declared?.tools, { listChanged: true });
  assert.equal(h.session.serverCapabilities, declared, "worked out once");
  await server.close();
});

test("a bare server/discover is -32601; initialize first: a 2025 session, where the era's methods are -32601", async () => {
  const server = build();
  const h = await connect(server);
  assert.equal(await code(h.client.request("server/discover", {})), -32601, "without _meta it is not the era's request");
  await h.initialize();
  assert.equal(await code(h.client.request("server/discover", { _meta: META })), -32601);
  assert.equal(await code(h.client.request("subscriptions/listen", { _meta: META, notifications: {} })), -32601);
  assert.deepEqual(await h.client.request("ping"), {});
  await server.close();
});

test("the echo fixture as a stdio child speaks 2026-07-28 when the first line is server/discover", { timeout: 30_000 }, async () => {
  const { send, next, end, kill } = rawStdioChild("echo.ts");
  try {
    send({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: META } });
    const d = await next();
    assert.deepEqual([d.id, d.result.supportedVersions, d.result._meta["io.modelcontextprotocol/serverInfo"].name], [1, ["2026-07-28"], "echo"]);
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "modern stdio" }, _meta: META } });
    const r = await next();
    assert.deepEqual([r.id, r.result.content[0].text, r.result.resultType], [2, "modern stdio", "complete"]);
    send({ jsonrpc: "2.0", id: 3, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } });
    assert.equal((await next()).error.code, -32601);
    assert.equal(await end(), 0);
  } finally {
    await kill();
  }
});
