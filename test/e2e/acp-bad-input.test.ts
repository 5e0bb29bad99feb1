/**
 * Bad input at the reference ACP agent's stdio: every case gets a clear error and the agent
 * keeps serving. The tests share one agent process and run in order (the first one checks
 * what happens before `initialize`).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { ROOT } from "./helpers.ts";
import { INIT, startAgent, type AgentProcess } from "./acp-helpers.ts";
import { until } from "../helpers/wait.ts";

let agent: AgentProcess;

before(async () => {
  agent = await startAgent();
});

after(async () => {
  await agent.stop();
});

async function failure(method: string, params: Record<string, unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await agent.editor.request(method, params);
  } catch (err) {
    return err as { code: number; message: string; data?: unknown };
  }
  throw new Error(`${method} succeeded`);
}

test("initialize: an unsupported version is answered with ours; a malformed one is -32602", async () => {
  assert.equal((await failure("session/new", { cwd: ROOT, mcpServers: [] })).code, -32600);
  assert.equal((await agent.editor.request<{ protocolVersion: number }>("initialize", { ...INIT, protocolVersion: 3 })).protocolVersion, 1);
  assert.equal((await failure("initialize", { protocolVersion: "1" })).code, -32602);
  assert.equal((await agent.editor.request<{ protocolVersion: number }>("initialize", INIT)).protocolVersion, 1);
});

test("malformed mcpServers, unknown transports and duplicate names are -32602, without the secret values", async () => {
  const secret = "ghp_secretvalue1234567890";
  const duplicate = await failure("session/new", {
    cwd: ROOT,
    mcpServers: [
      { name: "gh", command: "npx", args: ["-y", "gh-server"], env: [{ name: "GITHUB_TOKEN", value: secret }] },
      { type: "http", name: "gh", url: "https://example.com/mcp", headers: [{ name: "Authorization", value: `Bearer ${secret}` }] },
    ],
  });
  assert.equal(duplicate.code, -32602);
  assert.match(duplicate.message, /duplicate server name "gh"/);
  assert.ok(!JSON.stringify(duplicate).includes(secret));

  const unknown = await failure("session/new", { cwd: ROOT, mcpServers: [{ type: "websocket", name: "ws", url: "wss://example.com" }] });
  assert.equal(unknown.code, -32602);
  assert.match(unknown.message, /unknown transport "websocket" \(expected stdio, http, sse\)/);

  for (const entry of [{ name: "x" }, { name: "x", command: 42, args: [], env: [] }, { type: "http", name: "x", url: "not a url", headers: [] }, { name: "x", command: "a", args: [], env: [{ value: "v" }] }, 7]) {
    const err = await failure("session/new", { cwd: ROOT, mcpServers: [entry] });
    assert.equal(err.code, -32602, JSON.stringify(entry));
    assert.match(err.message, /\/mcpServers\/0/);
  }
  assert.equal((await failure("session/new", { cwd: ROOT, mcpServers: "none" })).code, -32602);
  assert.equal((await failure("session/new", { cwd: "relative", mcpServers: [] })).code, -32602);
});

test("a session id that does not exist is -32002 with data.sessionId, for every session method", async () => {
  const sessionId = "no-such-session";
  const cases: [string, Record<string, unknown>][] = [
    ["session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] }],
    ["session/close", { sessionId }],
    ["session/load", { sessionId, cwd: ROOT, mcpServers: [] }],
    ["session/resume", { sessionId, cwd: ROOT }],
  ];
  for (const [method, params] of cases) {
    const err = await failure(method, params);
    assert.equal(err.code, -32002, method);
    assert.deepEqual(err.data, { sessionId }, method);
  }
});

test("an oversize message gets -32700 (id null), a batch -32600, an unknown method -32601; the agent keeps serving", async () => {
  const seen = agent.raw.length;
  const huge = agent.editor.request("session/prompt", { sessionId: "x", prompt: [{ type: "text", text: "x".repeat(32 * 1024 * 1024 + 16) }] }, { timeoutMs: 60_000 });
  huge.catch(() => undefined);
  const isError = (m: unknown, code: number) => (m as { id?: unknown; error?: { code?: number } }).id === null && (m as { error?: { code?: number } }).error?.code === code;
  await until(() => agent.raw.slice(seen).some((m) => isError(m, -32700)), "the -32700 answer", { timeoutMs: 30_000 });
  await agent.transport.send([{ jsonrpc: "2.0", id: 900, method: "initialize", params: INIT }]);
  await until(() => agent.raw.slice(seen).some((m) => isError(m, -32600)), "the -32600 answer", { timeoutMs: 30_000 });
  assert.ok(!agent.raw.slice(seen).some((m) => (m as { id?: unknown }).id === 900), "batch entries are not processed");
  assert.equal((await failure("session/fork", { sessionId: "x" })).code, -32601);
  const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [] });
  const stop = await agent.editor.request<{ stopReason: string }>("session/prompt", { sessionId, prompt: [{ type: "text", text: "/tools" }] });
  assert.equal(stop.stopReason, "end_turn");
});

