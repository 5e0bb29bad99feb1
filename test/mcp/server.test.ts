import { test } from "node:test";
import assert from "node:assert/strict";
import { McpServer } from "../../src/mcp/server.ts";
import type { Tool } from "../../src/mcp/types.ts";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { connect, connectRaw, rejectsWithCode } from "./server-harness.ts";

const INFO = { name: "unit", version: "1.2.3" };
const ok = () => ({ content: [{ type: "text" as const, text: "ok" }] });
const objectSchema = { type: "object" };

function serverWithOneTool(options = {}): McpServer {
  const server = new McpServer(INFO, options);
  server.tool({ name: "t", inputSchema: objectSchema }, ok);
  return server;
}

test("initialize echoes every supported version and answers an unknown one with the latest", async () => {
  for (const version of [...SUPPORTED_PROTOCOL_VERSIONS, "1999-01-01", "2099-12-31"]) {
    const h = await connect(serverWithOneTool({ instructions: "be nice" }));
    const r = await h.initialize({ version });
    const expected = (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version) ? version : LATEST_PROTOCOL_VERSION;
    assert.equal(r.protocolVersion, expected, `requested ${version}`);
    assert.deepEqual(r.serverInfo, INFO);
    assert.equal(r.instructions, "be nice");
    assert.equal(h.session.protocolVersion, expected);
    assert.deepEqual(h.session.clientInfo, { name: "harness", version: "0.0.1" });
    await h.client.close();
  }
});

test("supportedVersions restricts negotiation and the transport is told the version", async () => {
  const server = new McpServer(INFO, { supportedVersions: ["2025-03-26"] });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const told: string[] = [];
  const spied: Transport = a;
  spied.setProtocolVersion = (v: string) => told.push(v);
  await server.connect(a);
  const client = new JsonRpcPeer(b);
  await client.start();
  const r = await client.request<{ protocolVersion: string }>("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "c", version: "1" },
  });
  assert.equal(r.protocolVersion, "2025-03-26");
  assert.deepEqual(told, ["2025-03-26"]);
  await server.close();
});

test("capabilities follow what is registered at initialize time", async () => {
  const empty = await connect(new McpServer(INFO));
  assert.deepEqual((await empty.initialize()).capabilities, { logging: {} });

  const full = new McpServer(INFO, { capabilities: { experimental: { "x.y": {} } } });
  full.tool({ name: "t", inputSchema: objectSchema }, ok);
  full.resource({ uri: "a://b", name: "b" }, (uri) => ({ contents: [{ uri, text: "" }] }));
  full.prompt({ name: "p" }, () => ({ messages: [] }));
  full.completion(() => ({ completion: { values: [] } }));
  const h = await connect(full);
  assert.deepEqual((await h.initialize()).capabilities, {
    logging: {},
    completions: {},
    prompts: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    tools: { listChanged: true },
    experimental: { "x.y": {} },
  });

  const templatesOnly = new McpServer(INFO, { capabilities: { tools: { listChanged: true } } });
  templatesOnly.resourceTemplate({ uriTemplate: "a://{x}", name: "x" }, (uri) => ({ contents: [{ uri, text: "" }] }));
  const t = await connect(templatesOnly);
  const caps = (await t.initialize()).capabilities;
  assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
  assert.deepEqual(caps.tools, { listChanged: true }, "the option declares tools with none registered");
});

test("a second initialize is refused with -32600", async () => {
  const h = await connect(serverWithOneTool());
  await h.initialize();
  await rejectsWithCode(h.initialize({ notify: false }), -32600);
  assert.equal(h.session.protocolVersion, LATEST_PROTOCOL_VERSION);
});

test("initialize with malformed capabilities is -32602 and leaves the session uninitialized", async () => {
  const h = await connect(serverWithOneTool());
  await rejectsWithCode(h.client.request("initialize", { protocolVersion: "2025-06-18", capabilities: "all" }), -32602);
  assert.equal(h.session.protocolVersion, undefined);
  await h.initialize();
});

test("initialize without a usable protocolVersion is answered with our latest version", async () => {
  const h = await connect(serverWithOneTool());
  const r = await h.client.request<{ protocolVersion: string }>("initialize", { capabilities: {}, clientInfo: INFO });
  assert.equal(r.protocolVersion, "2025-11-25");
});

test("requests before initialize are refused except ping; after the answer they are served before initialized", async () => {
  const h = await connect(serverWithOneTool());
  assert.deepEqual(await h.client.request("ping"), {});
  for (const method of ["tools/list", "tools/call", "resources/list", "prompts/get", "logging/setLevel", "completion/complete"]) {
    const e = await rejectsWithCode(h.client.request(method, {}), -32600);
    assert.match(e.message, /server not initialized/);
  }
  await h.initialize({ notify: false });
  assert.equal(h.session.initialized, false);
  const list = await h.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(list.tools.map((t) => t.name), ["t"]);
  let seen = 0;
  h.session.oninitialized = () => seen++;
  await h.client.notify("notifications/initialized");
  await h.settle();
  assert.equal(h.session.initialized, true);
  assert.equal(seen, 1);
});

test("unknown methods get -32601 and ping answers {}", async () => {
  const h = await connect(serverWithOneTool());
  await h.initialize();
  assert.deepEqual(await h.client.request("ping"), {});
  await rejectsWithCode(h.client.request("tools/explode"), -32601);
  await rejectsWithCode(h.client.request("server/discover"), -32601);
});

test("batches are processed only when 2025-03-26 was negotiated", async () => {
  const batch = [
    { jsonrpc: "2.0", id: 10, method: "ping" },
    { jsonrpc: "2.0", id: 11, method: "tools/list" },
  ];
  for (const version of ["2025-03-26", "2025-06-18", "2024-11-05", "2025-11-25"]) {
    const raw = await connectRaw(serverWithOneTool());
    await raw.send(batch);
    const before = (await raw.next()) as { id: unknown; error: { code: number } };
    assert.equal(before.id, null);
    assert.equal(before.error.code, -32600, "no batches before initialize");
    await raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: INFO } });
    await raw.next();
    await raw.send(batch);
    const reply = await raw.next();
    if (version === "2025-03-26") {
      assert.ok(Array.isArray(reply), "a batch gets an array back");
      const byId = new Map((reply as Array<{ id: number; result: unknown }>).map((r) => [r.id, r.result]));
      assert.deepEqual(byId.get(10), {});
      assert.equal((byId.get(11) as { tools: Tool[] }).tools[0].name, "t");
    } else {
      assert.equal((reply as { error: { code: number } }).error.code, -32600, `batch refused under ${version}`);
    }
  }
});

test("the server never answers a notification", async () => {
  const raw = await connectRaw(serverWithOneTool());
  await raw.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: INFO } });
  await raw.next();
  await raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await raw.send({ jsonrpc: "2.0", method: "tools/list" });
  await raw.send({ jsonrpc: "2.0", method: "no/such/notification" });
  await raw.send({ jsonrpc: "2.0", id: "last", method: "ping" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: "last", result: {} });
  assert.equal(raw.received.length, 0);
});

test("tools/list returns each definition exactly as registered, schemas untouched", async () => {
  const server = new McpServer(INFO);
  const def: Tool = {
    name: "exact",
    title: "Exact",
    description: "pass-through",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { id: { type: "string", pattern: "^[a-z]+$" } },
      properties: { id: { $ref: "#/$defs/id" }, n: { type: "integer", default: 3 } },
      required: ["id"],
      additionalProperties: false,
      "x-vendor": { keep: true },
    },
    outputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      definitions: { v: { type: "number" } },
      properties: { v: { $ref: "#/definitions/v" } },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
    _meta: { "example.com/k": 1 },
  };
  const before = JSON.stringify(def);
  server.tool(def, ok);
  const h = await connect(server);
  await h.initialize();
  const r = await h.client.request<{ tools: Tool[] }>("tools/list");
  assert.equal(JSON.stringify(r.tools[0]), before);
  assert.equal(JSON.stringify(def), before, "registration does not mutate the definition");
});

test("lists paginate 250 tools by 100 with opaque cursors", async () => {
  const server = new McpServer(INFO);
  for (let i = 0; i < 250; i++) server.tool({ name: `tool_${i}`, inputSchema: objectSchema }, ok);
  const h = await connect(server);
  await h.initialize();
  const names: string[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const page: { tools: Tool[]; nextCursor?: string } = await h.client.request("tools/list", cursor === undefined ? {} : { cursor });
    sizes.push(page.tools.length);
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
    if (cursor !== undefined) assert.doesNotMatch(cursor, /^\d+$/, "the cursor is not a plain number");
  } while (cursor !== undefined);
  assert.deepEqual(sizes, [100, 100, 50]);
  assert.deepEqual(names, Array.from({ length: 250 }, (_, i) => `tool_${i}`));
});

test("invalid cursors get -32602, including a cursor of another list", async () => {
  const server = new McpServer(INFO, { pageSize: 1 });
  server.tool({ name: "a", inputSchema: objectSchema }, ok);
  server.tool({ name: "b", inputSchema: objectSchema }, ok);
  server.prompt({ name: "p1" }, () => ({ messages: [] }));
  server.prompt({ name: "p2" }, () => ({ messages: [] }));
  const h = await connect(server);
  await h.initialize();
  const first = await h.client.request<{ prompts: unknown[]; nextCursor: string }>("prompts/list");
  assert.equal(first.prompts.length, 1);
  const second = await h.client.request<{ prompts: Array<{ name: string }>; nextCursor?: string }>("prompts/list", { cursor: first.nextCursor });
  assert.deepEqual(second.prompts.map((p) => p.name), ["p2"]);
  assert.equal(second.nextCursor, undefined);
  for (const cursor of ["garbage!", "1", "", 5, "AAAA", first.nextCursor]) {
    await rejectsWithCode(h.client.request("tools/list", { cursor }), -32602);
  }
});

test("resources/list and resources/templates/list return their definitions", async () => {
  const server = new McpServer(INFO);
  const res = { uri: "a://one", name: "one", mimeType: "text/plain" };
  const tpl = { uriTemplate: "a://items/{id}", name: "items" };
  server.resource(res, (uri) => ({ contents: [{ uri, text: "1" }] }));
  server.resourceTemplate(tpl, (uri) => ({ contents: [{ uri, text: "2" }] }));
  const h = await connect(server);
  await h.initialize();
  assert.deepEqual(await h.client.request("resources/list"), { resources: [res] });
  assert.deepEqual(await h.client.request("resources/templates/list"), { resourceTemplates: [tpl] });
});

test("registering after initialize sends one list_changed per list per tick, only to initialized sessions", async () => {
  const server = serverWithOneTool();
  server.prompt({ name: "p" }, () => ({ messages: [] }));
  const ready = await connect(server);
  await ready.initialize();
  const fresh = await connect(server);

  const regs = [1, 2, 3].map((i) => server.tool({ name: `later_${i}`, inputSchema: objectSchema }, ok));
  await ready.nextNote("notifications/tools/list_changed");
  await ready.settle();
  await fresh.settle();
  assert.equal(ready.notes.filter((n) => n.method === "notifications/tools/list_changed").length, 1);
  assert.equal(fresh.notes.length, 0, "an uninitialized session is not told");
  const list = await ready.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(list.tools.map((t) => t.name), ["t", "later_1", "later_2", "later_3"]);

  regs[1].remove();
  regs[1].remove();
  await ready.nextNote("notifications/tools/list_changed");
  const after = await ready.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(after.tools.map((t) => t.name), ["t", "later_1", "later_3"]);

  server.prompt({ name: "p2" }, () => ({ messages: [] }));
  await ready.nextNote("notifications/prompts/list_changed");
  await ready.settle();
  assert.equal(ready.notes.filter((n) => n.method === "notifications/resources/list_changed").length, 0,
    "resources were not declared at initialize, so no resources notification");
});

test("a registration a caller got wrong is a TypeError at once, not a nameless tool", async () => {
  const server = new McpServer(INFO);
  const loose = server as unknown as Record<string, (...args: unknown[]) => unknown>;
  const cases: [string, unknown[], RegExp][] = [
    ["tool", ["echo", { inputSchema: objectSchema }, ok], /McpServer\.tool: the definition must be an object with a "name", got string/],
    ["tool", [{ inputSchema: objectSchema }, ok], /"name" must be a non-empty string, got undefined/],
    ["tool", [{ name: "", inputSchema: objectSchema }, ok], /"name" must be a non-empty string, got an empty string/],
    ["tool", [{ name: "x", inputSchema: objectSchema }, "not a function"], /the handler of "x" must be a function, got string/],
    ["tool", [{ name: "x" }, ok], /tool "x" needs an inputSchema object/],
    ["resource", [{ name: "r" }, () => ({ contents: [] })], /McpServer\.resource: the definition's "uri" must be a non-empty string/],
    ["resourceTemplate", [{ name: "t", uriTemplate: "a://{x}" }, null], /the reader of "a:\/\/\{x\}" must be a function, got null/],
    ["prompt", [null, () => ({ messages: [] })], /McpServer\.prompt: the definition must be an object with a "name", got null/],
  ];
  for (const [method, args, message] of cases) {
    assert.throws(() => loose[method]!.apply(server, args), (err: unknown) => err instanceof TypeError && message.test(err.message), `${method}(${JSON.stringify(args)})`);
  }
  // Nothing half-registered: the server lists no tool, and a correct registration still works.
  server.tool({ name: "x", inputSchema: objectSchema }, ok);
  const h = await connect(server);
  await h.initialize();
  const r = await h.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(r.tools.map((t) => t.name), ["x"]);
});

test("a name can be registered again after removal; duplicates throw; a stale remove is harmless", async () => {
  const server = new McpServer(INFO);
  const first = server.tool({ name: "x", inputSchema: objectSchema }, ok);
  assert.throws(() => server.tool({ name: "x", inputSchema: objectSchema }, ok), /already registered/);
  first.remove();
  server.tool({ name: "x", description: "second", inputSchema: objectSchema }, ok);
  first.remove();
  const h = await connect(server);
  await h.initialize();
  const r = await h.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(r.tools.map((t) => t.description), ["second"]);
});

test("logging: default threshold info, setLevel filters, invalid level is -32602", async () => {
  const h = await connect(serverWithOneTool());
  await h.session.log("info", "too early");
  await h.initialize();
  assert.equal(h.session.loggingLevel, "info");
  await h.session.log("debug", "hidden by default");
  await h.session.log("info", { n: 1 }, "core");
  await h.client.request("logging/setLevel", { level: "warning" });
  await h.session.log("notice", "below warning");
  await h.session.log("error", "shown");
  await h.client.request("logging/setLevel", { level: "debug" });
  await h.session.log("debug", "now shown");
  await rejectsWithCode(h.client.request("logging/setLevel", { level: "verbose" }), -32602);
  await rejectsWithCode(h.client.request("logging/setLevel", {}), -32602);
  await h.settle();
  assert.deepEqual(
    h.notes.filter((n) => n.method === "notifications/message").map((n) => n.params),
    [
      { level: "info", logger: "core", data: { n: 1 } },
      { level: "error", data: "shown" },
      { level: "debug", data: "now shown" },
    ],
  );
});

test("the logLevel option sets the default threshold", async () => {
  const h = await connect(serverWithOneTool({ logLevel: "debug" }));
  await h.initialize();
  await h.session.log("debug", "d");
  assert.deepEqual(await h.nextNote("notifications/message"), { level: "debug", data: "d" });
});

test("roots/list_changed reaches onRootsChanged", async () => {
  const h = await connect(serverWithOneTool());
  let changes = 0;
  h.session.onRootsChanged = () => changes++;
  await h.initialize({ capabilities: { roots: { listChanged: true } } });
  await h.client.notify("notifications/roots/list_changed");
  await h.client.notify("notifications/roots/list_changed");
  await h.settle();
  assert.equal(changes, 2);
});

test("close() closes every session, empties sessions and refuses new connections", async () => {
  const server = serverWithOneTool();
  const a = await connect(server);
  const b = await connect(server);
  await a.initialize();
  assert.equal(server.sessions.size, 2);
  let closedA = 0;
  a.session.onclose = () => closedA++;
  const clientClosed = new Promise<void>((r) => (b.client.onclose = () => r()));
  await server.close();
  await clientClosed;
  assert.equal(server.sessions.size, 0);
  assert.equal(closedA, 1);
  assert.equal(a.client.closed, true);
  const [t] = InMemoryTransport.createLinkedPair();
  await assert.rejects(server.connect(t), { name: "BridgeError", code: "CLOSED" });
});

test("a client that disconnects removes its session", async () => {
  const server = serverWithOneTool();
  const h = await connect(server);
  await h.initialize();
  const gone = new Promise<void>((r) => (h.session.onclose = () => r()));
  await h.client.close();
  await gone;
  assert.equal(server.sessions.size, 0);
});

test("constructor rejects a bad pageSize and empty supportedVersions", () => {
  assert.throws(() => new McpServer(INFO, { pageSize: 0 }), RangeError);
  assert.throws(() => new McpServer(INFO, { pageSize: 1.5 }), RangeError);
  assert.throws(() => new McpServer(INFO, { supportedVersions: [] }), RangeError);
});
