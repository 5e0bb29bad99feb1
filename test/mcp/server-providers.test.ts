/**
 * McpServer serving from providers, with and without middleware: a real McpClient (handshake
 * era) or a raw peer sending the stateless era's `_meta`, over the in-memory pair.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BridgeError, RpcError } from "../../src/jsonrpc/errors.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer, type ServerProvider, type Middleware, type ServingContext } from "../../src/mcp/server.ts";
import type { CallToolResult } from "../../src/mcp/types.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { connect } from "./server-harness.ts";

const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
  "io.modelcontextprotocol/clientInfo": { name: "stateless-client", version: "2" },
};

const OBJECT = { type: "object" } as const;

function text(t: string): CallToolResult {
  return { content: [{ type: "text", text: t }] };
}

/** A provider with one tool `name` that answers `answer`, and what its calls saw. */
function toolProvider(name: string, answer: string) {
  const seen: Array<{ args: Record<string, unknown>; ctx: ServingContext }> = [];
  const provider: ServerProvider = {
    listTools: () => [{ name, inputSchema: OBJECT }],
    callTool: (_n, args, ctx) => {
      seen.push({ args, ctx });
      return text(answer);
    },
  };
  return { provider, seen };
}

async function clientOf(server: McpServer, name = "handshake-client"): Promise<McpClient> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new McpClient({ clientInfo: { name, version: "1" }, era: "legacy" });
  await client.connect(b);
  return client;
}

test("a server serves its own tools first, then each provider's; on a shared name the first wins", async () => {
  const one = toolProvider("shared", "from one");
  const two = toolProvider("other", "from two");
  const clash = toolProvider("shared", "never");
  const server = new McpServer({ name: "s", version: "1" }, { providers: [one.provider, two.provider, clash.provider] });
  server.tool({ name: "own", inputSchema: OBJECT }, () => text("own"));
  const client = await clientOf(server);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["own", "shared", "other"]);
  const texts = [];
  for (const name of ["own", "shared", "other"]) texts.push((await client.callTool(name)).content[0]);
  assert.deepEqual(texts, [{ type: "text", text: "own" }, { type: "text", text: "from one" }, { type: "text", text: "from two" }]);
  assert.deepEqual(clash.seen, []);
  await assert.rejects(client.callTool("missing"), { code: -32602 });
  assert.deepEqual(one.seen[0]!.ctx.client, { name: "handshake-client", version: "1" });
  assert.equal(one.seen[0]!.ctx.era, "handshake");
  await client.close();
  await server.close();
});

test("the stateless era: providers see the request's client and era, and ask for input with an input round", async () => {
  const asking: ServerProvider = {
    listTools: () => [{ name: "greet", inputSchema: OBJECT }],
    callTool: async (_n, _args, ctx) => {
      const answer = await ctx.elicit({ message: "Name?", requestedSchema: { type: "object", properties: {} } }, "name");
      return text(`Hello, ${String(answer.content?.name)} (${ctx.era}, ${ctx.client.name})`);
    },
  };
  const server = new McpServer({ name: "s", version: "1" }, { providers: [asking] });
  const h = await connect(server);
  const listed = await h.client.request<{ tools: { name: string }[] }>("tools/list", { _meta: META });
  assert.deepEqual(listed.tools.map((t) => t.name), ["greet"]);
  const params = { name: "greet", arguments: {}, _meta: META };
  const first = await h.client.request<Record<string, any>>("tools/call", params);
  assert.equal(first.resultType, "input_required");
  const done = await h.client.request<Record<string, any>>("tools/call", {
    ...params,
    inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
    requestState: first.requestState,
  });
  assert.equal(done.content[0].text, "Hello, Ada (stateless, stateless-client)");
  await server.close();
});

test("middleware: filter and before in declared order, after in reverse; a refusal skips the provider and the later layers", async () => {
  const trace: string[] = [];
  const layer = (name: string, refuse = false): Middleware => ({
    name,
    filter: (list) => (trace.push(`filter ${name}`), list),
    before: (call) => {
      trace.push(`before ${name}`);
      return refuse && call.name === "refused" ? { refuse: `${name} says no` } : undefined;
    },
    after: (result) => (trace.push(`after ${name}`), result),
  });
  const p = toolProvider("ok", "fine");
  const server = new McpServer({ name: "s", version: "1" }, { providers: [p.provider], middleware: [layer("a"), layer("b", true), layer("c")] });
  server.tool({ name: "refused", inputSchema: OBJECT }, () => text("ran"));
  const client = await clientOf(server);
  await client.listTools();
  assert.deepEqual(trace.splice(0), ["filter a", "filter b", "filter c"]);
  assert.deepEqual((await client.callTool("ok")).content, [{ type: "text", text: "fine" }]);
  assert.deepEqual(trace.splice(0), ["before a", "before b", "before c", "after c", "after b", "after a"]);
  assert.deepEqual(await client.callTool("refused"), { content: [{ type: "text", text: "b says no" }], isError: true });
  assert.deepEqual(trace.splice(0), ["before a", "before b", "after a"]);
  await client.close();
  await server.close();
});

test("middleware: a rewrite reaches the tool, and the server's own tool still validates what it was given", async () => {
  const rewrite: Middleware = { name: "rewrite", before: (call) => ({ arguments: { ...call.arguments, n: call.arguments.n === "bad" ? "x" : 2 } }) };
  const server = new McpServer({ name: "s", version: "1" }, { middleware: [rewrite] });
  server.tool(
    { name: "double", inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } },
    (args) => text(String((args.n as number) * 2)),
  );
  const client = await clientOf(server);
  assert.deepEqual((await client.callTool("double", { n: 1 })).content, [{ type: "text", text: "4" }]);
  const invalid = await client.callTool("double", { n: "bad" });
  assert.equal(invalid.isError, true);
  assert.match((invalid.content[0] as { text: string }).text, /Invalid arguments for tool "double"/);
  await client.close();
  await server.close();
});

test("a middleware that throws stops the call with an error result naming it; a filter that throws fails the list", async () => {
  const broken: Middleware = {
    name: "broken",
    filter: () => {
      throw new Error("filter bug");
    },
    after: () => {
      throw new Error("after bug");
    },
  };
  const server = new McpServer({ name: "s", version: "1" }, { middleware: [broken] });
  server.tool({ name: "t", inputSchema: OBJECT }, () => text("secret output"));
  const client = await clientOf(server);
  await assert.rejects(client.listTools(), { code: -32603 });
  assert.deepEqual(await client.callTool("t"), {
    content: [{ type: "text", text: 'The call was stopped by mcp-bridge: middleware "broken" failed in after: after bug' }],
    isError: true,
  });
  await client.close();
  await server.close();
});

test("a provider that throws: its call is an error result, its list is left out and reported", async () => {
  const errors: Error[] = [];
  const throwing: ServerProvider = {
    listTools: () => {
      throw new Error("list exploded");
    },
    callTool: () => {
      throw new Error("call exploded");
    },
  };
  const good = toolProvider("good", "fine");
  const server = new McpServer({ name: "s", version: "1" }, { providers: [throwing, good.provider], onProviderError: (e) => errors.push(e) });
  const client = await clientOf(server);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["good"]);
  assert.deepEqual(errors.map((e) => e.message), ["list exploded"]);
  // A throwing provider named its tool nowhere, so the call is routed nowhere: -32602.
  await assert.rejects(client.callTool("boom"), { code: -32602 });
  const flaky: ServerProvider = { listTools: () => [{ name: "flaky", inputSchema: OBJECT }], callTool: () => Promise.reject(new Error("call exploded")) };
  const server2 = new McpServer({ name: "s", version: "1" }, { providers: [flaky] });
  const client2 = await clientOf(server2);
  assert.deepEqual(await client2.callTool("flaky"), { content: [{ type: "text", text: 'Tool "flaky" failed: call exploded' }], isError: true });
  await Promise.all([client.close(), client2.close(), server.close(), server2.close()]);
});

test("a provider that never answers is bounded: left out of the list with a TIMEOUT, its call an error result, its signal aborted", async () => {
  const errors: unknown[] = [];
  let hangLists = true;
  const silent: ServerProvider = {
    listTools: () => (hangLists ? new Promise(() => {}) : [{ name: "silent", inputSchema: OBJECT }]),
    callTool: (_name, _args, ctx) =>
      new Promise(() => ctx.signal.addEventListener("abort", () => gaveUp.push((ctx.signal.reason as BridgeError).code))),
  };
  const gaveUp: string[] = [];
  const good = toolProvider("good", "fine");
  const server = new McpServer({ name: "s", version: "1" }, { providers: [silent, good.provider], providerTimeoutMs: 20, onProviderError: (e) => errors.push(e) });
  const client = await clientOf(server);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["good"]);
  assert.ok(errors[0] instanceof BridgeError);
  assert.equal((errors[0] as BridgeError).code, "TIMEOUT");
  hangLists = false;
  const result = await client.callTool("silent");
  assert.deepEqual(gaveUp, ["TIMEOUT"], "the provider's signal aborted when its time ran out");
  assert.deepEqual(result, { content: [{ type: "text", text: 'Tool "silent" failed: a provider did not answer tools/call "silent" within 20 ms' }], isError: true });
  await client.close();
  await server.close();
});

test("prompts and resources from providers; a provider's change event becomes list_changed", async () => {
  let listener: { listChanged(list: "tools" | "prompts" | "resources"): void } | undefined;
  const provider: ServerProvider = {
    listPrompts: () => [{ name: "hello", arguments: [{ name: "who", required: true }] }],
    getPrompt: (_n, args) => ({ messages: [{ role: "user", content: { type: "text", text: `hello ${args.who}` } }] }),
    listResources: () => [{ uri: "mem://a", name: "a" }],
    readResource: (uri) => {
      if (uri !== "mem://a") throw new RpcError(-32002, "Resource not found");
      return { contents: [{ uri, text: "A" }] };
    },
    subscribe: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
  };
  const server = new McpServer({ name: "s", version: "1" }, { providers: [provider] });
  const h = await connect(server);
  const init = await h.initialize();
  assert.deepEqual(Object.keys(init.capabilities).sort(), ["logging", "prompts", "resources"]);
  const prompt = await h.client.request<Record<string, any>>("prompts/get", { name: "hello", arguments: { who: "you" } });
  assert.equal(prompt.messages[0].content.text, "hello you");
  assert.deepEqual(await h.client.request("resources/read", { uri: "mem://a" }), { contents: [{ uri: "mem://a", text: "A" }] });
  await assert.rejects(h.client.request("resources/read", { uri: "mem://b" }), { code: -32002 });
  listener!.listChanged("prompts");
  assert.equal(await h.nextNote("notifications/prompts/list_changed"), undefined);
  await server.close();
  assert.equal(listener, undefined, "closing the server ends its subscriptions");
});

test("a prompt or resource a filter hides from a client cannot be got or read by guessing it", async () => {
  const hideSecret: Middleware = {
    name: "hideSecret",
    filter: (list) => {
      if (list.kind === "prompts") return { kind: "prompts", items: list.items.filter((p) => !p.name.startsWith("secret")) };
      if (list.kind === "resources") return { kind: "resources", items: list.items.filter((r) => !r.uri.includes("secret")) };
      return list;
    },
  };
  const provider: ServerProvider = {
    listPrompts: () => [{ name: "secret_plan" }, { name: "open" }],
    getPrompt: (name) => ({ messages: [{ role: "user", content: { type: "text", text: name } }] }),
    listResources: () => [{ uri: "mem://secret", name: "s" }],
    readResource: (uri) => ({ contents: [{ uri, text: "hidden" }] }),
  };
  const server = new McpServer({ name: "s", version: "1" }, { providers: [provider], middleware: [hideSecret] });
  server.prompt({ name: "secret_local" }, () => ({ messages: [] }));
  const client = await clientOf(server);
  assert.deepEqual((await client.listPrompts()).map((p) => p.name), ["open"]);
  await assert.rejects(client.getPrompt("secret_plan"), { code: -32602 });
  await assert.rejects(client.getPrompt("secret_local"), { code: -32602 });
  assert.equal((await client.getPrompt("open")).messages.length, 1);
  await assert.rejects(client.readResource("mem://secret"), { code: -32002 });
  await client.close();
  await server.close();
});

test("a provider that reads its signal only after its time ran out, or after the client cancelled, finds it aborted", async () => {
  const held: ServingContext[] = [];
  const answers: (() => void)[] = [];
  const hanging: ServerProvider = {
    listTools: () => [{ name: "hang", inputSchema: OBJECT }],
    callTool: (_name, _args, ctx) => {
      held.push(ctx); // the signal is not read here: it is made when first read, later
      return new Promise((resolve) => answers.push(() => resolve(text("late"))));
    },
  };
  const server = new McpServer({ name: "s", version: "1" }, { providers: [hanging], providerTimeoutMs: 50 });
  const client = await clientOf(server);
  assert.equal((await client.callTool("hang")).isError, true);
  assert.equal(held[0]!.signal.aborted, true, "read after the deadline, the signal is already aborted");
  assert.equal((held[0]!.signal.reason as BridgeError).code, "TIMEOUT");

  const server2 = new McpServer({ name: "s", version: "1" }, { providers: [hanging], providerTimeoutMs: 60_000 });
  const client2 = await clientOf(server2);
  const cancel = new AbortController();
  const call = client2.callTool("hang", {}, { signal: cancel.signal });
  await client2.listTools(); // the call has reached the provider (messages are handled in order)
  cancel.abort();
  await assert.rejects(call, { code: "CANCELLED" });
  await client2.listTools(); // and the cancellation has reached the server
  assert.equal(held[1]!.signal.aborted, true, "read after the client cancelled, the signal is already aborted");
  for (const answer of answers) answer(); // late answers, ignored; no deadline timer is left behind
  await Promise.all([client.close(), client2.close(), server.close(), server2.close()]);
});
