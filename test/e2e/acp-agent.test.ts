/**
 * The reference ACP agent as a child process, an editor peer on its stdio, and MCP servers of
 * every transport: a stdio child, Streamable HTTP and legacy SSE servers in this process, one
 * that cannot start, and one the editor offers over the ACP connection itself (MCP over ACP).
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpProvider } from "../../src/acp/mcp-provider.ts";
import type { SessionUpdate } from "../../src/acp/types.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { SseServer } from "../../src/transport/sse-server.ts";
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { alive, ROOT } from "./helpers.ts";
import {  } from "./manager-helpers.ts";
import { fixtureEntry, INIT, messagesText, prompt, startAgent } from "./acp-helpers.ts";
import { until } from "../helpers/wait.ts";

let httpServer: StreamableHttpServer;
let sseServer: SseServer;
let httpUrl: string;
let sseUrl: string;
const dir = mkdtempSync(join(tmpdir(), "acp-agent-test-"));

before(async () => {
  // Handshake era only: this test follows the HTTP session's life (the stateless era has none).
  const forHttp = createEchoServer({ statelessVersions: [] });
  httpServer = new StreamableHttpServer({ onSession: (t) => forHttp.connect(t) });
  httpUrl = (await httpServer.listen(0)).url.href;
  const forSse = createEchoServer();
  sseServer = new SseServer({ onSession: (t) => forSse.connect(t) });
  sseUrl = (await sseServer.listen(0)).url.href;
});

after(async () => {
  await httpServer.close();
  await sseServer.close();
  rmSync(dir, { recursive: true, force: true });
});

const toolCalls = (updates: SessionUpdate[]) =>
  updates.flatMap((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update" ? [u] : []));

test("session/new with stdio, http and sse servers plus a broken one: the broken one is reported, the others work; close and load", async () => {
  const agent = await startAgent();
  try {
    const init = await agent.editor.request<{ protocolVersion: number; agentCapabilities: Record<string, unknown> }>("initialize", INIT);
    assert.equal(init.protocolVersion, 1);
    assert.deepEqual(init.agentCapabilities.mcpCapabilities, { http: true, sse: true });
    assert.equal(init.agentCapabilities.loadSession, true);

    const servers = [
      fixtureEntry("local", "echo.ts"),
      { type: "http", name: "web", url: httpUrl, headers: [] },
      { type: "sse", name: "legacy", url: sseUrl, headers: [] },
      { name: "broken", command: "mcp-bridge-no-such-command", args: [], env: [{ name: "TOKEN", value: "do-not-show-0987654321" }] },
    ];
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: servers });
    assert.match(sessionId, /^[0-9a-f-]{36}$/);
    const [localPid] = agent.pidsOf("local");
    assert.ok(localPid !== undefined && alive(localPid), "the stdio server runs");
    assert.equal(httpServer.sessionCount, 1);
    assert.equal(sseServer.sessionCount, 1);

    await until(() => /MCP server "broken" is unavailable/.test(messagesText(agent.updatesOf(sessionId))), "the broken server's report");
    // Queued updates (like the report above) and the command list leave in separate writes.
    await until(() => agent.updatesOf(sessionId).some((u) => u.sessionUpdate === "available_commands_update"), "the command list");

    assert.equal(await prompt(agent, sessionId, "/tools"), "end_turn");
    const listing = messagesText(agent.updatesOf(sessionId));
    for (const server of ["local", "web", "legacy"]) assert.match(listing, new RegExp(`mcp__${server}__echo: Returns the text it was given`));
    assert.doesNotMatch(listing, /mcp__broken__/);

    const before = agent.updatesOf(sessionId).length;
    const script = ['/call mcp__local__echo {"text":"via stdio"}', '/call mcp__web__add {"a":2,"b":3}', '/call mcp__legacy__echo {"text":"via sse"}', "/call mcp__local__fail"];
    assert.equal(await prompt(agent, sessionId, script.join("\n")), "end_turn");
    const calls = toolCalls(agent.updatesOf(sessionId).slice(before));
    const byId = new Map<string, SessionUpdate[]>();
    for (const c of calls) byId.set(c.toolCallId, [...(byId.get(c.toolCallId) ?? []), c]);
    assert.equal(byId.size, 4);
    const sequences = [...byId.values()].map((list) => list.map((u) => ("status" in u ? u.status : undefined)));
    assert.deepEqual(sequences, [
      ["pending", "in_progress", "completed"],
      ["pending", "in_progress", "completed"],
      ["pending", "in_progress", "completed"],
      ["pending", "in_progress", "failed"],
    ]);
    const [echoCall, addCall, sseCall, failCall] = [...byId.values()];
    assert.deepEqual(echoCall![0], {
      sessionUpdate: "tool_call",
      toolCallId: echoCall![0]!.sessionUpdate === "tool_call" ? echoCall![0]!.toolCallId : "",
      title: "echo (local)",
      name: "mcp__local__echo",
      kind: "other",
      status: "pending",
      rawInput: { text: "via stdio" },
    });
    const textOf = (u: SessionUpdate | undefined) => JSON.stringify(u);
    assert.match(textOf(echoCall![2]), /via stdio/);
    // An editor's server's text is marked for the model only; the editor shows it as sent.
    assert.doesNotMatch(textOf(echoCall![2]), /untrusted-content/, "the tool-call display carries no markers");
    assert.deepEqual((addCall![2] as { rawOutput?: unknown }).rawOutput, { sum: 5 });
    assert.match(textOf(sseCall![2]), /via sse/);
    assert.match(textOf(failCall![2]), /this tool always fails/);

    // session/close: the stdio child is gone, the HTTP and SSE sessions are closed.
    assert.deepEqual(await agent.editor.request("session/close", { sessionId }), {});
    assert.equal(alive(localPid), false);
    await until(() => httpServer.sessionCount === 0 && sseServer.sessionCount === 0, "the remote sessions to end");
    const closedErr = await agent.editor.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] }).catch((e: unknown) => e);
    assert.equal((closedErr as { code: number }).code, -32002);

    // session/load brings the session back with the servers it is given.
    assert.deepEqual(await agent.editor.request("session/load", { sessionId, cwd: ROOT, mcpServers: servers.slice(0, 2) }), {});
    const reloaded = agent.pidsOf("local");
    assert.equal(reloaded.length, 2);
    assert.ok(alive(reloaded[1]));
    const mark = agent.updatesOf(sessionId).length;
    await prompt(agent, sessionId, "/tools");
    const again = messagesText(agent.updatesOf(sessionId).slice(mark));
    assert.match(again, /mcp__local__echo/);
    assert.match(again, /mcp__web__echo/);
    assert.doesNotMatch(again, /mcp__legacy__/);

    // stdin EOF: the agent closes every session and exits by itself.
    await agent.stop();
    assert.equal(alive(reloaded[1]), false);
    assert.ok(agent.stderr.some((l) => l.includes("the editor went away; every session is closed")));
    await until(() => httpServer.sessionCount === 0, "the HTTP session to end");
    assert.ok(!agent.stderr.join("\n").includes("do-not-show-0987654321"), "no secret in the logs");
    assert.ok(!JSON.stringify(agent.raw).includes("do-not-show-0987654321"), "no secret sent to the editor");
  } finally {
    await agent.stop();
  }
});

test("session/cancel mid-call: the prompt answers cancelled and the server sees notifications/cancelled", async () => {
  const log = join(dir, "received.log");
  writeFileSync(log, "");
  const agent = await startAgent();
  try {
    await agent.editor.request("initialize", INIT);
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", {
      cwd: ROOT,
      mcpServers: [fixtureEntry("hang", "faulty.ts", ["--hang-calls", "--log-received", log])],
    });
    const turn = prompt(agent, sessionId, '/call mcp__hang__echo {"text":"never answered"}\nthis line is not reached');
    await until(() => agent.updatesOf(sessionId).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"), "the call to start");
    await until(() => readFileSync(log, "utf8").includes("tools/call echo"), "the call to reach the server");
    await agent.editor.notify("session/cancel", { sessionId });
    assert.equal(await turn, "cancelled");
    const last = toolCalls(agent.updatesOf(sessionId)).at(-1) as { status: string };
    assert.equal(last.status, "failed");
    await until(() => /^notifications\/cancelled \d+$/m.test(readFileSync(log, "utf8")), "notifications/cancelled at the server");
    assert.doesNotMatch(messagesText(agent.updatesOf(sessionId)), /this line is not reached/);
    // The session goes on: the next turn runs normally.
    assert.equal(await prompt(agent, sessionId, "still here"), "end_turn");
    assert.match(messagesText(agent.updatesOf(sessionId)), /still here/);
  } finally {
    await agent.stop();
  }
});

test("the agent's own servers (--servers) join every session; untrusted ones ask the editor before first use", async () => {
  const file = join(dir, "servers.json");
  const own = fixtureEntry("own", "echo.ts");
  writeFileSync(file, JSON.stringify({ mcpServers: { own: { command: own.command, args: own.args } } }));
  const agent = await startAgent(["--servers", file]);
  const asked: { toolCall: { toolCallId: string; status: string } }[] = [];
  agent.editor.setRequestHandler("session/request_permission", (params) => {
    asked.push(params as (typeof asked)[number]);
    return { outcome: { outcome: "selected", optionId: "allow_always" } };
  });
  try {
    await agent.editor.request("initialize", INIT);
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [fixtureEntry("theirs", "echo.ts")] });
    await prompt(agent, sessionId, '/call mcp__own__echo {"text":"one"}\n/call mcp__own__echo {"text":"two"}\n/call mcp__theirs__echo {"text":"three"}');
    assert.equal(asked.length, 1, "asked once, for the agent's untrusted server only");
    const calls = toolCalls(agent.updatesOf(sessionId));
    const first = calls.filter((c) => c.toolCallId === asked[0]!.toolCall.toolCallId).map((c) => ("status" in c ? c.status : undefined));
    assert.deepEqual(first, ["pending", "in_progress", "completed"]);
    assert.equal(calls.filter((c) => "status" in c && c.status === "completed").length, 3);
    // The agent's servers come back in a second session, under a manager of their own.
    const second = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [] });
    assert.equal(agent.pidsOf("own").length, 2);
    await prompt(agent, second.sessionId, '/call mcp__own__echo {"text":"four"}');
    assert.equal(asked.length, 2, "allow_always is remembered per session");
  } finally {
    await agent.stop();
  }
  for (const pid of [...agent.pidsOf("own"), ...agent.pidsOf("theirs")]) assert.equal(alive(pid), false);
});

test("MCP over ACP: the agent announces the draft binding and calls an acp: server the editor hosts, through the ACP connection", async () => {
  const agent = await startAgent();
  const server = createEchoServer();
  const provider = new McpProvider({ name: "tools", server });
  // The editor's end of the tunnel: envelopes go out on its peer, and come in through it.
  provider.attach({ request: (method, params, o) => agent.editor.request(method, params, o), notify: (method, params) => agent.editor.notify(method, params) });
  provider.serve(agent.editor);
  try {
    const init = await agent.editor.request<{ agentCapabilities: Record<string, unknown> }>("initialize", INIT);
    assert.deepEqual(init.agentCapabilities._meta, { mcp_acp_transport: true });
    const { key, declaration } = await provider.declare();
    assert.deepEqual(declaration, { name: "tools", transport: "http", url: key, headers: {} });
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [declaration] });
    assert.equal(await prompt(agent, sessionId, '/call mcp__tools__echo {"text":"over the ACP connection"}'), "end_turn");
    const calls = toolCalls(agent.updatesOf(sessionId));
    assert.deepEqual(calls.map((c) => ("status" in c ? c.status : undefined)), ["pending", "in_progress", "completed"]);
    assert.match(JSON.stringify(calls[2]), /over the ACP connection/);
    assert.deepEqual(agent.pidsOf("tools"), [], "no process stands in for it");
    assert.equal(server.sessions.size, 1, "one MCP session, the tunnel's");
    assert.deepEqual(await agent.editor.request("session/close", { sessionId }), {});
  } finally {
    await agent.stop();
    await provider.close();
    await server.close();
  }
});

test("--no-mcp-over-acp plays an agent without the binding: no announcement, and an acp: server is refused with -32602", async () => {
  const agent = await startAgent(["--no-mcp-over-acp"]);
  try {
    const init = await agent.editor.request<{ agentCapabilities: Record<string, unknown> }>("initialize", INIT);
    assert.equal(init.agentCapabilities._meta, undefined);
    const acpServer = { name: "tools", transport: "http", url: "acp:6f1c0a52-0000-4000-8000-000000000000", headers: {} };
    await assert.rejects(agent.editor.request("session/new", { cwd: ROOT, mcpServers: [acpServer] }), { code: -32602 });
  } finally {
    await agent.stop();
  }
});
