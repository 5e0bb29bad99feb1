/**
 * The ACP editor interop scenario: the ACP SDK's `client()` API, as the editor, drives our
 * reference agent (`mcp-bridge acp-agent`, a real child process) through MCP servers of every
 * transport: a stdio fixture child, Streamable HTTP and legacy SSE servers in this process (on
 * 127.0.0.1, port 0), one server that cannot start, and the faulty fixture that never answers
 * a call. Every line the agent writes is checked against the SDK's JSON Schema afterwards.
 *
 * Whatever happens, everything started here is stopped by pid before `runScenario` returns.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { InitializeResponse, RequestPermissionRequest, SessionNotification, SessionUpdate } from "../../src/acp/types.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { SseServer } from "../../src/transport/sse-server.ts";
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { ROOT } from "../conformance.ts";
import { fixtureServer, running, startAgentProcess, type AgentProcess } from "./agent-process.ts";
import { AcpSchemaChecker, checkAgentMessages } from "./schema-check.ts";
import type { LoadedSdk, SdkActiveSession, SdkClientContext, SdkRequestError } from "./sdk.ts";
import { eventually, expect, Steps, within } from "./steps.ts";

/** Spawning under tsx is the slow part: an agent, then its stdio servers. */
const START_MS = 20_000;
const STEP_MS = 15_000;
const SECRET = "interop-secret-0987654321";

type ToolCallLike = Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>;

/** What the scenario leaves for the report besides the steps. */
export interface ScenarioOutcome {
  checker: AcpSchemaChecker;
  /** The agent's stderr, for the results directory. */
  agentLog: string[];
}

/** Runs every step; never throws for a step's sake. */
export async function runScenario(loaded: LoadedSdk, steps: Steps): Promise<ScenarioOutcome> {
  const checker = new AcpSchemaChecker(loaded.schema);
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-acp-interop-"));
  // A 2025-only server: the scenario checks that session/close ends the agent's HTTP session,
  // and a dual-era server would be reached in the stateless era, which has none.
  const forHttp = createEchoServer({ statelessVersions: [] });
  const http = new StreamableHttpServer({ onSession: (t) => forHttp.connect(t) });
  const forSse = createEchoServer();
  const sse = new SseServer({ onSession: (t) => forSse.connect(t) });
  let agent: AgentProcess | undefined;
  // Also the `exit` handler: an interrupted run (SIGINT, the overall limit) exits without `finally`.
  const killAll = (): void => {
    agent?.killEverything();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", killAll);
  try {
    const httpUrl = (await http.listen(0, "127.0.0.1")).url.href;
    const sseUrl = (await sse.listen(0, "127.0.0.1")).url.href;
    // The agent's own server, from --servers: untrusted by default, so its tools ask first.
    const own = fixtureServer("own", "echo.ts");
    const ownFile = join(dir, "agent-servers.json");
    writeFileSync(ownFile, JSON.stringify({ mcpServers: { own: { command: own.command, args: own.args } } }));
    const started = startAgentProcess(["--servers", ownFile]);
    agent = started;
    // A failure often means the agent died: say so (its exit may trail its stdout's end).
    steps.context = async () => {
      const exit = await within(started.exited, 1_000, "the agent's exit").catch(() => undefined);
      return exit === undefined ? "" : `\n(the agent exited: code ${String(exit.code)}, signal ${String(exit.signal)}; its last log lines: ${started.stderr.slice(-3).join(" | ")})`;
    };
    await drive(loaded, agent, steps, checker, { dir, http, sse, httpUrl, sseUrl });
  } finally {
    steps.context = async () => "";
    agent?.endInput();
    if (agent !== undefined) await within(agent.exited, 5_000, "the agent to exit").catch(() => undefined);
    killAll();
    process.removeListener("exit", killAll);
    await Promise.allSettled([http.close(), sse.close()]);
  }
  return { checker, agentLog: agent?.stderr ?? [] };
}

interface Fixtures {
  dir: string;
  http: StreamableHttpServer;
  sse: SseServer;
  httpUrl: string;
  sseUrl: string;
}

async function drive(loaded: LoadedSdk, agent: AgentProcess, steps: Steps, checker: AcpSchemaChecker, fx: Fixtures): Promise<void> {
  const delivered: SessionNotification[] = [];
  const asked: RequestPermissionRequest[] = [];
  const app = loaded.sdk
    .client({ name: "mcp-bridge-interop-editor" })
    .onNotification("session/update", ({ params }) => void delivered.push(params as SessionNotification))
    .onRequest("session/request_permission", ({ params }) => {
      asked.push(params as RequestPermissionRequest);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    });
  const connection = app.connect(loaded.sdk.ndJsonStream(agent.input, agent.output));
  const ctx = connection.agent;
  const updatesOf = (id: string): SessionUpdate[] => delivered.filter((n) => n.sessionId === id).map((n) => n.update);

  const servers = [
    fixtureServer("local", "echo.ts"),
    { type: "http", name: "web", url: fx.httpUrl, headers: [] },
    { type: "sse", name: "legacy", url: fx.sseUrl, headers: [] },
    { name: "broken", command: "mcp-bridge-no-such-command", args: [], env: [{ name: "TOKEN", value: SECRET }] },
  ];
  let main: SdkActiveSession | undefined;

  const initialized = await steps.run("initialize", async () => {
    const init = await within(
      ctx.request<InitializeResponse>("initialize", {
        protocolVersion: loaded.sdk.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "mcp-bridge-interop-editor", version: "1.0.0" },
      }),
      START_MS,
      "the initialize answer",
    );
    const caps = init.agentCapabilities ?? {};
    expect(init.protocolVersion === 1, `protocolVersion ${String(init.protocolVersion)}, expected 1`);
    expect(caps.mcpCapabilities?.http === true && caps.mcpCapabilities.sse === true, `mcpCapabilities ${JSON.stringify(caps.mcpCapabilities)}`);
    expect(caps.loadSession === true, "loadSession is not advertised");
    expect(caps.sessionCapabilities?.close !== undefined, "sessionCapabilities.close is not advertised");
    return `${init.agentInfo?.name ?? "?"} ${init.agentInfo?.version ?? "?"}, protocol 1, mcpCapabilities http+sse, loadSession, close`;
  });
  if (!initialized) {
    for (const s of ["session/new", "broken reported", "tools", "/call", "permission", "session/close", "session/load", "cancel", "teardown"]) steps.skip(s, "initialize failed");
  } else {
    const opened = await steps.run("session/new", async () => {
      main = await within(ctx.buildSession({ cwd: ROOT, mcpServers: servers }).start(), START_MS, "the session/new answer");
      const id = main.sessionId;
      expect(/^[0-9a-f-]{36}$/.test(id), `sessionId ${JSON.stringify(id)}`);
      const [local] = agent.pidsOf("local");
      expect(local !== undefined && running(local), `the stdio server is not running (agent log: ${agent.stderr.slice(-3).join(" | ")})`);
      expect(fx.http.sessionCount === 1, `${fx.http.sessionCount} Streamable HTTP sessions, expected 1`);
      expect(fx.sse.sessionCount === 1, `${fx.sse.sessionCount} SSE sessions, expected 1`);
      return `session ${id.slice(0, 8)}: stdio "local" (pid ${local}), http "web", sse "legacy" connected, "broken" not`;
    });
    const session = main;
    if (!opened || session === undefined) {
      for (const s of ["broken reported", "tools", "/call", "permission", "session/close", "session/load"]) steps.skip(s, "session/new failed");
    } else {
      await mainSessionSteps(ctx, agent, steps, fx, session, servers, { updatesOf, asked });
    }
    await cancelStep(ctx, agent, steps, fx, updatesOf);
    await steps.run("teardown", async () => {
      steps.context = async () => ""; // the agent is meant to exit now
      main?.dispose();
      connection.close();
      agent.endInput();
      const exit = await within(agent.exited, 10_000, "the agent to exit after its stdin closed");
      const pids = agent.allServerPids();
      expect(exit.code === 0, `the agent exited with code ${String(exit.code)} (signal ${String(exit.signal)})`);
      const left = (): number[] => [agent.pid, ...pids].filter(running);
      await eventually(() => left().length === 0, 5_000, () => `every process to be gone (left: ${left().join(", ")})`);
      await eventually(() => fx.http.sessionCount === 0 && fx.sse.sessionCount === 0, 10_000, "the HTTP and SSE sessions to end");
      expect(agent.stderr.some((l) => l.includes("every session is closed")), "the agent did not log that it closed every session");
      expect(!agent.stderr.join("\n").includes(SECRET), "the broken server's secret is in the agent's log");
      return `stdin EOF: agent exited (code 0); ${pids.length} server processes gone; no HTTP/SSE session left`;
    });
  }
  await steps.run("schema", async () => schemaStep(checker, agent, delivered));
}

interface Editor {
  updatesOf(id: string): SessionUpdate[];
  asked: RequestPermissionRequest[];
}

async function mainSessionSteps(
  ctx: SdkClientContext,
  agent: AgentProcess,
  steps: Steps,
  fx: Fixtures,
  main: SdkActiveSession,
  servers: unknown[],
  editor: Editor,
): Promise<void> {
  const id = main.sessionId;
  await steps.run("broken reported", async () => {
    const report = (): string | undefined => textOf(editor.updatesOf(id)).split("\n").find((l) => l.includes('MCP server "broken" is unavailable'));
    await eventually(() => report() !== undefined, 10_000, 'a session/update reporting "broken"');
    expect(!agent.received.some((l) => JSON.stringify(l.value).includes(SECRET)), "the broken server's secret was sent to the editor");
    return `agent_message_chunk: ${clip(report() ?? "", 110)}`;
  });
  await steps.run("tools", async () => {
    const t = await turn(main, "/tools");
    const text = textOf(t.updates);
    for (const s of ["local", "web", "legacy", "own"]) expect(text.includes(`mcp__${s}__echo`), `/tools does not list mcp__${s}__echo: ${clip(text, 300)}`);
    expect(!text.includes("mcp__broken__"), "/tools lists a tool of the broken server");
    return `stopReason ${t.stopReason}; mcp__{local,web,legacy,own}__* listed, no mcp__broken__*`;
  });
  await steps.run("/call", async () => {
    const script = ['/call mcp__local__echo {"text":"via stdio"}', '/call mcp__web__add {"a":2,"b":3}', '/call mcp__legacy__echo {"text":"via sse"}'];
    const t = await turn(main, script.join("\n"));
    expect(t.stopReason === "end_turn", `stopReason ${t.stopReason}`);
    const calls = byCall(t.updates);
    expect(calls.length === 3, `${calls.length} tool calls reported, expected 3`);
    calls.forEach((c, i) => expect(sequence(c) === "pending>in_progress>completed", `call ${i + 1} (${script[i]}) went ${sequence(c)}`));
    const [echo, add, legacy] = calls as [ToolCallLike[], ToolCallLike[], ToolCallLike[]];
    const first = echo[0]!;
    expect(first.sessionUpdate === "tool_call" && first.title !== "" && first.kind !== undefined, `first update ${JSON.stringify(first)}`);
    expect(JSON.stringify(first.rawInput) === '{"text":"via stdio"}', `rawInput ${JSON.stringify(first.rawInput)}`);
    expect(JSON.stringify(echo.at(-1)).includes("via stdio"), "the stdio echo result is not in the completed update");
    expect(JSON.stringify(add.at(-1)?.rawOutput) === '{"sum":5}', `add rawOutput ${JSON.stringify(add.at(-1)?.rawOutput)}`);
    expect(JSON.stringify(legacy.at(-1)).includes("via sse"), "the sse echo result is not in the completed update");
    return "stdio, http, sse: tool_call pending > tool_call_update in_progress > completed (content, rawOutput)";
  });
  await steps.run("permission", async () => {
    const before = editor.asked.length;
    const t = await turn(main, '/call mcp__own__echo {"text":"asked first"}');
    const asks = editor.asked.slice(before);
    expect(asks.length === 1, `${asks.length} session/request_permission requests, expected 1`);
    const [call] = byCall(t.updates);
    const ask = asks[0]!;
    expect(call !== undefined && ask.toolCall.toolCallId === call[0]!.toolCallId, "the permission request names another tool call");
    const kinds = ask.options.map((o) => o.kind).sort().join(",");
    expect(kinds === "allow_always,allow_once,reject_always,reject_once", `options ${kinds}`);
    expect(sequence(call) === "pending>in_progress>completed", `the call went ${sequence(call)}`);
    return `request_permission for ${ask.toolCall.toolCallId} (4 options), allow_once; pending > in_progress > completed`;
  });
  await steps.run("session/close", async () => {
    const pids = [...agent.pidsOf("local"), ...agent.pidsOf("own")];
    expect(pids.length === 2, `expected the pids of "local" and "own" in the agent's log, got ${pids.join(", ")}`);
    await within(ctx.request("session/close", { sessionId: id }), STEP_MS, "the session/close answer");
    await eventually(() => !pids.some(running), 5_000, () => `the session's processes to be gone (left: ${pids.filter(running).join(", ")})`);
    await eventually(() => fx.http.sessionCount === 0 && fx.sse.sessionCount === 0, 10_000, "the HTTP and SSE sessions to end");
    const err = await within(main.prompt("hello?"), STEP_MS, "the answer to a prompt after close").then(
      () => undefined,
      (e: unknown) => e as SdkRequestError,
    );
    expect(err?.code === -32002, `a prompt to the closed session got ${err === undefined ? "an answer" : `${err.code}: ${err.message}`}, expected -32002`);
    const data = err.data as { sessionId?: unknown } | undefined;
    expect(data?.sessionId === id, `-32002 without data.sessionId: ${JSON.stringify(err.data)}`);
    return `pids ${pids.join(", ")} gone, HTTP/SSE sessions ended; a prompt then gets -32002 with data.sessionId`;
  });
  await steps.run("session/load", async () => {
    await within(ctx.request("session/load", { sessionId: id, cwd: ROOT, mcpServers: servers.slice(0, 3) }), START_MS, "the session/load answer");
    const local = agent.pidsOf("local");
    expect(local.length === 2 && running(local[1]!), `the stdio server did not come back (pids logged: ${local.join(", ")})`);
    const t = await turn(main, "/tools");
    const text = textOf(t.updates);
    for (const s of ["local", "web", "legacy"]) expect(text.includes(`mcp__${s}__echo`), `after load /tools does not list mcp__${s}__echo`);
    const c = await turn(main, '/call mcp__legacy__echo {"text":"after load"}\n/call mcp__local__echo {"text":"after load"}');
    const calls = byCall(c.updates);
    expect(calls.length === 2 && calls.every((x) => sequence(x) === "pending>in_progress>completed"), `after load: ${calls.map(sequence).join(" / ")}`);
    return `stdio "local" back (pid ${local[1]}), http and sse reconnected; /tools lists them; 2 calls completed`;
  });
}

async function cancelStep(ctx: SdkClientContext, agent: AgentProcess, steps: Steps, fx: Fixtures, updatesOf: (id: string) => SessionUpdate[]): Promise<void> {
  await steps.run("cancel", async () => {
    const log = join(fx.dir, "hang-received.log");
    writeFileSync(log, "");
    const hang = await within(
      ctx.buildSession({ cwd: ROOT, mcpServers: [fixtureServer("hang", "faulty.ts", ["--hang-calls", "--log-received", log])] }).start(),
      START_MS,
      "the session/new answer (faulty server)",
    );
    try {
      const id = hang.sessionId;
      const answer = hang.prompt('/call mcp__hang__echo {"text":"never answered"}\nthis line is not reached');
      answer.catch(() => undefined);
      await eventually(() => updatesOf(id).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress"), 10_000, "the call to be in_progress");
      await eventually(() => readFileSync(log, "utf8").includes("tools/call echo"), 10_000, "the call to reach the server");
      await ctx.notify("session/cancel", { sessionId: id });
      const { stopReason } = await within(answer, 10_000, "the prompt to answer after session/cancel");
      expect(stopReason === "cancelled", `stopReason ${stopReason}, expected cancelled`);
      await eventually(() => /^notifications\/cancelled \S+$/m.test(readFileSync(log, "utf8")), 10_000, "notifications/cancelled at the server");
      const seen = /^notifications\/cancelled (\S+)$/m.exec(readFileSync(log, "utf8"))?.[1];
      const last = byCall(updatesOf(id)).at(-1)?.at(-1);
      const status = last !== undefined && "status" in last ? last.status : undefined;
      expect(status === "failed" || status === "completed", `the cancelled call was left ${String(status)}`);
      expect(!textOf(updatesOf(id)).includes("this line is not reached"), "the turn went on after session/cancel");
      const [pid] = agent.pidsOf("hang");
      expect(pid !== undefined, "no pid logged for the faulty server");
      await within(ctx.request("session/close", { sessionId: id }), STEP_MS, "the session/close answer");
      await eventually(() => !running(pid), 5_000, `the faulty server (pid ${pid}) to be gone`);
      return `stopReason cancelled; server got notifications/cancelled ${seen}; call ended ${status}; pid ${pid} gone after close`;
    } finally {
      hang.dispose();
    }
  });
}

function schemaStep(checker: AcpSchemaChecker, agent: AgentProcess, delivered: readonly SessionNotification[]): string {
  const problems = checkAgentMessages(checker, agent.received, agent.sent);
  const updates = agent.received.filter((l) => (l.value as { method?: unknown } | undefined)?.method === "session/update").length;
  if (updates !== delivered.length) problems.push(`the agent wrote ${updates} session/update notifications; the SDK delivered ${delivered.length}`);
  for (const v of checker.violations) problems.push(`${v.message} fails ${v.definition}: ${v.summary}`);
  const unsupported = checker.unknownKeywords().filter((u) => !u.harmless);
  for (const u of unsupported) problems.push(`unsupported keyword ${u.path}: ${u.why}`);
  const counts = [...checker.counts].map(([def, n]) => `${n} ${def}`).join(", ");
  expect(problems.length === 0, problems.join("\n"));
  expect(checker.counts.get("SessionNotification") !== undefined && checker.counts.get("RequestPermissionRequest") !== undefined, `too little was checked (${counts || "nothing"})`);
  return `${agent.received.length} messages valid: ${counts}; SDK delivered all ${updates} updates`;
}

/** Sends a prompt through the SDK session and reads its updates until the stop. */
async function turn(session: SdkActiveSession, text: string): Promise<{ stopReason: string; updates: SessionUpdate[] }> {
  const answer = session.prompt(text);
  answer.catch(() => undefined);
  const updates: SessionUpdate[] = [];
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const m = await within(session.nextUpdate(), Math.max(1, deadline - Date.now()), `the end of the turn ${JSON.stringify(clip(text, 60))}`);
    if (m.kind === "stop") return { stopReason: m.stopReason, updates };
    updates.push(m.update as SessionUpdate);
  }
}

/** The tool-call updates of a list, grouped by call, calls in order of appearance. */
function byCall(updates: readonly SessionUpdate[]): ToolCallLike[][] {
  const calls = new Map<string, ToolCallLike[]>();
  for (const u of updates) {
    if (u.sessionUpdate !== "tool_call" && u.sessionUpdate !== "tool_call_update") continue;
    calls.set(u.toolCallId, [...(calls.get(u.toolCallId) ?? []), u]);
  }
  return [...calls.values()];
}

function sequence(call: readonly ToolCallLike[] | undefined): string {
  return (call ?? []).map((u) => u.status ?? "-").join(">");
}

function textOf(updates: readonly SessionUpdate[]): string {
  return updates.map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "")).join("");
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
