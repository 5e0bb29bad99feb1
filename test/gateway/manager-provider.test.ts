/**
 * McpManager as a provider: two real echo fixture servers (stdio children) whose tool and
 * prompt names clash, served through one McpServer to a real McpClient. Every child is gone
 * when the manager closes.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ManagerProvider } from "../../src/gateway/manager-provider.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { fixtureConfig } from "../e2e/manager-helpers.ts";

const manager = new McpManager();
const server = new McpServer({ name: "gw", version: "1" }, { providers: [new ManagerProvider(manager)] });
const client = new McpClient();

before(async () => {
  await manager.connect([fixtureConfig("a", "echo.ts"), fixtureConfig("b", "echo.ts")]);
  const [x, y] = InMemoryTransport.createLinkedPair();
  await server.connect(x);
  await client.connect(y);
});

after(async () => {
  await client.close();
  await server.close();
  await manager.close();
  for (const s of manager.status()) assert.equal(s.state, "closed", `server ${s.name} left running`);
});

test("tools of both upstreams under the manager's names, each call reaching its own server", async () => {
  const names = (await client.listTools()).map((t) => t.name);
  assert.ok(names.includes("mcp__a__echo") && names.includes("mcp__b__echo"), names.join(", "));
  const result = await client.callTool("mcp__b__echo", { text: "hi" });
  assert.equal(result.isError, undefined);
  assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  const failed = await client.callTool("mcp__a__fail");
  assert.equal(failed.isError, true);
});

test("prompts named by the same rules, resources under mcp-bridge://<server>/", async () => {
  const prompts = (await client.listPrompts()).map((p) => p.name).sort();
  assert.deepEqual(prompts, ["mcp__a__greet", "mcp__a__hello", "mcp__b__greet", "mcp__b__hello"]);
  const greeting = await client.getPrompt("mcp__b__greet", { name: "Ada" });
  assert.deepEqual(greeting.messages[0]!.content, { type: "text", text: "Hi Ada!" });
  const uris = (await client.listResources()).map((r) => r.uri);
  assert.ok(uris.includes("mcp-bridge://a/echo://greeting") && uris.includes("mcp-bridge://b/echo://greeting"), uris.join(", "));
  const read = await client.readResource("mcp-bridge://a/echo://greeting");
  assert.equal(read.contents[0]!.uri, "mcp-bridge://a/echo://greeting");
  assert.equal((read.contents[0] as { text: string }).text, "Hello from echo");
});

test("progress comes through from the upstream, and a cancelled call is cancelled upstream", async () => {
  const seen: string[] = [];
  const done = await client.callTool("mcp__a__slow_progress", { steps: 2, delayMs: 1 }, { onProgress: (p) => seen.push(`${p.progress}/${p.total}`) });
  assert.deepEqual([done.content, seen], [[{ type: "text", text: "done after 2 steps" }], ["1/2", "2/2"]]);
  const audited = new Promise<string>((resolve) => {
    const off = manager.on("audit", (r) => {
      if (r.tool !== "slow_progress" || r.outcome === "ok") return;
      off();
      resolve(r.outcome);
    });
  });
  const stop = new AbortController();
  const call = client.callTool("mcp__b__slow_progress", { steps: 1000, delayMs: 50 }, { signal: stop.signal, onProgress: () => stop.abort() });
  await assert.rejects(call, { code: "CANCELLED" });
  assert.equal(await audited, "cancelled", "the manager's call was cancelled, not left running");
});

test("completion of an upstream prompt's argument, asked under the gateway's name", async () => {
  const done = await client.complete({ ref: { type: "ref/prompt", name: "mcp__b__greet" }, argument: { name: "name", value: "Al" } });
  assert.deepEqual(done.completion.values, ["Alan", "Alice"]);
});

test("namespaced: false over a manager of two servers refuses with -32603 instead of guessing a server", async () => {
  const unnamed = new McpServer({ name: "gw-unnamed", version: "1" }, { providers: [new ManagerProvider(manager, { namespaced: false })] });
  const direct = new McpClient();
  const [x, y] = InMemoryTransport.createLinkedPair();
  await unnamed.connect(x);
  await direct.connect(y);
  try {
    await assert.rejects(direct.getPrompt("greet", { name: "Ada" }), { code: -32603, message: /namespaced: false serves exactly one server; its manager has 2/ });
    await assert.rejects(direct.readResource("echo://greeting"), { code: -32603 });
  } finally {
    await direct.close();
    await unnamed.close();
  }
});
