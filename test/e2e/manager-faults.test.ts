/** McpManager against real misbehaving servers: crash and restart, hung calls, exit at start. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpManager } from "../../src/manager/manager.ts";
import { alive } from "./helpers.ts";
import { capture, fixtureConfig, nextState } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

test("a crash mid-call gives an error result, the server restarts, and the next call succeeds", async () => {
  const manager = new McpManager({ backoff: { baseMs: 50, capMs: 200 }, shutdownGraceMs: 500 });
  const pids: number[] = [];
  try {
    await manager.connect([fixtureConfig("f", "faulty.ts", ["--crash-after", "2"])]);
    const first = manager.status()[0]!;
    assert.equal(first.state, "ready");
    pids.push(first.pid!);
    assert.equal((await manager.callTool("mcp__f__echo", { text: "one" })).text, "one");

    const readyAgain = nextState(manager, (s) => s.to === "ready");
    const crashed = await manager.callTool("mcp__f__echo", { text: "two" });
    assert.equal(crashed.isError, true);
    assert.equal(crashed.failure?.kind, "crashed");
    assert.match(crashed.text, /exited \(exit code 1\) while running tool "echo"/);
    await readyAgain;

    const second = manager.status()[0]!;
    assert.equal(second.restarts, 1);
    assert.notEqual(second.pid, first.pid);
    pids.push(second.pid!);
    assert.match(second.lastError ?? "", /exited with code 1/);
    assert.equal(alive(first.pid), false, "the crashed process is gone");
    const third = await manager.callTool("mcp__f__echo", { text: "three" });
    assert.equal(third.isError, false);
    assert.equal(third.text, "three");
  } finally {
    await manager.close();
  }
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone after close`);
});

test("a hung call gives a timeout result and notifications/cancelled reaches the server", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpb-manager-"));
  const log = join(dir, "received.log");
  const manager = new McpManager({ shutdownGraceMs: 500 });
  let pid: number | undefined;
  try {
    await manager.connect([fixtureConfig("h", "faulty.ts", ["--hang-calls", "--log-received", log], { toolTimeout: 300 })]);
    pid = manager.status()[0]!.pid;
    const result = await manager.callTool("mcp__h__echo", { text: "never answered" });
    assert.equal(result.isError, true);
    assert.equal(result.failure?.kind, "timeout");
    assert.match(result.text, /timed out after 300 ms and was cancelled/);
    const lines = () => readFileSync(log, "utf8").split("\n").filter(Boolean);
    await until(() => lines().some((l) => l.startsWith("notifications/cancelled")), "the cancel notification");
    const calls = lines().filter((l) => l === "tools/call echo");
    assert.equal(calls.length, 1);
    assert.ok(lines().indexOf("tools/call echo") < lines().findIndex((l) => l.startsWith("notifications/cancelled")));
    assert.equal(manager.status()[0]!.state, "ready", "a hung call does not take the server down");
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(alive(pid), false);
});

test("a server that exits at start reaches failed after maxRestarts, with growing gaps between attempts", async () => {
  const manager = new McpManager({ backoff: { baseMs: 200, capMs: 10_000 }, shutdownGraceMs: 500 });
  const events = capture(manager);
  try {
    await manager.connect([fixtureConfig("x", "faulty.ts", ["--exit-at-start"], { maxRestarts: 3 })]);
    const report = await manager.ready(30_000);
    assert.deepEqual(report, { ready: [], failed: ["x"], pending: [] });
    const states = events.states;
    assert.deepEqual(
      states.map((s) => s.to),
      ["connecting", "restarting", "connecting", "restarting", "connecting", "restarting", "connecting", "failed"],
    );
    const restarting = states.filter((s) => s.to === "restarting");
    assert.deepEqual(restarting.map((s) => s.attempt), [1, 2, 3]);
    // The backoff as the event timestamps show it: from each `restarting` to the next `connecting`.
    const gaps = restarting.map((r) => states[states.indexOf(r) + 1]!.at - r.at);
    for (let i = 0; i < gaps.length; i++) {
      assert.ok(gaps[i]! >= restarting[i]!.delayMs! - 1, `gap ${gaps[i]} covers delay ${restarting[i]!.delayMs}`);
      if (i > 0) assert.ok(gaps[i]! > gaps[i - 1]!, `gaps grow: ${gaps.join(", ")}`);
    }
    const status = manager.status()[0]!;
    assert.equal(status.state, "failed");
    assert.equal(status.restarts, 3);
    assert.match(status.lastError ?? "", /exited with code 3/);
    assert.match(status.lastError ?? "", /exiting at start as asked/);
    const result = await manager.callTool("mcp__x__echo", {});
    assert.equal(result.failure?.kind, "unknown_tool", "a server that never listed tools has none to call");
    assert.equal(alive(status.pid), false);
  } finally {
    await manager.close();
  }
});
