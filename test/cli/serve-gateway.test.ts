/**
 * `mcp-bridge serve` as a gateway for several clients: per-client isolation proven by pids,
 * the caps, the legacy SSE endpoint, bearer tokens from `secret://`, the status resource,
 * audit lines, and bad input from either side. Every serve here is a real child process and
 * its upstreams real grandchildren; every test stops all of them.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { SseClientTransport } from "../../src/transport/sse-client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { alive, descendants, reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { run, runProcess } from "./helpers.ts";
import { configDir, fixtureEntry, spawnServe, text, type ServeChild } from "./serve-helpers.ts";

const dir = configDir();
after(() => dir.remove());

const LISTENING = /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/;

/** echo is per-client (the default), mirror shared. */
function isolatedConfig(name: string, serve: Record<string, unknown> = {}): string {
  return dir.write(name, {
    mcpServers: { echo: fixtureEntry("echo.ts"), mirror: { ...fixtureEntry("mirror.ts"), env: { MIRROR_TEXT: "shared mirror" } } },
    serve: { isolation: { mirror: "shared" }, ...serve },
  });
}

async function httpServe(config: string, extra: string[] = [], env?: NodeJS.ProcessEnv): Promise<{ serve: ServeChild; base: string }> {
  const serve = await spawnServe(["--config", config, "--http", "127.0.0.1:0", ...extra], LISTENING, env);
  return { serve, base: LISTENING.exec(serve.stderr())![1]! };
}

async function httpClient(base: string, headers?: Record<string, string>, openGetStream?: boolean): Promise<McpClient> {
  const client = new McpClient();
  await client.connect(new StreamableHttpClientTransport({ url: `${base}/mcp`, headers, openGetStream }));
  return client;
}

interface StatusDoc {
  session?: number;
  sessions: { open: number; max: number; opened: number; refused: number };
  upstreamConnections: { open: number; max: number };
  calls: { total: number; ok: number };
  upstreams: { name: string; isolation: string; state: string; pid?: number; lastError?: string }[];
}

async function status(client: McpClient): Promise<StatusDoc> {
  const read = await client.readResource("mcp-bridge://status");
  return JSON.parse((read.contents[0] as { text: string }).text) as StatusDoc;
}

function pidOf(doc: StatusDoc, upstream: string): number {
  const pid = doc.upstreams.find((u) => u.name === upstream)?.pid;
  assert.ok(pid !== undefined, JSON.stringify(doc));
  return pid;
}

test("each HTTP session gets its own per-client upstream, the shared one is one process, and a session's upstreams end with it", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig("isolated.json"));
  const a = await httpClient(base);
  const b = await httpClient(base);
  const seen: number[] = [];
  try {
    const [sa, sb] = [await status(a), await status(b)];
    const [echoA, echoB, mirror] = [pidOf(sa, "echo"), pidOf(sb, "echo"), pidOf(sa, "mirror")];
    seen.push(echoA, echoB, mirror);
    assert.notEqual(echoA, echoB, "two sessions share a per-client upstream");
    assert.equal(pidOf(sb, "mirror"), mirror, "the shared upstream runs once");
    assert.deepEqual(sb.sessions, { open: 2, max: 32, opened: 2, refused: 0 });
    assert.deepEqual(sb.upstreamConnections, { open: 3, max: 100 });
    assert.equal(text(await a.callTool("mcp__echo__echo", { text: "from a" })), "from a");
    assert.match(text(await b.callTool("mcp__mirror__mirror", {})), /shared mirror/);

    await a.close(); // DELETE: session a ends
    assert.equal(await waitGone(echoA), true, "a's upstream outlived its session");
    assert.ok(alive(echoB) && alive(mirror), "b's upstream or the shared one went with a");
    assert.equal(text(await b.callTool("mcp__echo__echo", { text: "b goes on" })), "b goes on");
    const after = await status(b);
    assert.equal(after.sessions.open, 1);
    assert.equal(after.calls.total, 3);
  } finally {
    await a.close();
    await b.close();
    assert.deepEqual(await serve.stop(seen), [0, null]);
  }
  assert.match(serve.stderr(), /session 1 ended; its upstream connections are closed/);
});

test("an idle session expires and its upstream processes stop", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig("idle.json", { sessionIdleMs: 1000 }));
  // No GET stream: an open one keeps a session alive, as a client still listening.
  const client = await httpClient(base, undefined, false);
  let echo = 0;
  try {
    echo = pidOf(await status(client), "echo");
    // Nothing is sent: the session's idle clock runs out and closes it, and its upstream.
    assert.equal(await waitGone(echo), true, "the idle session's upstream kept running");
    await serve.waitFor(/session 1 ended/);
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop([echo]), [0, null]);
  }
});

test("stateless-era clients are served from the shared pool only when every upstream is shared, and fall back to a session otherwise", { timeout: 120_000 }, async () => {
  const shared = dir.write("all-shared.json", { mcpServers: { echo: fixtureEntry("echo.ts") }, serve: { isolation: { echo: "shared" } } });
  const { serve, base } = await httpServe(shared);
  const modern = new McpClient({ era: "modern" });
  try {
    await modern.connect(new StreamableHttpClientTransport({ url: `${base}/mcp` }));
    assert.equal(text(await modern.callTool("mcp__echo__echo", { text: "stateless" })), "stateless");
    const doc = await status(modern);
    assert.equal(doc.session, undefined);
    assert.equal(doc.sessions.opened, 0, "a stateless request opened a session");
  } finally {
    await modern.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
  // With a per-client upstream, the stateless era is refused: a modern-only client cannot
  // connect, a dual-era one (the default) falls back to a session and gets its own upstream.
  const isolated = await httpServe(isolatedConfig("stateless-refused.json"));
  const refused = new McpClient({ era: "modern" });
  const dual = new McpClient();
  try {
    await assert.rejects(refused.connect(new StreamableHttpClientTransport({ url: `${isolated.base}/mcp` })));
    await dual.connect(new StreamableHttpClientTransport({ url: `${isolated.base}/mcp` }));
    assert.equal((await status(dual)).session, 1);
  } finally {
    await refused.close();
    await dual.close();
    assert.deepEqual(await isolated.serve.stop(), [0, null]);
  }
});

test("the session cap answers 503 naming maxSessions, and a slot freed is taken again", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig("capped.json"), ["--max-sessions", "1"]);
  const first = await httpClient(base);
  let second: McpClient | undefined;
  try {
    await assert.rejects(httpClient(base), /at most 1 downstream sessions at once \(maxSessions\)/);
    // The raw answer: 503, a JSON-RPC error, a Retry-After.
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "5");
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /maxSessions/);
    assert.equal((await status(first)).sessions.refused, 2);
    await first.close();
    // The slot is free once the first session's upstreams have stopped: retry as the 503 says.
    for (let i = 0; i < 100 && second === undefined; i++) {
      second = await httpClient(base).catch(async (err: Error) => {
        assert.match(err.message, /maxSessions/);
        await new Promise((r) => setTimeout(r, 50));
        return undefined;
      });
    }
    assert.ok(second !== undefined, "the slot was never freed");
    assert.equal(text(await second.callTool("mcp__echo__echo", { text: "my turn" })), "my turn");
  } finally {
    await first.close();
    await second?.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("the upstream connection cap refuses a session that would exceed it, naming maxUpstreamConnections", { timeout: 120_000 }, async () => {
  // mirror (shared) holds one connection, each session's echo one more: 2 allow one session.
  const { serve, base } = await httpServe(isolatedConfig("upstream-cap.json"), ["--max-upstreams", "2"]);
  const first = await httpClient(base);
  try {
    await assert.rejects(httpClient(base), /needs 1 upstream connection\(s\) and 2 of at most 2 are open \(maxUpstreamConnections\)/);
  } finally {
    await first.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("--sse serves the legacy HTTP+SSE endpoint beside Streamable HTTP, each stream a session of its own", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig("sse.json"), ["--sse"]);
  assert.match(serve.stderr(), /and http:\/\/127\.0\.0\.1:\d+\/sse \(legacy SSE\)/);
  const legacy = new McpClient();
  const modern = await httpClient(base);
  let echo = 0;
  try {
    await legacy.connect(new SseClientTransport({ url: `${base}/sse` }));
    assert.equal(text(await legacy.callTool("mcp__echo__echo", { text: "over sse" })), "over sse");
    echo = pidOf(await status(legacy), "echo");
    assert.notEqual(echo, pidOf(await status(modern), "echo"));
    await legacy.close(); // the stream ends: so does the session
    assert.equal(await waitGone(echo), true, "the SSE session's upstream outlived its stream");
    assert.equal(text(await modern.callTool("mcp__echo__echo", { text: "still here" })), "still here");
  } finally {
    await legacy.close();
    await modern.close();
    assert.deepEqual(await serve.stop([echo]), [0, null]);
  }
});

test("bearer tokens from secret:// admit only their holders, and the token is never shown downstream or in logs", { timeout: 120_000 }, async () => {
  const token = "gw-token-5f1c9a7e2b";
  const config = isolatedConfig("tokens.json", { bearerTokens: ["secret://env/SERVE_TEST_TOKEN"] });
  const { serve, base } = await httpServe(config, ["--audit", "-"], { SERVE_TEST_TOKEN: token });
  const client = await httpClient(base, { authorization: `Bearer ${token}` });
  try {
    await assert.rejects(httpClient(base), /401/);
    await assert.rejects(httpClient(base, { authorization: "Bearer wrong" }), /401/);
    // A browser page of another origin is refused before the token is even looked at.
    const res = await fetch(`${base}/mcp`, { method: "POST", headers: { origin: "http://evil.example", authorization: `Bearer ${token}`, "content-type": "application/json" }, body: "{}" });
    assert.equal(res.status, 403);
    // The token as a tool argument: redacted in the audit line, absent from status.
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "hi" })), "hi");
    await client.callTool("mcp__echo__echo", { text: token });
    const doc = JSON.stringify(await status(client));
    assert.ok(!doc.includes(token), doc);
    await serve.waitFor(/"outcome":"ok".*\n.*"outcome":"ok"/);
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
  assert.ok(!serve.stderr().includes(token), serve.stderr());
  assert.match(serve.stderr(), /\{"type":"audit".*"name":"mcp__echo__echo".*"outcome":"ok"/);
});

test("an unresolvable bearer token reference stops serve before it starts, naming the reference only", { timeout: 60_000 }, async () => {
  const config = isolatedConfig("unresolved.json", { bearerTokens: ["secret://env/SERVE_TEST_NO_SUCH_VAR"] });
  const r = await run(["serve", "--config", config, "--http", "127.0.0.1:0"]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /serve\.bearerTokens: secret:\/\/env\/SERVE_TEST_NO_SUCH_VAR is not set; nothing was started/);
});

test("--audit <file> appends one JSON line per call; status counts them", { timeout: 120_000 }, async () => {
  const auditFile = join(dir.path, "audit.jsonl");
  const { serve, base } = await httpServe(isolatedConfig("audit.json"), ["--audit", auditFile]);
  const client = await httpClient(base);
  try {
    await client.callTool("mcp__echo__echo", { text: "audited" });
    await client.callTool("mcp__echo__fail", {});
    const doc = await status(client);
    assert.equal(doc.calls.total, 2);
    assert.equal(doc.calls.ok, 1);
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
  const lines = readFileSync(auditFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { type: string; name: string; outcome: string });
  assert.deepEqual(lines.map((l) => [l.type, l.name, l.outcome]), [
    ["audit", "mcp__echo__echo", "ok"],
    ["audit", "mcp__echo__fail", "tool_error"],
  ]);
});

test("a downstream that posts garbage gets a JSON-RPC error and the gateway goes on serving", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig("garbage.json"));
  const client = await httpClient(base);
  try {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body });
    const junk = await post("{not json");
    assert.equal(junk.status, 400);
    assert.equal(((await junk.json()) as { error: { code: number } }).error.code, -32700);
    const shapeless = await post(JSON.stringify({ hello: "world" }));
    assert.equal(shapeless.status, 400);
    const unknown = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { "mcp-session-id": "no-such-session" });
    assert.equal(unknown.status, 404);
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "unharmed" })), "unharmed");
    assert.equal((await status(client)).sessions.open, 1, "garbage opened a session");
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("a downstream that goes away mid-call takes its upstream call and process with it; the others go on", { timeout: 120_000 }, async () => {
  const log = join(dir.path, "received.log");
  const sharedLog = join(dir.path, "shared-received.log");
  const config = dir.write("midcall.json", {
    mcpServers: {
      hang: fixtureEntry("faulty.ts", ["--hang-calls", "--log-received", log]),
      sharedhang: fixtureEntry("faulty.ts", ["--hang-calls", "--log-received", sharedLog]),
      echo: fixtureEntry("echo.ts"),
    },
    serve: { isolation: { echo: "shared", sharedhang: "shared" } },
  });
  const { serve, base } = await httpServe(config);
  const leaving = await httpClient(base);
  const staying = await httpClient(base);
  let hang = 0;
  try {
    hang = pidOf(await status(leaving), "hang");
    const call = leaving.callTool("mcp__hang__echo", { text: "never answered" });
    const sharedCall = leaving.callTool("mcp__sharedhang__echo", { text: "never answered either" });
    call.catch(() => undefined);
    sharedCall.catch(() => undefined);
    // Wait until both upstreams have the call, then end the session under them.
    const received = () => readLog(log).includes("tools/call echo") && readLog(sharedLog).includes("tools/call echo");
    for (let i = 0; i < 200 && !received(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(received(), `${readLog(log)}\n${readLog(sharedLog)}`);
    await leaving.close();
    await assert.rejects(call);
    await assert.rejects(sharedCall);
    // Its own upstream stops; the shared one, which goes on serving others, is told to cancel.
    assert.equal(await waitGone(hang), true, "the upstream of the session that left is still running");
    for (let i = 0; i < 200 && !readLog(sharedLog).includes("notifications/cancelled"); i++) await new Promise((r) => setTimeout(r, 25));
    assert.match(readLog(sharedLog), /notifications\/cancelled/);
    assert.equal(text(await staying.callTool("mcp__echo__echo", { text: "unaffected" })), "unaffected");
  } finally {
    await leaving.close();
    await staying.close();
    assert.deepEqual(await serve.stop([hang]), [0, null]);
  }
});

test("a stdio downstream that goes away mid-call ends serve and its upstreams, nothing left running", { timeout: 120_000 }, async () => {
  const log = join(dir.path, "stdio-received.log");
  const config = dir.write("stdio-midcall.json", { mcpServers: { hang: fixtureEntry("faulty.ts", ["--hang-calls", "--log-received", log]) } });
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["serve", "--config", config, "--stdio"]);
  const transport = new StdioClientTransport({ ...cli, cwd: ROOT, shutdownGraceMs: 5_000 });
  const client = new McpClient({ era: "legacy" });
  await client.connect(transport);
  const serve = transport.pid!;
  const below = descendants(serve);
  try {
    assert.ok(below.length >= 1, "no upstream below serve");
    const call = client.callTool("mcp__hang__echo", { text: "never answered" });
    call.catch(() => undefined);
    for (let i = 0; i < 200 && !readLog(log).includes("tools/call echo"); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(readLog(log).includes("tools/call echo"), readLog(log));
    await client.close(); // stdin ends under the call
    await assert.rejects(call);
    for (const pid of [serve, ...below]) assert.equal(await waitGone(pid), true, `process ${pid} outlived the downstream`);
  } finally {
    for (const pid of [serve, ...below]) reap(pid);
  }
});

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

test("an upstream that writes junk to stdout is still served, and so are the others", { timeout: 120_000 }, async () => {
  const config = dir.write("junk.json", { mcpServers: { junk: fixtureEntry("faulty.ts", ["--junk"]), echo: fixtureEntry("echo.ts") } });
  const { serve, base } = await httpServe(config);
  const client = await httpClient(base);
  try {
    assert.equal(text(await client.callTool("mcp__junk__echo", { text: "through the junk" })), "through the junk");
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "clean" })), "clean");
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("caps from the command line that cannot hold the shared upstreams stop serve before it spawns anything (exit 3)", { timeout: 60_000 }, () => {
  const config = dir.write("two-shared.json", {
    mcpServers: { one: fixtureEntry("echo.ts"), two: fixtureEntry("echo.ts") },
    serve: { isolation: { one: "shared", two: "shared" } },
  });
  const r = runProcess(["serve", "--config", config, "--stdio", "--max-upstreams", "1"]);
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /2 shared upstreams exceed maxUpstreamConnections \(1\); stopping/);
  assert.match(r.err, /stopped; every upstream is closed/);
});

test("serve --check accepts the README's gateway config with its serve section", async () => {
  const r = await run(["serve", "--check", "--config", join(ROOT, "fixtures", "gateway", "isolated.json")]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /ok, 2 upstream\(s\): echo, mirror$/);
});

test("serve --check reports every problem of the serve section at once", async () => {
  const config = dir.write("bad-serve.json", {
    mcpServers: { echo: fixtureEntry("echo.ts") },
    serve: {
      isolation: { echo: "sometimes", ghost: "shared" },
      maxSessions: 0,
      maxUpstreamConnections: "many",
      bearerTokens: ["plain-token-value", "Bearer secret://env/X"],
      colour: "blue",
    },
  });
  const r = await run(["serve", "--check", "--config", config]);
  assert.equal(r.code, 2, r.out);
  for (const expected of [
    /\[error\] .*#\/serve\/isolation\/echo: unknown isolation "sometimes" \(expected per-client, shared\)/,
    /\[error\] .*#\/serve\/isolation\/ghost: no enabled upstream is named "ghost"/,
    /\[error\] .*#\/serve\/maxSessions: must be at least 1/,
    /\[error\] .*#\/serve\/maxUpstreamConnections: must be a whole number/,
    /\[warning\] .*#\/serve\/bearerTokens\/0: a bearer token written as plaintext/,
    /\[error\] .*#\/serve\/bearerTokens\/1: a token is the whole value/,
    /\[warning\] .*#\/serve\/colour: unknown key "colour"/,
  ]) {
    assert.match(r.out, expected);
  }
  assert.ok(!r.out.includes("plain-token-value"), r.out);
});
