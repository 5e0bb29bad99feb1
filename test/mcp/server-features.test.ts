import { test } from "node:test";
import assert from "node:assert/strict";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { CallToolResult } from "../../src/mcp/types.ts";
import { connect, rejectsWithCode } from "./server-harness.ts";

const INFO = { name: "features", version: "1.0.0" };
const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
const firstText = (r: CallToolResult) => (r.content[0] as { text: string }).text;

async function ready(server: McpServer, capabilities = {}) {
  const h = await connect(server);
  await h.initialize({ capabilities });
  return h;
}

test("tools/call: unknown tool and a missing name are protocol errors (-32602)", async () => {
  const server = new McpServer(INFO);
  server.tool({ name: "t", inputSchema: { type: "object" } }, () => text("ok"));
  const h = await ready(server);
  const e = await rejectsWithCode(h.client.request("tools/call", { name: "nope", arguments: {} }), -32602);
  assert.match(e.message, /nope/);
  await rejectsWithCode(h.client.request("tools/call", { arguments: {} }), -32602);
});

test("tools/call: arguments are validated before the handler runs; failures are isError results", async () => {
  const server = new McpServer(INFO);
  let runs = 0;
  server.tool(
    {
      name: "greet",
      inputSchema: { type: "object", properties: { who: { type: "string" } }, required: ["who"], additionalProperties: false },
    },
    (args) => {
      runs++;
      return text(`hi ${args.who as string}`);
    },
  );
  const h = await ready(server);
  assert.equal(firstText(await h.client.request("tools/call", { name: "greet", arguments: { who: "x" } })), "hi x");
  for (const args of [{}, { who: 5 }, { who: "x", extra: 1 }, [1, 2], "str"]) {
    const r = await h.client.request<CallToolResult>("tools/call", { name: "greet", arguments: args });
    assert.equal(r.isError, true, `arguments ${JSON.stringify(args)}`);
    assert.match(firstText(r), /Invalid arguments for tool "greet"/);
  }
  const missing = await h.client.request<CallToolResult>("tools/call", { name: "greet" });
  assert.equal(missing.isError, true, "absent arguments are validated as {}");
  assert.equal(runs, 1);
});

test("tools/call: a throwing handler becomes an isError result, except URL elicitation required", async () => {
  const server = new McpServer(INFO);
  server.tool({ name: "boom", inputSchema: { type: "object" } }, () => {
    throw new Error("disk on fire");
  });
  server.tool({ name: "rpc", inputSchema: { type: "object" } }, () => {
    throw new RpcError(-32603, "an ordinary rpc error");
  });
  server.tool({ name: "needs_url", inputSchema: { type: "object" } }, () => {
    throw new RpcError(-32042, "URL elicitation required", { elicitations: [] });
  });
  server.tool({ name: "bad_shape", inputSchema: { type: "object" } }, () => ({ text: "no content array" }) as unknown as CallToolResult);
  const h = await ready(server);
  const boom = await h.client.request<CallToolResult>("tools/call", { name: "boom", arguments: {} });
  assert.deepEqual(boom, { content: [{ type: "text", text: 'Tool "boom" failed: disk on fire' }], isError: true });
  const rpc = await h.client.request<CallToolResult>("tools/call", { name: "rpc", arguments: {} });
  assert.equal(rpc.isError, true);
  const e = await rejectsWithCode(h.client.request("tools/call", { name: "needs_url", arguments: {} }), -32042);
  assert.deepEqual(e.data, { elicitations: [] });
  const bad = await h.client.request<CallToolResult>("tools/call", { name: "bad_shape", arguments: {} });
  assert.equal(bad.isError, true);
  assert.match(firstText(bad), /malformed result/);
});

test("tools/call: a tool with outputSchema must return conforming structuredContent unless isError", async () => {
  const server = new McpServer(INFO);
  const outputSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false };
  const reply: { value: CallToolResult } = { value: text("") };
  server.tool({ name: "out", inputSchema: { type: "object" }, outputSchema }, () => reply.value);
  const h = await ready(server);
  const call = () => h.client.request<CallToolResult>("tools/call", { name: "out", arguments: {} });

  reply.value = { content: [{ type: "text", text: '{"n":1}' }], structuredContent: { n: 1 } };
  assert.deepEqual(await call(), reply.value);

  reply.value = text("forgot structuredContent");
  const missing = await call();
  assert.equal(missing.isError, true);
  assert.match(firstText(missing), /no structuredContent/);

  reply.value = { content: [], structuredContent: { n: "one" } };
  const wrong = await call();
  assert.equal(wrong.isError, true);
  assert.match(firstText(wrong), /does not match its outputSchema/);

  reply.value = { content: [{ type: "text", text: "failed honestly" }], isError: true };
  assert.deepEqual(await call(), reply.value, "error results are exempt from the output schema");
});

test("tools/call: progress notifications reach the caller with the client's token", async () => {
  const server = new McpServer(INFO);
  server.tool({ name: "steps", inputSchema: { type: "object" } }, async (_args, ctx) => {
    assert.notEqual(ctx.progressToken, undefined);
    for (let i = 1; i <= 3; i++) await ctx.sendProgress(i, 3, `step ${i}`);
    return text("done");
  });
  const h = await ready(server);
  const seen: unknown[] = [];
  const r = await h.client.request<CallToolResult>("tools/call", { name: "steps", arguments: {} }, { onProgress: (p) => seen.push(p) });
  assert.equal(firstText(r), "done");
  assert.deepEqual(seen, [
    { progress: 1, total: 3, message: "step 1" },
    { progress: 2, total: 3, message: "step 2" },
    { progress: 3, total: 3, message: "step 3" },
  ]);
});

test("tools/call: without a progress token sendProgress sends nothing", async () => {
  const server = new McpServer(INFO);
  server.tool({ name: "steps", inputSchema: { type: "object" } }, async (_args, ctx) => {
    await ctx.sendProgress(1, 1);
    return text(String(ctx.progressToken));
  });
  const h = await ready(server);
  const r = await h.client.request<CallToolResult>("tools/call", { name: "steps", arguments: {} });
  assert.equal(firstText(r), "undefined");
  await h.settle();
  assert.equal(h.notes.filter((n) => n.method === "notifications/progress").length, 0);
});

test("tools/call: notifications/cancelled aborts the tool's signal and no response is sent", async () => {
  const server = new McpServer(INFO);
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let aborted!: (reason: unknown) => void;
  const abortSeen = new Promise<unknown>((r) => (aborted = r));
  server.tool({ name: "wait", inputSchema: { type: "object" } }, (_args, ctx) => {
    started();
    return new Promise<CallToolResult>((resolve) => {
      ctx.signal.addEventListener("abort", () => {
        aborted(ctx.signal.reason);
        resolve(text("too late"));
      });
    });
  });
  const h = await ready(server);
  const controller = new AbortController();
  const call = h.client.request("tools/call", { name: "wait", arguments: {} }, { signal: controller.signal });
  await running;
  controller.abort();
  await assert.rejects(call, { name: "BridgeError", code: "CANCELLED" });
  const reason = await abortSeen;
  assert.ok(reason instanceof Error);
  await h.settle();
  assert.equal(h.client.stats.lateResponses, 0, "the cancelled request got no response");
  assert.equal(h.client.stats.unknownResponses, 0);
});

test("tools/call: the handler context carries the session and request id", async () => {
  const server = new McpServer(INFO);
  server.tool({ name: "who", inputSchema: { type: "object" } }, (_a, ctx) =>
    text(`${ctx.session.clientInfo?.name} ${typeof ctx.requestId}`),
  );
  const h = await ready(server);
  assert.equal(firstText(await h.client.request("tools/call", { name: "who", arguments: {} })), "harness number");
});

function resourceServer(): McpServer {
  const server = new McpServer(INFO);
  server.resource({ uri: "r://static", name: "static" }, (uri) => ({ contents: [{ uri, text: "static text" }] }));
  server.resource({ uri: "r://items/special", name: "special" }, (uri) => ({ contents: [{ uri, text: "static wins" }] }));
  server.resourceTemplate({ uriTemplate: "r://items/{id}", name: "item" }, (uri, vars) => ({
    contents: [{ uri, text: `item ${vars.id}` }],
  }));
  server.resourceTemplate({ uriTemplate: "file:///{+path}", name: "file" }, (uri, vars) => ({
    contents: [{ uri, text: `path ${vars.path}` }],
  }));
  server.resourceTemplate({ uriTemplate: "r://broken/{id}", name: "broken" }, () => ({ nothing: true }) as never);
  return server;
}

test("resources/read: exact static URI first, then templates, else -32002 with the uri", async () => {
  const h = await ready(resourceServer());
  const read = (uri: string) => h.client.request<{ contents: Array<{ uri: string; text: string }> }>("resources/read", { uri });
  assert.deepEqual(await read("r://static"), { contents: [{ uri: "r://static", text: "static text" }] });
  assert.equal((await read("r://items/special")).contents[0].text, "static wins");
  assert.equal((await read("r://items/42")).contents[0].text, "item 42");
  assert.equal((await read("r://items/a%20b")).contents[0].text, "item a b");
  assert.equal((await read("file:///etc/hosts")).contents[0].text, "path etc/hosts");
  for (const uri of ["r://items/", "r://items/a/b", "r://other", "r://static/x"]) {
    const e = await rejectsWithCode(read(uri), -32002);
    assert.deepEqual(e.data, { uri });
  }
  await rejectsWithCode(h.client.request("resources/read", {}), -32602);
  await rejectsWithCode(read("r://broken/1"), -32603);
});

test("resources/subscribe tracks uris per session; updates go only to subscribers of that uri", async () => {
  const server = resourceServer();
  const a = await ready(server);
  const b = await ready(server);
  assert.deepEqual(await a.client.request("resources/subscribe", { uri: "r://static" }), {});
  assert.deepEqual(await a.client.request("resources/subscribe", { uri: "r://items/7" }), {});
  await rejectsWithCode(a.client.request("resources/subscribe", { uri: "r://unknown" }), -32002);
  assert.deepEqual([...a.session.subscribedUris], ["r://static", "r://items/7"]);
  await server.notifyResourceUpdated("r://static");
  await server.notifyResourceUpdated("r://items/8");
  await a.session.notifyResourceUpdated("r://items/7");
  await a.settle();
  await b.settle();
  assert.deepEqual(
    a.notes.filter((n) => n.method === "notifications/resources/updated").map((n) => n.params),
    [{ uri: "r://static" }, { uri: "r://items/7" }],
  );
  assert.equal(b.notes.length, 0);
  assert.deepEqual(await a.client.request("resources/unsubscribe", { uri: "r://static" }), {});
  assert.deepEqual(await a.client.request("resources/unsubscribe", { uri: "r://never" }), {});
  await server.notifyResourceUpdated("r://static");
  await a.settle();
  assert.equal(a.notes.filter((n) => n.method === "notifications/resources/updated").length, 2);
});

function promptServer(withHandler: boolean): McpServer {
  const server = new McpServer(INFO);
  server.prompt(
    { name: "greet", arguments: [{ name: "name", required: true }, { name: "mood" }] },
    (args) => ({ messages: [{ role: "user", content: { type: "text", text: `hello ${args.name} (${args.mood ?? "calm"})` } }] }),
    { name: (value, ctx) => ["ann", "anna", "bob"].filter((n) => n.startsWith(value)).concat(ctx.arguments.mood ? [ctx.arguments.mood] : []) },
  );
  server.prompt({ name: "plain" }, () => ({ messages: [] }));
  server.resourceTemplate({ uriTemplate: "r://n/{n}", name: "n" }, (uri) => ({ contents: [{ uri, text: "" }] }), {
    n: () => Array.from({ length: 150 }, (_, i) => String(i)),
  });
  if (withHandler) server.completion((params) => ({ completion: { values: [`fallback:${params.argument.name}`] } }));
  return server;
}

test("prompts/get: renders, and refuses unknown prompts, missing required and non-string arguments", async () => {
  const h = await ready(promptServer(false));
  const r = await h.client.request<{ messages: Array<{ content: { text: string } }> }>("prompts/get", {
    name: "greet",
    arguments: { name: "Ann", mood: "glad" },
  });
  assert.equal(r.messages[0].content.text, "hello Ann (glad)");
  assert.deepEqual(await h.client.request("prompts/get", { name: "plain" }), { messages: [] });
  await rejectsWithCode(h.client.request("prompts/get", { name: "nope" }), -32602);
  const e = await rejectsWithCode(h.client.request("prompts/get", { name: "greet", arguments: { mood: "x" } }), -32602);
  assert.match(e.message, /missing required argument\(s\): name/);
  await rejectsWithCode(h.client.request("prompts/get", { name: "greet", arguments: { name: 3 } }), -32602);
});

test("completion/complete: per-argument completers, the 100-value cap, the fallback handler, -32601 without any", async () => {
  const h = await ready(promptServer(true));
  const complete = (ref: object, name: string, value: string, context?: object) =>
    h.client.request<{ completion: { values: string[]; total?: number; hasMore?: boolean } }>("completion/complete", {
      ref,
      argument: { name, value },
      ...(context ? { context } : {}),
    });
  assert.deepEqual((await complete({ type: "ref/prompt", name: "greet" }, "name", "an")).completion, {
    values: ["ann", "anna"],
    total: 2,
    hasMore: false,
  });
  const withContext = await complete({ type: "ref/prompt", name: "greet" }, "name", "b", { arguments: { mood: "zed" } });
  assert.deepEqual(withContext.completion.values, ["bob", "zed"]);
  const many = (await complete({ type: "ref/resource", uri: "r://n/{n}" }, "n", "")).completion;
  assert.equal(many.values.length, 100);
  assert.equal(many.total, 150);
  assert.equal(many.hasMore, true);
  assert.deepEqual((await complete({ type: "ref/prompt", name: "greet" }, "mood", "")).completion.values, ["fallback:mood"]);
  await rejectsWithCode(h.client.request("completion/complete", { ref: { type: "ref/other" }, argument: { name: "a", value: "" } }), -32602);
  await rejectsWithCode(h.client.request("completion/complete", { ref: { type: "ref/prompt", name: "greet" } }), -32602);

  const noFallback = await ready(promptServer(false));
  const empty = await noFallback.client.request<{ completion: { values: string[] } }>("completion/complete", {
    ref: { type: "ref/prompt", name: "plain" },
    argument: { name: "x", value: "" },
  });
  assert.deepEqual(empty.completion.values, []);
  await rejectsWithCode(
    noFallback.client.request("completion/complete", { ref: { type: "ref/prompt", name: "ghost" }, argument: { name: "x", value: "" } }),
    -32602,
  );

  const none = new McpServer(INFO);
  none.prompt({ name: "p" }, () => ({ messages: [] }));
  const n = await ready(none);
  await rejectsWithCode(n.client.request("completion/complete", { ref: { type: "ref/prompt", name: "p" }, argument: { name: "x", value: "" } }), -32601);
});

test("server-to-client requests are refused unless the client declared the capability", async () => {
  const server = new McpServer(INFO);
  const bare = await ready(server);
  await rejectsWithCode(bare.session.listRoots(), -32601);
  await rejectsWithCode(bare.session.createMessage({ messages: [], maxTokens: 10 }), -32601);
  await rejectsWithCode(bare.session.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } }), -32601);

  const early = await connect(server);
  await assert.rejects(early.session.listRoots(), { name: "BridgeError", code: "NOT_CONNECTED" });

  const formOnly = await ready(server, { elicitation: {}, roots: {}, sampling: {} });
  formOnly.client.setRequestHandler("roots/list", () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
  formOnly.client.setRequestHandler("elicitation/create", (p) => ({ action: "accept", content: { got: (p as { message: string }).message } }));
  formOnly.client.setRequestHandler("sampling/createMessage", () => ({ role: "assistant", content: { type: "text", text: "hi" }, model: "m" }));
  assert.deepEqual(await formOnly.session.listRoots(), { roots: [{ uri: "file:///work", name: "work" }] });
  assert.deepEqual(
    await formOnly.session.elicit({ message: "name?", requestedSchema: { type: "object", properties: {} } }),
    { action: "accept", content: { got: "name?" } },
  );
  assert.equal((await formOnly.session.createMessage({ messages: [], maxTokens: 5 })).model, "m");
  await rejectsWithCode(formOnly.session.elicit({ mode: "url", message: "go", elicitationId: "e1", url: "https://example.com" }), -32601);

  const urlOnly = await ready(server, { elicitation: { url: {} } });
  await rejectsWithCode(urlOnly.session.elicit({ message: "form?", requestedSchema: { type: "object", properties: {} } }), -32601);
});

test("a malformed client answer is refused with INVALID_RESULT", async () => {
  const server = new McpServer(INFO);
  const h = await ready(server, { roots: {} });
  h.client.setRequestHandler("roots/list", () => ({ roots: "none" }));
  await assert.rejects(h.session.listRoots(), { name: "BridgeError", code: "INVALID_RESULT" });
});
