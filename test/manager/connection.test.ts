/** ServerConnection over in-process servers: states, crashes, restarts, health, list_changed, cache. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { withDefaults } from "../../src/config/parse-common.ts";
import { SecretResolvers } from "../../src/config/secrets.ts";
import { ServerConnection, type ConnectionOptions } from "../../src/manager/connection.ts";
import type { StateChange } from "../../src/manager/events.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { Redactor } from "../../src/security/redact.ts";
import { echoServer, memConfig, memoryServers, waitForState, type Faults } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

const fast = { backoff: { baseMs: 10, capMs: 100 } };

function connection(
  config = memConfig("a"),
  extra: Partial<ConnectionOptions> = {},
  build: (name: string, attempt: number) => McpServer = () => echoServer(),
  faults: Faults = {},
) {
  const servers = memoryServers(build, faults);
  const conn = new ServerConnection(withDefaults(config), { redactor: new Redactor(), transportFactory: servers.factory, ...fast, ...extra });
  const states: StateChange[] = [];
  conn.on("state", (s) => states.push(s));
  return { conn, servers, states };
}

test("connects: connecting then ready, with the tool list and negotiated version", async () => {
  const { conn, states } = connection();
  await conn.start();
  assert.equal(conn.state, "ready");
  assert.deepEqual(states.map((s) => [s.from, s.to]), [[undefined, "connecting"], ["connecting", "ready"]]);
  assert.ok(states.every((s) => typeof s.at === "number" && s.server === "a"));
  assert.deepEqual(conn.tools?.map((t) => t.name), ["echo"]);
  assert.equal(typeof conn.protocolVersion, "string");
  const result = await conn.callTool("echo", { text: "hi" });
  assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
  await conn.close();
  assert.equal(conn.state, "closed");
});

test("a crash fails the pending call at once, then the server restarts and rediscovers its tools", async () => {
  let hold: (() => void) | undefined;
  const build = (_: string, attempt: number) => {
    const server = echoServer(attempt === 0 ? [] : ["added_after_restart"]);
    server.tool({ name: "block", inputSchema: { type: "object" } }, () => new Promise((r) => (hold = () => r({ content: [] }))));
    return server;
  };
  const { conn, servers, states } = connection(memConfig("a"), {}, build);
  await conn.start();
  const pending = conn.callTool("block", {});
  await until(() => hold !== undefined, "the call to arrive");
  const ready = waitForState(conn, (s) => s.to === "ready");
  await servers.latest("a").crash();
  await assert.rejects(pending, { name: "BridgeError", code: "CLOSED" });
  await ready;
  assert.equal(conn.restarts, 1);
  assert.deepEqual(states.map((s) => s.to), ["connecting", "ready", "restarting", "connecting", "ready"]);
  const restarting = states.find((s) => s.to === "restarting")!;
  assert.equal(restarting.attempt, 1);
  assert.ok(typeof restarting.delayMs === "number" && restarting.delayMs <= 10);
  assert.ok(conn.tools?.some((t) => t.name === "added_after_restart"), "tools rediscovered after the restart");
  await conn.close();
});

test("calls during a restart are refused with NOT_CONNECTED; restartOnCrash false ends in failed", async () => {
  const { conn, servers } = connection(memConfig("a", { restartOnCrash: false }));
  await conn.start();
  const failed = waitForState(conn, (s) => s.to === "failed");
  await servers.latest("a").crash();
  await failed;
  await assert.rejects(conn.callTool("echo", {}), { name: "BridgeError", code: "NOT_CONNECTED" });
  assert.match(conn.lastError ?? "", /closed/);
  await conn.close();
});

test("maxRestarts bounds the restarts in a row; the delays grow", async () => {
  let attempts = 0;
  const build = () => {
    attempts++;
    return echoServer();
  };
  const { conn, states } = connection(memConfig("a", { maxRestarts: 3 }), { backoff: { baseMs: 5, capMs: 1000, jitter: 0 } }, build, {
    exitAtStart: () => true,
  });
  await conn.start();
  await conn.whenSettled();
  assert.equal(conn.state, "failed");
  assert.equal(attempts, 4, "one start and three restarts");
  assert.equal(conn.restarts, 3);
  const delays = states.filter((s) => s.to === "restarting").map((s) => s.delayMs);
  assert.deepEqual(delays, [5, 10, 20]);
  await conn.close();
});

test("configuration errors fail at once without restarts and name the secret reference", async () => {
  const config = memConfig("a", { headers: { Authorization: "Bearer secret://env/MISSING_TOKEN" } });
  const { conn, states } = connection(config, { secretResolvers: new SecretResolvers({ env: {} }) });
  await conn.start();
  assert.equal(conn.state, "failed");
  assert.equal(conn.restarts, 0);
  assert.match(conn.lastError ?? "", /secret:\/\/env\/MISSING_TOKEN/);
  assert.deepEqual(states.map((s) => s.to), ["connecting", "failed"]);
  await conn.close();
});

test("a server that hangs in the handshake times out, and a retry is scheduled", async () => {
  const { conn } = connection(memConfig("a", { timeout: 200, maxRestarts: 1 }), {}, () => echoServer(), { mute: () => true });
  await conn.start();
  assert.equal(conn.state, "restarting");
  assert.match(conn.lastError ?? "", /did not become ready within 200 ms/);
  await conn.whenSettled();
  assert.equal(conn.state, "failed");
  await conn.close();
});

test("repeated failed pings restart the server", async (t) => {
  // Timers are mocked: a ping goes out and times out when the test moves time, so a slow machine
  // cannot make a healthy ping late. Waits poll with setImmediate, which stays real.
  t.mock.timers.enable({ apis: ["setInterval", "setTimeout"] });
  const { conn, servers, states } = connection(memConfig("a"), { health: { intervalMs: 20, timeoutMs: 50, failures: 2 } });
  const warnings: string[] = [];
  conn.on("warning", (w) => warnings.push(w.kind));
  await conn.start();
  servers.latest("a").muted = true;
  t.mock.timers.tick(20); // the next ping goes out, unanswered
  t.mock.timers.tick(50); // and times out
  await until(() => warnings.length === 1, "the first failed health check", { spin: true });
  t.mock.timers.tick(20);
  t.mock.timers.tick(50);
  await until(() => states.some((s) => s.to === "restarting"), "the restart after two failed checks", { spin: true });
  assert.match(states.find((s) => s.to === "restarting")!.error ?? "", /failed 2 health checks in a row/);
  assert.deepEqual(warnings, ["health", "health"]);
  t.mock.timers.tick(100); // the restart's backoff (capped at 100 ms)
  await until(() => conn.state === "ready", "the server to be ready again", { spin: true });
  assert.equal(servers.processes.get("a")!.length, 2);
  t.mock.timers.reset();
  await conn.close();
});

test("tools/list_changed refreshes the list (debounced) and emits toolsChanged", async (t) => {
  const { conn, servers } = connection(memConfig("a"), { listChangedDebounceMs: 30 });
  let changes = 0;
  conn.on("toolsChanged", () => changes++);
  await conn.start();
  assert.equal(changes, 1, "the first list counts as a change");
  // The debounce runs on a mocked clock from here, so both changes fall within it however slow
  // the machine.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const server = servers.latest("a").server;
  const listsRead = () => servers.latest("a").received.filter((m) => "method" in m && m.method === "tools/list").length;
  const before = listsRead();
  server.tool({ name: "one", inputSchema: { type: "object" } }, () => ({ content: [] }));
  server.tool({ name: "two", inputSchema: { type: "object" } }, () => ({ content: [] }));
  // Both notifications arrive in the same turn (the in-memory link delivers in microtasks); each
  // poll after that moves time past the debounce.
  await until(() => changes === 2 || (t.mock.timers.tick(30), false), "toolsChanged", { spin: true });
  t.mock.timers.reset();
  assert.deepEqual(conn.tools?.map((t) => t.name).sort(), ["echo", "one", "two"]);
  assert.equal(listsRead() - before, 1, "two registrations, one debounced re-read");
  await conn.close();
});

test("the tool cache answers within its TTL and re-reads after it", async () => {
  let clock = 1_000_000;
  const { conn, servers } = connection(memConfig("a"), { toolCacheTtlMs: 50, now: () => clock });
  await conn.start();
  const lists = () => servers.latest("a").received.filter((m) => "method" in m && m.method === "tools/list").length;
  assert.equal(lists(), 1);
  clock += 49;
  await conn.refreshTools();
  assert.equal(lists(), 1, "fresh: answered from the cache");
  const before = conn.tools;
  clock += 1;
  await conn.refreshTools();
  assert.equal(lists(), 2, "expired: read again");
  assert.equal(conn.tools, before, "an unchanged list keeps its identity");
  await conn.close();
});

test("stderr-free log notifications arrive as log events, redacted", async () => {
  const redactor = new Redactor();
  redactor.addSecret("hunter2-secret");
  const build = () => {
    const server = echoServer();
    server.tool({ name: "say", inputSchema: { type: "object" } }, async (_args, ctx) => {
      await ctx.log("warning", "the password is hunter2-secret", "auth");
      return { content: [] };
    });
    return server;
  };
  const { conn } = connection(memConfig("a"), { redactor }, build);
  const logs: string[] = [];
  conn.on("log", (l) => logs.push(`${l.source}:${l.level}:${l.message}`));
  await conn.start();
  await conn.callTool("say", {});
  await until(() => logs.length > 0, "a log event");
  assert.deepEqual(logs, ["server:warning:the password is [REDACTED]"]);
  await conn.close();
});

test("a server that stayed ready for stableAfterMs gets a fresh restart budget", async () => {
  const crashTwice = async (stableAfterMs: number) => {
    const { conn, servers } = connection(memConfig("a", { maxRestarts: 1 }), { stableAfterMs });
    await conn.start();
    const ready = waitForState(conn, (s) => s.to === "ready");
    await servers.latest("a").crash();
    await ready;
    const next = waitForState(conn, (s) => s.to === "ready" || s.to === "failed");
    await servers.latest("a").crash();
    const outcome = (await next).to;
    await conn.close();
    return { outcome, restarts: conn.restarts };
  };
  assert.deepEqual(await crashTwice(60_000), { outcome: "failed", restarts: 1 });
  assert.deepEqual(await crashTwice(0), { outcome: "ready", restarts: 2 });
});
