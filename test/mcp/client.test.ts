import { test } from "node:test";
import assert from "node:assert/strict";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { connectPair } from "./client-helpers.ts";

test("handshake: initialize with our latest version and info, then notifications/initialized without id", async () => {
  const pair = await connectPair({ clientInfo: { name: "agent", version: "9" } });
  const result = await pair.client.connect(pair.transport);
  assert.equal(result.protocolVersion, "2025-11-25");
  assert.equal(pair.client.protocolVersion, "2025-11-25");
  assert.equal(pair.client.serverInfo?.name, "fake");
  assert.equal(pair.client.instructions, "be nice");
  assert.deepEqual(pair.initParams(), {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "agent", version: "9" },
  });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(pair.seen.map((s) => [s.method, s.isNotification]), [
    ["initialize", false],
    ["notifications/initialized", true],
  ]);
  await pair.client.close();
});

for (const version of ["2025-06-18", "2025-03-26", "2024-11-05"]) {
  test(`negotiates down to ${version} when the server answers it`, async () => {
    const pair = await connectPair({}, { version });
    await pair.client.connect(pair.transport);
    assert.equal(pair.client.protocolVersion, version);
    await pair.client.close();
  });
}

test("a version the client does not speak fails with UNSUPPORTED_VERSION and closes", async () => {
  const pair = await connectPair({}, { version: "2026-07-28" });
  let closed = false;
  pair.server.onclose = () => (closed = true);
  await assert.rejects(pair.client.connect(pair.transport), { name: "BridgeError", code: "UNSUPPORTED_VERSION", message: /2026-07-28/ });
  await new Promise((r) => setImmediate(r));
  assert.equal(closed, true);
});

test("a malformed initialize result fails with INVALID_RESULT", async () => {
  const pair = await connectPair({}, { initResult: { protocolVersion: "2025-11-25" } });
  await assert.rejects(pair.client.connect(pair.transport), { name: "BridgeError", code: "INVALID_RESULT" });
});

test("notifications that arrive before the initialize response are tolerated and delivered", async () => {
  const pair = await connectPair({}, {
    beforeInit: async (server) => {
      await server.notify("notifications/tools/list_changed");
      await server.notify("notifications/message", { level: "info", data: "early" });
    },
  });
  let changed = 0;
  const logs: unknown[] = [];
  pair.client.on("toolsListChanged", () => changed++);
  pair.client.on("log", (l) => logs.push(l.data));
  await pair.client.connect(pair.transport);
  assert.equal(changed, 1);
  assert.deepEqual(logs, ["early"]);
  await pair.client.close();
});

test("a server that never answers initialize times out", async () => {
  const pair = await connectPair({ connectTimeoutMs: 30 }, { neverAnswerInit: true });
  await assert.rejects(pair.client.connect(pair.transport), { name: "BridgeError", code: "TIMEOUT" });
});

test("requests before connect fail with NOT_CONNECTED", async () => {
  const client = new McpClient();
  await assert.rejects(client.listTools(), { name: "BridgeError", code: "NOT_CONNECTED" });
  // A rejected promise, never a synchronous throw, on the hot path too.
  const pending = client.callTool("x");
  await assert.rejects(pending, { name: "BridgeError", code: "NOT_CONNECTED" });
});

test("listTools follows nextCursor and passes cursors back untouched", async () => {
  const pair = await connectPair();
  const cursors: unknown[] = [];
  pair.server.setRequestHandler("tools/list", (p) => {
    const cursor = (p as { cursor?: string }).cursor;
    cursors.push(cursor);
    const page = cursor === undefined ? 0 : Number(cursor.split(":")[1]);
    const tools = [{ name: `t${page}`, inputSchema: { type: "object" } }];
    return page < 2 ? { tools, nextCursor: `opaque:${page + 1}:%$` } : { tools };
  });
  await pair.client.connect(pair.transport);
  const tools = await pair.client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ["t0", "t1", "t2"]);
  assert.deepEqual(cursors, [undefined, "opaque:1:%$", "opaque:2:%$"]);
  await pair.client.close();
});

test("listTools stops at the page cap and on a repeated cursor", async () => {
  const pair = await connectPair({ pageLimits: { maxPages: 3 } });
  let n = 0;
  pair.server.setRequestHandler("tools/list", () => ({ tools: [], nextCursor: `c${n++}` }));
  pair.server.setRequestHandler("prompts/list", () => ({ prompts: [], nextCursor: "same" }));
  await pair.client.connect(pair.transport);
  await assert.rejects(pair.client.listTools(), { name: "BridgeError", code: "LIMIT_EXCEEDED" });
  await assert.rejects(pair.client.listPrompts(), { name: "BridgeError", message: /repeated a cursor/ });
  await pair.client.close();
});

test("callTool validates structuredContent against the listed outputSchema", async () => {
  const pair = await connectPair();
  const outputSchema = { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] };
  pair.server.setRequestHandler("tools/list", () => ({ tools: [{ name: "add", inputSchema: { type: "object" }, outputSchema }] }));
  let reply: unknown;
  pair.server.setRequestHandler("tools/call", () => reply);
  await pair.client.connect(pair.transport);
  await pair.client.listTools();

  reply = { content: [{ type: "text", text: "3" }], structuredContent: { sum: 3 } };
  assert.deepEqual((await pair.client.callTool("add", { a: 1, b: 2 })).structuredContent, { sum: 3 });

  reply = { content: [], structuredContent: { sum: "three" } };
  await assert.rejects(pair.client.callTool("add"), { name: "BridgeError", code: "OUTPUT_SCHEMA_MISMATCH", message: /\/sum/ });

  reply = { content: [{ type: "text", text: "no structure" }] };
  await assert.rejects(pair.client.callTool("add"), { name: "BridgeError", code: "OUTPUT_SCHEMA_MISMATCH" });

  reply = { content: [{ type: "text", text: "failed" }], isError: true };
  assert.equal((await pair.client.callTool("add")).isError, true, "error results are exempt");

  reply = { nothing: true };
  await assert.rejects(pair.client.callTool("add"), { name: "BridgeError", code: "INVALID_RESULT" });

  const lenient = await connectPair({ validateStructuredContent: false });
  lenient.server.setRequestHandler("tools/list", () => ({ tools: [{ name: "add", inputSchema: { type: "object" }, outputSchema }] }));
  lenient.server.setRequestHandler("tools/call", () => ({ content: [], structuredContent: { sum: "x" } }));
  await lenient.client.connect(lenient.transport);
  await lenient.client.listTools();
  assert.deepEqual((await lenient.client.callTool("add")).structuredContent, { sum: "x" });
  await lenient.client.close();
  await pair.client.close();
});

test("callTool passes arguments, reports progress and surfaces protocol errors as RpcError", async () => {
  const pair = await connectPair();
  pair.server.setRequestHandler("tools/call", async (p, ctx) => {
    const { name, arguments: args } = p as { name: string; arguments: Record<string, unknown> };
    if (name === "missing") throw new RpcError(-32602, "Unknown tool: missing");
    await ctx.sendProgress(1, 2);
    await ctx.sendProgress(2, 2);
    return { content: [{ type: "text", text: JSON.stringify(args) }] };
  });
  await pair.client.connect(pair.transport);
  const progress: number[] = [];
  const r = await pair.client.callTool("echo", { x: [1, "é"] }, { onProgress: (p) => progress.push(p.progress) });
  assert.deepEqual(r.content, [{ type: "text", text: '{"x":[1,"é"]}' }]);
  assert.deepEqual(progress, [1, 2]);
  await assert.rejects(pair.client.callTool("missing"), { name: "RpcError", code: -32602 });
  await pair.client.close();
});

test("capabilities are declared only for handlers that are set; others answer -32601", async () => {
  const bare = await connectPair();
  await bare.client.connect(bare.transport);
  await assert.rejects(bare.server.request("roots/list"), { name: "RpcError", code: -32601 });
  await assert.rejects(bare.server.request("sampling/createMessage", { messages: [], maxTokens: 1 }), { name: "RpcError", code: -32601 });
  assert.deepEqual(await bare.server.request("ping"), {});
  await bare.client.close();

  const full = await connectPair({
    rootsListChanged: true,
    handlers: {
      roots: () => [{ uri: "file:///work", name: "work" }],
      sampling: (p) => ({ role: "assistant", content: { type: "text", text: `max ${p.maxTokens}` }, model: "script" }),
      elicitation: () => ({ action: "decline" }),
    },
    elicitationModes: { form: true, url: false },
  });
  await full.client.connect(full.transport);
  assert.deepEqual((full.initParams()!.capabilities), { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } });
  assert.deepEqual(await full.server.request("roots/list"), { roots: [{ uri: "file:///work", name: "work" }] });
  const sampled = (await full.server.request("sampling/createMessage", { messages: [], maxTokens: 7 })) as { content: { text: string } };
  assert.equal(sampled.content.text, "max 7");
  assert.deepEqual(await full.server.request("elicitation/create", { message: "?", requestedSchema: { type: "object", properties: {} } }), { action: "decline" });
  await full.client.close();
});

test("resource, prompt, completion, logging and ping requests reach the server with the right params", async () => {
  const pair = await connectPair();
  const calls: Array<[string, unknown]> = [];
  for (const m of ["resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/get", "completion/complete", "logging/setLevel", "ping"]) {
    pair.server.setRequestHandler(m, (p) => {
      calls.push([m, p]);
      if (m === "resources/read") return { contents: [{ uri: "a://b", text: "hi" }] };
      if (m === "prompts/get") return { messages: [] };
      if (m === "completion/complete") return { completion: { values: ["x"] } };
      return {};
    });
  }
  pair.server.setRequestHandler("resources/list", () => ({ resources: [{ uri: "a://b", name: "b" }] }));
  pair.server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [{ uriTemplate: "a://{x}", name: "x" }] }));
  await pair.client.connect(pair.transport);
  const updates: string[] = [];
  pair.client.on("resourceUpdated", (u) => updates.push(u.uri));
  assert.equal((await pair.client.listResources())[0]!.uri, "a://b");
  assert.equal((await pair.client.listResourceTemplates())[0]!.uriTemplate, "a://{x}");
  assert.deepEqual((await pair.client.readResource("a://b")).contents, [{ uri: "a://b", text: "hi" }]);
  await pair.client.subscribe("a://b");
  await pair.server.notify("notifications/resources/updated", { uri: "a://b" });
  await pair.client.unsubscribe("a://b");
  await pair.client.getPrompt("greet", { name: "Ada" });
  await pair.client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "A" } });
  await pair.client.setLoggingLevel("warning");
  await pair.client.ping();
  assert.deepEqual(calls, [
    ["resources/read", { uri: "a://b" }],
    ["resources/subscribe", { uri: "a://b" }],
    ["resources/unsubscribe", { uri: "a://b" }],
    ["prompts/get", { name: "greet", arguments: { name: "Ada" } }],
    ["completion/complete", { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "A" } }],
    ["logging/setLevel", { level: "warning" }],
    ["ping", undefined],
  ]);
  assert.deepEqual(updates, ["a://b"]);
  await pair.client.close();
});

test("close rejects calls in flight with CLOSED and emits close", async () => {
  const pair = await connectPair();
  pair.server.setRequestHandler("tools/call", () => new Promise(() => {}));
  await pair.client.connect(pair.transport);
  let closeEvents = 0;
  pair.client.on("close", () => closeEvents++);
  const call = pair.client.callTool("hang");
  await new Promise((r) => setImmediate(r));
  await pair.client.close();
  await assert.rejects(call, { name: "BridgeError", code: "CLOSED" });
  assert.equal(closeEvents, 1);
});
