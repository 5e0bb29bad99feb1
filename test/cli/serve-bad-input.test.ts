/**
 * `mcp-bridge serve` against bad input from either side: a downstream that posts garbage or
 * goes away mid-call (over HTTP and over stdio), an upstream that writes junk to stdout.
 * Nothing may hang, and nothing may be left running.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { descendants, reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { configDir, fixtureEntry, httpClient, httpServe, isolatedConfig, pidOf, status, text } from "./serve-helpers.ts";

const dir = configDir();
after(() => dir.remove());

test("a downstream that posts garbage gets a JSON-RPC error and the gateway goes on serving", { timeout: 120_000 }, async () => {
  const { serve, base } = await httpServe(isolatedConfig(dir, "garbage.json"));
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
