/**
 * CompositeProvider behind a real McpServer and McpClient (in-memory pair): namespaced tools,
 * prompts and resources from members whose names clash, names that survive a restart and
 * lead back to their member, and a member that fails or hangs.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BridgeError, RpcError } from "../../src/jsonrpc/errors.ts";
import { CompositeProvider } from "../../src/gateway/composite.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer, type ServerProvider, type ServingContext } from "../../src/mcp/server.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { connect } from "../mcp/server-harness.ts";

const OBJECT = { type: "object" } as const;

/** A member whose tool and prompt are both called `echo`, answering with its label. */
function member(label: string): ServerProvider {
  return {
    listTools: () => [{ name: "echo", inputSchema: OBJECT }, { name: `only_${label}`, inputSchema: OBJECT }],
    callTool: (name) => ({
      content: [
        { type: "text", text: `${label}:${name}` },
        { type: "resource_link", uri: `mem://${label}/out`, name: "out" },
      ],
    }),
    listPrompts: () => [{ name: "echo" }],
    getPrompt: (name) => ({ messages: [{ role: "user", content: { type: "text", text: `${label} prompt ${name}` } }] }),
    listResources: () => [{ uri: `mem://${label}/out`, name: "out" }],
    listResourceTemplates: () => [{ uriTemplate: `mem://${label}/{id}`, name: "by id" }],
    readResource: (uri) => {
      if (!uri.startsWith(`mem://${label}/`)) throw new RpcError(-32002, "Resource not found");
      return { contents: [{ uri, text: `${label} read ${uri}` }] };
    },
  };
}

async function clientOf(server: McpServer): Promise<McpClient> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new McpClient({ era: "legacy" });
  await client.connect(b);
  return client;
}

test("two members with clashing tool and prompt names: each under its namespace, calls reach the right one", async () => {
  const composite = new CompositeProvider([
    { namespace: "a", provider: member("a") },
    { namespace: "b", provider: member("b") },
  ]);
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite] });
  const client = await clientOf(server);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["a__echo", "a__only_a", "b__echo", "b__only_b"]);
  assert.deepEqual((await client.callTool("b__echo")).content[0], { type: "text", text: "b:echo" });
  assert.deepEqual((await client.callTool("a__echo")).content[0], { type: "text", text: "a:echo" });
  assert.deepEqual((await client.listPrompts()).map((p) => p.name), ["a__echo", "b__echo"]);
  const prompt = await client.getPrompt("b__echo");
  assert.deepEqual(prompt.messages[0]!.content, { type: "text", text: "b prompt echo" });
  await assert.rejects(client.callTool("c__echo"), { code: -32602 });
  await client.close();
  await server.close();
});

test("resources: URIs under mcp-bridge://<namespace>/, links in results too, and each reads back through its member", async () => {
  const composite = new CompositeProvider([
    { namespace: "a", provider: member("a") },
    { namespace: "b", provider: member("b") },
  ]);
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite] });
  const client = await clientOf(server);
  assert.deepEqual((await client.listResources()).map((r) => r.uri), ["mcp-bridge://a/mem://a/out", "mcp-bridge://b/mem://b/out"]);
  const templates = await client.connection!.request<{ resourceTemplates: { uriTemplate: string }[] }>("resources/templates/list", {});
  assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), ["mcp-bridge://a/mem://a/{id}", "mcp-bridge://b/mem://b/{id}"]);
  const link = (await client.callTool("b__echo")).content[1] as { uri: string };
  assert.equal(link.uri, "mcp-bridge://b/mem://b/out");
  assert.deepEqual(await client.readResource(link.uri), { contents: [{ uri: "mcp-bridge://b/mem://b/out", text: "b read mem://b/out" }] });
  assert.deepEqual((await client.readResource("mcp-bridge://a/mem://a/42")).contents[0], { uri: "mcp-bridge://a/mem://a/42", text: "a read mem://a/42" });
  await assert.rejects(client.readResource("mem://a/out"), { code: -32002 });
  await assert.rejects(client.readResource("mcp-bridge://zz/mem://a/out"), { code: -32002 });
  await client.close();
  await server.close();
});

test("names are stable across restarts, whatever the member order, and lead back to their member", async () => {
  const long = "x".repeat(80);
  const odd: ServerProvider = { listTools: () => [{ name: long, inputSchema: OBJECT }, { name: "read file", inputSchema: OBJECT }], callTool: () => ({ content: [] }) };
  const plain: ServerProvider = { listTools: () => [{ name: "read", inputSchema: OBJECT }], callTool: () => ({ content: [] }) };
  const ctx = {} as ServingContext;
  const first = new CompositeProvider([{ namespace: "my server", provider: odd }, { namespace: "fs", provider: plain }]);
  const again = new CompositeProvider([{ namespace: "fs", provider: plain }, { namespace: "my server", provider: odd }]);
  const names = (await first.listTools(ctx)).map((t) => t.name);
  // Sanitised, capped at 64 and hashed where the plain form could not be kept; the hash is of
  // the namespace and the original name only, so a restart in another order gives the same.
  assert.deepEqual(names, [`my_server__${"x".repeat(44)}_3efc66aa`, "my_server__read_file_c8437b10", "fs__read"]);
  assert.deepEqual((await again.listTools(ctx)).map((t) => t.name).sort(), [...names].sort());
  assert.deepEqual(names.map((n) => again.resolveTool(n)), [
    { namespace: "my server", name: long },
    { namespace: "my server", name: "read file" },
    { namespace: "fs", name: "read" },
  ]);
  assert.equal(again.resolveTool("fs__write"), undefined, "names are looked up, never split");
});

test("a member that hangs or fails a list is left out and reported; the others are served", async () => {
  const reported: Array<[string, string | undefined]> = [];
  const hanging: ServerProvider = { listTools: () => new Promise(() => {}), callTool: () => ({ content: [] }) };
  const failing: ServerProvider = { listTools: () => Promise.reject(new Error("down")), callTool: () => ({ content: [] }) };
  const composite = new CompositeProvider(
    [
      { namespace: "hang", provider: hanging },
      { namespace: "fail", provider: failing },
      { namespace: "ok", provider: member("ok") },
    ],
    { listTimeoutMs: 20, onMemberError: (ns, e) => reported.push([ns, e instanceof BridgeError ? e.code : e.message]) },
  );
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite] });
  const client = await clientOf(server);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["ok__echo", "ok__only_ok"]);
  assert.deepEqual(reported.sort(), [["fail", "down"], ["hang", "TIMEOUT"]]);
  await client.close();
  await server.close();
});

test("the stateless era lists and calls through the composite too", async () => {
  const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };
  const composite = new CompositeProvider([{ namespace: "a", provider: member("a") }, { namespace: "b", provider: member("b") }]);
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite] });
  const h = await connect(server);
  const listed = await h.client.request<{ tools: { name: string }[]; resultType: string }>("tools/list", { _meta: META });
  assert.deepEqual([listed.resultType, listed.tools.map((t) => t.name)], ["complete", ["a__echo", "a__only_a", "b__echo", "b__only_b"]]);
  const called = await h.client.request<{ content: { text?: string }[] }>("tools/call", { name: "b__only_b", arguments: {}, _meta: META });
  assert.equal(called.content[0]!.text, "b:only_b");
  const read = await h.client.request<{ contents: { uri: string }[] }>("resources/read", { uri: "mcp-bridge://a/mem://a/1", _meta: META });
  assert.equal(read.contents[0]!.uri, "mcp-bridge://a/mem://a/1");
  await assert.rejects(h.client.request("resources/read", { uri: "mcp-bridge://a/x", _meta: META }), { code: -32602 });
  await server.close();
});

test("completion goes to the member of the prompt or template, under its own names", async () => {
  const asked: unknown[] = [];
  const completing: ServerProvider = {
    ...member("a"),
    complete: (params) => (asked.push(params.ref), { completion: { values: [`${params.argument.value}1`] } }),
  };
  const composite = new CompositeProvider([{ namespace: "a", provider: completing }, { namespace: "b", provider: member("b") }]);
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite] });
  const client = await clientOf(server);
  assert.ok(client.serverCapabilities?.completions, "completions declared: a member completes");
  const byPrompt = await client.complete({ ref: { type: "ref/prompt", name: "a__echo" }, argument: { name: "x", value: "v" } });
  const byTemplate = await client.complete({ ref: { type: "ref/resource", uri: "mcp-bridge://a/mem://a/{id}" }, argument: { name: "id", value: "4" } });
  assert.deepEqual([byPrompt.completion.values, byTemplate.completion.values], [["v1"], ["41"]]);
  assert.deepEqual(asked, [{ type: "ref/prompt", name: "echo" }, { type: "ref/resource", uri: "mem://a/{id}" }]);
  const none = await client.complete({ ref: { type: "ref/prompt", name: "b__echo" }, argument: { name: "x", value: "v" } });
  assert.deepEqual(none.completion.values, [], "a member that does not complete offers nothing");
  await assert.rejects(client.complete({ ref: { type: "ref/prompt", name: "zz" }, argument: { name: "x", value: "v" } }), { code: -32602 });
  await client.close();
  await server.close();
});
