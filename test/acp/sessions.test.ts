/** AcpMcpSessions over in-process MCP servers and an in-memory editor. */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Agent } from "../../src/acp/connection.ts";
import { AcpMcpSessions, type AcpMcpSessionsOptions, type McpOverAcpHook } from "../../src/acp/sessions.ts";
import type { SessionUpdate } from "../../src/acp/types.ts";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { memConfig, memoryServers, type Faults, type MemoryServers } from "../manager/helpers.ts";
import { pair, rpcError, type Pair } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

/** A server with tools of every kind the reporting distinguishes. */
function toolServer(): McpServer {
  const server = new McpServer({ name: "mem", version: "1.0.0" });
  const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
  server.tool({ name: "echo", inputSchema: { type: "object" } }, (args) => text(String(args.text ?? "")));
  server.tool({ name: "look", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }, () => ({
    content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
    structuredContent: { seen: 1 },
  }));
  server.tool({ name: "wipe", inputSchema: { type: "object" }, annotations: { readOnlyHint: false, destructiveHint: true } }, () => text("gone"));
  server.tool({ name: "bad", inputSchema: { type: "object" } }, () => ({ ...text("it broke"), isError: true }));
  server.tool({ name: "slow", inputSchema: { type: "object" } }, (_args, ctx) =>
    new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true })),
  );
  server.resource({ uri: "mem://note", name: "note", mimeType: "text/plain" }, (uri) => ({ contents: [{ uri, text: "a note" }] }));
  return server;
}

interface Setup extends Pair {
  sessions: AcpMcpSessions;
  servers: MemoryServers;
  logs: string[];
  /** The session's updates only (not the agent's own), by kind. */
  kinds(sessionId: string): string[];
  asked: unknown[];
}

async function setup(options: AcpMcpSessionsOptions = {}, faults: Faults = {}, clientCapabilities: Record<string, unknown> = {}): Promise<Setup> {
  const servers = memoryServers(() => toolServer(), faults);
  const logs: string[] = [];
  let sessions!: AcpMcpSessions;
  const agent: Agent = {
    initialize: () => ({ agentCapabilities: sessions.agentCapabilities() }),
    newSession: () => ({ sessionId: "unused" }),
    prompt: () => ({ stopReason: "end_turn" }),
    cancel: (p) => sessions.cancel(p.sessionId),
  };
  const p = await pair((conn) => {
    sessions = new AcpMcpSessions(conn, {
      // No config files unless a test asks: the machine's own must not leak in.
      globalConfigDir: false,
      workspaceConfig: false,
      ...options,
      log: (l) => logs.push(l),
      manager: { transportFactory: servers.factory, processGuard: false, ...options.manager },
    });
    return agent;
  });
  await p.editor.request("initialize", { protocolVersion: 1, clientCapabilities });
  const asked: unknown[] = [];
  return {
    ...p,
    sessions,
    servers,
    logs,
    asked,
    kinds: (id) => p.updates.filter((u) => u.sessionId === id).map((u) => u.update.sessionUpdate),
    close: async () => {
      await sessions.closeAll();
      await p.close();
    },
  };
}

const http = (name: string, extra: Record<string, unknown> = {}) => ({ type: "http", name, url: "http://127.0.0.1:9/mcp", headers: [], ...extra });
const updatesOf = (s: Setup, id: string): SessionUpdate[] => s.updates.filter((u) => u.sessionId === id).map((u) => u.update);

test("agentCapabilities advertises http and sse (and whatever an MCP-over-ACP hook adds)", async () => {
  const s = await setup();
  try {
    assert.deepEqual(s.sessions.agentCapabilities(), { mcpCapabilities: { http: true, sse: true } });
  } finally {
    await s.close();
  }
});

test("malformed mcpServers are refused with -32602 listing every problem, never a secret value", async () => {
  const s = await setup();
  try {
    const secret = "sk-live-0123456789abcdef";
    const err = await rpcError(
      s.sessions.open("a", {
        cwd: "/tmp",
        mcpServers: [
          { name: "dup", command: "/bin/x", args: [], env: [{ name: "API_KEY", value: secret }] },
          http("dup", { headers: [{ name: "Authorization", value: `Bearer ${secret}` }] }),
          { name: "ws", type: "websocket", url: "ws://x" },
          { name: "nocmd", args: [], env: [] },
          "not an object",
        ],
      }),
    );
    assert.equal(err.code, -32602);
    assert.match(err.message, /\/mcpServers\/1\/name: duplicate server name "dup"/);
    assert.match(err.message, /\/mcpServers\/2\/type: unknown transport "websocket"/);
    assert.match(err.message, /\/mcpServers\/3\/command: missing command/);
    assert.match(err.message, /\/mcpServers\/4: server must be an object/);
    assert.ok(!JSON.stringify(err).includes(secret));
    assert.deepEqual((err.data as { problems: { path: string }[] }).problems.map((p) => p.path), [
      "/mcpServers/1/name",
      "/mcpServers/2/type",
      "/mcpServers/3/command",
      "/mcpServers/4",
    ]);
    assert.equal(s.sessions.has("a"), false);
  } finally {
    await s.close();
  }
});

test("a session's servers merge with the agent's; the session's win on a name conflict, with a log line", async () => {
  const s = await setup({ agentServers: [memConfig("shared", { trust: "untrusted" }), memConfig("own")] });
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("shared"), http("theirs")] });
    const tools = (await s.sessions.tools("a")).map((t) => t.name);
    assert.deepEqual(tools.filter((n) => n.endsWith("__echo")).sort(), ["mcp__own__echo", "mcp__shared__echo", "mcp__theirs__echo"]);
    assert.ok(s.logs.some((l) => l.includes('session server "shared" shadows the agent\'s server')));
    // The session's "shared" is trusted (the editor's default), so no question is asked.
    const result = await s.sessions.callTool("a", "mcp__shared__echo", { text: "x" });
    assert.equal(result.isError, false);
    assert.deepEqual(s.asked, []);
    assert.deepEqual(s.sessions.status("a").map((st) => [st.name, st.trust]), [["shared", "trusted"], ["own", "trusted"], ["theirs", "trusted"]]);
  } finally {
    await s.close();
  }
});

test("callTool reports pending, in_progress, then completed with content, or failed for an isError result", async () => {
  const s = await setup();
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    const ok = await s.sessions.callTool("a", "mcp__m__look", { q: 1 });
    assert.equal(ok.isError, false);
    const bad = await s.sessions.callTool("a", "mcp__m__bad", {});
    assert.equal(bad.isError, true);
    const unknown = await s.sessions.callTool("a", "mcp__m__nope", {});
    assert.equal(unknown.isError, true);
    await until(() => s.kinds("a").filter((k) => k.startsWith("tool_call")).length === 9, "nine tool_call updates");
    const calls = updatesOf(s, "a").filter((u) => u.sessionUpdate.startsWith("tool_call"));
    assert.deepEqual(calls.slice(0, 3), [
      { sessionUpdate: "tool_call", toolCallId: "call_1", title: "look (m)", name: "mcp__m__look", kind: "read", status: "pending", rawInput: { q: 1 } },
      { sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "in_progress" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "call_1",
        status: "completed",
        content: [{ type: "content", content: { type: "image", data: "AAAA", mimeType: "image/png" } }],
        rawOutput: { seen: 1 },
      },
    ]);
    const failed = calls[5] as { status: string; content: { content: { text: string } }[] };
    assert.equal(failed.status, "failed");
    assert.match(failed.content[0]!.content.text, /it broke/);
    assert.deepEqual(calls.slice(6, 9).map((c) => ("status" in c ? c.status : undefined)), ["pending", "in_progress", "failed"]);
    assert.equal((calls[6] as { kind: string }).kind, "other");
  } finally {
    await s.close();
  }
});

test("the editor's servers' text is marked untrusted by default; wrapClientServers: false and trusted agent servers are not", async () => {
  const s = await setup({ agentServers: [memConfig("own")] });
  const plain = await setup({ wrapClientServers: false });
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    assert.match((await s.sessions.callTool("a", "mcp__m__echo", { text: "hi" })).text, /<untrusted-content source="mcp:m\/echo"/);
    assert.equal((await s.sessions.callTool("a", "mcp__own__echo", { text: "hi" })).text, "hi");
    const read = await s.sessions.readResource("a", "mem://note", "m");
    assert.match((read.result.contents[0] as { text: string }).text, /<untrusted-content/);
    await assert.rejects(s.sessions.readResource("a", "mem://nowhere"), {
      name: "BridgeError",
      code: "INVALID_STATE",
      message: 'cannot tell which server to read "mem://nowhere" from: no server of this session lists it; name the server',
    });
    await plain.sessions.open("b", { cwd: "/tmp", mcpServers: [http("m")] });
    assert.equal((await plain.sessions.callTool("b", "mcp__m__echo", { text: "hi" })).text, "hi");
  } finally {
    await s.close();
    await plain.close();
  }
});

test("untrusted tools ask the editor first: allow_always is remembered, reject_always refuses without asking, reject_once asks again", async () => {
  const s = await setup({ agentServers: [memConfig("own", { trust: "untrusted" })] });
  const answers = ["allow_always", "reject_always", "reject_once", "allow_once"];
  s.editor.setRequestHandler("session/request_permission", (params) => {
    s.asked.push(params);
    return { outcome: { outcome: "selected", optionId: answers.shift() } };
  });
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [] });
    assert.equal((await s.sessions.callTool("a", "mcp__own__echo", { text: "1" })).isError, false);
    assert.equal((await s.sessions.callTool("a", "mcp__own__echo", { text: "2" })).isError, false);
    assert.equal(s.asked.length, 1);
    const first = s.asked[0] as { sessionId: string; toolCall: Record<string, unknown>; options: { kind: string }[] };
    assert.equal(first.sessionId, "a");
    assert.deepEqual(first.toolCall, { toolCallId: "call_1", title: "echo (own)", kind: "other", status: "pending", rawInput: { text: "1" } });
    assert.deepEqual(first.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once", "reject_always"]);

    const wiped = await s.sessions.callTool("a", "mcp__own__wipe", {});
    assert.equal(wiped.isError, true);
    assert.equal(wiped.failure?.kind, "denied");
    assert.equal((await s.sessions.callTool("a", "mcp__own__wipe", {})).failure?.kind, "denied");
    assert.equal(s.asked.length, 2, "reject_always is not asked again");

    assert.equal((await s.sessions.callTool("a", "mcp__own__look", {})).isError, true);
    assert.equal((await s.sessions.callTool("a", "mcp__own__look", {})).isError, false);
    assert.equal(s.asked.length, 4, "reject_once and allow_once are asked each time");

    // A call that was refused never went in progress: pending, then failed.
    await until(() => s.kinds("a").filter((k) => k.startsWith("tool_call")).length >= 15, "fifteen tool_call updates");
    const wipe = updatesOf(s, "a").filter((u) => "toolCallId" in u && u.toolCallId === "call_3");
    assert.deepEqual(wipe.map((u) => ("status" in u ? u.status : undefined)), ["pending", "failed"]);
    assert.equal((wipe[0] as { kind: string }).kind, "delete");
  } finally {
    await s.close();
  }
});

test("a failing server is reported to the editor after open (a notice when the client takes them); open still succeeds", async () => {
  const faults: Faults = { exitAtStart: (name) => name === "dead" };
  const s = await setup({}, faults);
  const n = await setup({}, faults, { session: { notices: {} } });
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("dead", { headers: [{ name: "X-Key", value: "hush-1234567890" }] }), http("live")] });
    assert.equal(s.updates.length, 0, "nothing before the session/new answer could be written");
    await until(() => s.updates.length >= 1, "a session update");
    const report = updatesOf(s, "a")[0] as { sessionUpdate: string; content: { text: string } };
    assert.equal(report.sessionUpdate, "agent_message_chunk");
    assert.match(report.content.text, /MCP server "dead" is unavailable/);
    assert.ok(!JSON.stringify(s.updates).includes("hush-1234567890"));
    assert.equal((await s.sessions.callTool("a", "mcp__live__echo", { text: "ok" })).isError, false);

    await n.sessions.open("b", { cwd: "/tmp", mcpServers: [http("dead")] });
    await until(() => n.updates.length >= 1, "a session update");
    const notice = updatesOf(n, "b")[0] as { sessionUpdate: string; severity: string; title: string; description: string };
    assert.deepEqual([notice.sessionUpdate, notice.severity, notice.title], ["notice", "warning", 'MCP server "dead" is unavailable']);
    assert.match(notice.description, /cannot be used in this session/);
  } finally {
    await s.close();
    await n.close();
  }
});

test("open is bounded by startupTimeoutMs and the first prompt's wait by firstPromptWaitMs; a hung server does not block them", async (t) => {
  // Timers are mocked: the 100 ms bounds end when the test moves time, once "live" is ready, so
  // it cannot miss them on a slow machine. Waits poll with setImmediate.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const s = await setup({ startupTimeoutMs: 100, firstPromptWaitMs: 100 }, { mute: (name) => name === "hung" });
  const settledWhileTicking = async <T>(promise: Promise<T>, what: string): Promise<T> => {
    let done = false;
    void promise.then(() => (done = true), () => (done = true));
    await until(() => done || (t.mock.timers.tick(100), false), what, { spin: true });
    return promise;
  };
  const liveReady = () => {
    try {
      return s.sessions.status("a").some((st) => st.name === "live" && st.state === "ready");
    } catch {
      return false; // the session is not registered yet
    }
  };
  try {
    const opening = s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("hung"), http("live")] });
    await until(liveReady, "the live server to be ready", { spin: true });
    await settledWhileTicking(opening, "open to return");
    const states = Object.fromEntries(s.sessions.status("a").map((st) => [st.name, st.state]));
    assert.deepEqual(states, { hung: "connecting", live: "ready" });
    const signal = await settledWhileTicking(s.sessions.ready("a"), "the first prompt's wait to end");
    assert.equal(signal.aborted, false);
    assert.ok(s.logs.some((l) => l.includes("still starting after the wait: hung")));
    assert.deepEqual((await s.sessions.tools("a")).map((tool) => tool.server).filter((v, i, a) => a.indexOf(v) === i), ["live"]);
  } finally {
    t.mock.timers.reset();
    await s.close();
  }
});

test("cancel aborts the session's calls in flight (the server gets notifications/cancelled) and only that session's", async () => {
  const s = await setup();
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    await s.sessions.open("b", { cwd: "/tmp", mcpServers: [http("m")] });
    const signal = await s.sessions.ready("a");
    const call = s.sessions.callTool("a", "mcp__m__slow", {});
    const other = s.sessions.callTool("b", "mcp__m__slow", {});
    const procA = () => s.servers.processes.get("m")![0]!;
    await until(() => procA().received.some((m) => "method" in m && m.method === "tools/call"), "tools/call to reach the server");
    await s.editor.notify("session/cancel", { sessionId: "a" });
    const result = await call;
    assert.equal(result.isError, true);
    assert.equal(result.failure?.kind, "cancelled");
    assert.equal(signal.aborted, true);
    await until(() => procA().received.some((m) => "method" in m && m.method === "notifications/cancelled"), "notifications/cancelled to reach the server");
    // The next turn gets a fresh signal; session b's call is still running.
    assert.equal((await s.sessions.ready("a")).aborted, false);
    const procB = s.servers.processes.get("m")![1]!;
    assert.ok(!procB.received.some((m) => "method" in m && m.method === "notifications/cancelled"));
    s.sessions.cancel("b");
    assert.equal((await other).failure?.kind, "cancelled");
    s.sessions.cancel("unknown"); // ignored
  } finally {
    await s.close();
  }
});

test("close stops the session's servers and forgets it; every later use is -32002 with data.sessionId", async () => {
  const s = await setup();
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    const manager = s.sessions.manager("a");
    assert.equal(await s.sessions.close("a"), true);
    assert.equal(await s.sessions.close("a"), false);
    assert.deepEqual(manager.status().map((st) => st.state), ["closed"]);
    for (const use of [() => s.sessions.tools("a"), () => s.sessions.callTool("a", "mcp__m__echo"), () => s.sessions.ready("a")]) {
      const err = await rpcError(use());
      assert.equal(err.code, -32002);
      assert.deepEqual(err.data, { sessionId: "a" });
    }
    // Opening the same id again (session/load) starts fresh servers.
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    assert.equal(s.servers.processes.get("m")!.length, 2);
    assert.equal((await s.sessions.callTool("a", "mcp__m__echo", { text: "again" })).isError, false);
  } finally {
    await s.close();
  }
});

test("an MCP-over-ACP hook gets the entries it claims, adds its capability, serves them, and hears about the close", async () => {
  const events: string[] = [];
  let servers!: MemoryServers;
  const hook: McpOverAcpHook = {
    capabilities: { _meta: { mcp_acp_transport: true } },
    claims: (entry) => typeof entry === "object" && entry !== null && String((entry as { url?: unknown }).url).startsWith("acp:"),
    open: (sessionId, entries) => {
      events.push(`open ${sessionId} ${JSON.stringify(entries)}`);
      if (entries.some((e) => (e as { name?: unknown }).name === "bad")) throw new RpcError(-32602, "Invalid params: bad tunnel");
      return { servers: [memConfig("tun")], transportFactory: (prepared, hooks) => servers.factory(prepared, hooks) };
    },
    close: (sessionId) => void events.push(`close ${sessionId}`),
  };
  const s = await setup({ mcpOverAcp: hook });
  servers = s.servers;
  try {
    assert.deepEqual(s.sessions.agentCapabilities(), { _meta: { mcp_acp_transport: true }, mcpCapabilities: { http: true, sse: true } });
    const tunnel = { transport: "http", name: "tun", url: "acp:6f1c", headers: {} };
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [tunnel, http("m")] });
    assert.deepEqual(events, [`open a ${JSON.stringify([tunnel])}`]);
    assert.equal((await s.sessions.callTool("a", "mcp__tun__echo", { text: "through" })).isError, false);
    assert.equal((await s.sessions.callTool("a", "mcp__m__echo", { text: "direct" })).isError, false);
    const err = await rpcError(s.sessions.open("b", { cwd: "/tmp", mcpServers: [{ ...tunnel, name: "bad" }] }));
    assert.equal(err.code, -32602);
    await s.sessions.close("a");
    assert.deepEqual(events.slice(-1), ["close a"]);
  } finally {
    await s.close();
  }
});

test("tools() of a session answers from the cached lists while a server's refresh hangs", { timeout: 20_000 }, async () => {
  const s = await setup({ manager: { toolCacheTtlMs: 0 } });
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    s.servers.latest("m").muted = true;
    const names = (await s.sessions.tools("a")).map((t) => t.name);
    assert.deepEqual(names, ["mcp__m__echo", "mcp__m__look", "mcp__m__wipe", "mcp__m__bad", "mcp__m__slow"]);
  } finally {
    await s.close();
  }
});

test("the editor's tool-call display shows the server's text as sent; only the model's copy is marked, with a fresh nonce per call", async () => {
  const s = await setup();
  try {
    await s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] });
    const first = await s.sessions.callTool("a", "mcp__m__echo", { text: "hi" });
    const second = await s.sessions.callTool("a", "mcp__m__echo", { text: "hi" });
    const nonce = (text: string) => /^<untrusted-content source="mcp:m\/echo" nonce="([0-9a-f]{32})">\nhi\n<\/untrusted-content nonce="\1">$/.exec(text)?.[1];
    assert.match(nonce(first.text) ?? "", /^[0-9a-f]{32}$/);
    assert.match(nonce(second.text) ?? "", /^[0-9a-f]{32}$/);
    assert.notEqual(nonce(first.text), nonce(second.text));
    await until(() => s.kinds("a").filter((k) => k === "tool_call_update").length === 4, "four tool_call_update updates");
    const shown = updatesOf(s, "a").filter((u) => u.sessionUpdate === "tool_call_update" && "content" in u);
    assert.deepEqual(shown.map((u) => ("content" in u ? u.content : undefined)), [
      [{ type: "content", content: { type: "text", text: "hi" } }],
      [{ type: "content", content: { type: "text", text: "hi" } }],
    ]);
  } finally {
    await s.close();
  }
});
