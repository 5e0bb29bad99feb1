/** McpManager with many real servers: parallel connect past a hung one, 1000+ tools, no child left after close. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { McpManager } from "../../src/manager/manager.ts";
import { alive } from "./helpers.ts";
import { fixtureConfig } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

test("ten servers connect in parallel; one that never answers costs its own timeout, not the others'", async () => {
  const hangTimeout = 3_000;
  const configs = Array.from({ length: 9 }, (_, i) => fixtureConfig(`s${i}`, "faulty.ts"));
  configs.splice(4, 0, fixtureConfig("hung", "faulty.ts", ["--never-reply"], { timeout: hangTimeout, maxRestarts: 0 }));
  const manager = new McpManager({ shutdownGraceMs: 500 });
  let pids: (number | undefined)[] = [];
  try {
    const started = Date.now();
    const status = await manager.connect(configs);
    const elapsed = Date.now() - started;
    // The bound is the behaviour under test here: connect waits for the hung server's own timeout, no longer.
    assert.ok(elapsed < hangTimeout + 5_000, `connect returned after ${elapsed} ms`);
    pids = status.map((s) => s.pid);
    assert.equal(status.length, 10);
    assert.deepEqual(status.filter((s) => s.state !== "ready").map((s) => [s.name, s.state]), [["hung", "failed"]]);
    assert.match(status.find((s) => s.name === "hung")!.lastError ?? "", /did not become ready within 3000 ms/);
    const tools = await manager.tools();
    assert.equal(tools.length, 18, "two tools for each ready server");
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => manager.callTool(`mcp__s${i}__echo`, { text: `hi ${i}` })));
    assert.deepEqual(results.map((r) => r.text), Array.from({ length: 9 }, (_, i) => `hi ${i}`));
  } finally {
    await manager.close();
  }
  assert.equal(pids.length, 10);
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
});

test("more than 1000 tools across three servers: unique names that lead back to their server and tool", async () => {
  const manager = new McpManager({ maxTools: 5_000, shutdownGraceMs: 500 });
  try {
    const configs = ["one", "two", "three"].map((name) => fixtureConfig(name, "faulty.ts", ["--tools", "400"]));
    await manager.connect(configs);
    const tools = await manager.tools();
    assert.equal(tools.length, 3 * 402);
    const names = new Set(tools.map((t) => t.name));
    assert.equal(names.size, tools.length, "names are unique");
    assert.ok(tools.every((t) => /^[A-Za-z0-9_-]{1,64}$/.test(t.name)));
    const pairs = new Set(tools.map((t) => `${t.server}/${t.originalName}`));
    assert.equal(pairs.size, tools.length, "each name stands for one server's tool");
    // Reversible: calling by bridged name reaches the right server with the original tool name.
    for (const t of tools.filter((x) => x.originalName === "tool_399" || x.originalName === "echo")) {
      const r = await manager.callTool(t.name, { text: t.server });
      if (t.originalName === "echo") assert.equal(r.text, t.server);
      else assert.equal(r.text, "unknown tool: tool_399", "faulty answers its extra tools by name");
    }
  } finally {
    await manager.close();
  }
});

test("close() kills a server that ignores stdin EOF and SIGTERM, and the grandchild in its group", async () => {
  const manager = new McpManager({ shutdownGraceMs: 300 });
  const stderr: string[] = [];
  manager.on("log", (l) => l.source === "stderr" && stderr.push(l.message));
  await manager.connect([
    fixtureConfig("stubborn", "faulty.ts", ["--ignore-stdin-eof", "--spawn-grandchild"]),
    fixtureConfig("plain", "faulty.ts"),
  ]);
  const pids = manager.status().map((s) => s.pid);
  await until(() => stderr.some((l) => l.startsWith("grandchild-pid=")), "the grandchild's pid");
  const grandchild = Number(stderr.find((l) => l.startsWith("grandchild-pid="))!.split("=")[1]);
  assert.ok(alive(grandchild));
  await manager.close();
  assert.deepEqual(manager.status().map((s) => s.state), ["closed", "closed"]);
  for (const pid of [...pids, grandchild]) assert.equal(alive(pid), false, `pid ${pid} is gone`);
});
