/** The process guard's bookkeeping and its kill helpers (the signal path runs in test/e2e/manager-guard.test.ts). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { ensureGone, guardInstalled, guardProcess, guardedCount, killProcessTreeSync } from "../../src/manager/process-guard.ts";
import { alive } from "../e2e/helpers.ts";
import { ScriptedAgent } from "../../src/acp/agent.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { pair } from "../acp/helpers.ts";
import { until } from "../helpers/wait.ts";

const target = () => ({ killChildrenSync: () => {}, close: async () => {} });

test("handlers are installed once for any number of targets and removed with the last", () => {
  const before = { exit: process.listenerCount("exit"), int: process.listenerCount("SIGINT"), term: process.listenerCount("SIGTERM") };
  const releaseA = guardProcess(target());
  const releaseB = guardProcess(target());
  assert.equal(guardedCount(), 2);
  assert.equal(guardInstalled(), true);
  assert.equal(process.listenerCount("exit"), before.exit + 1);
  assert.equal(process.listenerCount("SIGINT"), before.int + 1);
  assert.equal(process.listenerCount("SIGTERM"), before.term + 1);
  releaseA();
  releaseA();
  assert.equal(guardedCount(), 1, "releasing twice counts once");
  assert.equal(process.listenerCount("SIGTERM"), before.term + 1);
  releaseB();
  assert.equal(guardInstalled(), false);
  assert.deepEqual(
    { exit: process.listenerCount("exit"), int: process.listenerCount("SIGINT"), term: process.listenerCount("SIGTERM") },
    before,
  );
});

test("killProcessTreeSync kills a process group leader and the member it spawned", async () => {
  // A detached leader that starts a grandchild in its group and prints its pid.
  const script = "const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});console.log(c.pid);setInterval(()=>{},1000)";
  const leader = spawn(process.execPath, ["-e", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  const [chunk] = (await once(leader.stdout!, "data")) as [Buffer];
  const grandchild = Number(String(chunk).trim());
  assert.ok(alive(leader.pid) && alive(grandchild));
  const exited = once(leader, "exit");
  killProcessTreeSync(leader.pid!);
  await exited;
  await until(() => !alive(grandchild), "the grandchild to be gone");
  assert.equal(alive(leader.pid), false);
});

test("ensureGone leaves a gone pid alone and kills a live one", async () => {
  const child = spawn(process.execPath, ["-e", "setInterval(()=>{},1000)"], { detached: true, stdio: "ignore" });
  await once(child, "spawn");
  const exited = once(child, "exit");
  assert.equal(ensureGone(child.pid!), true);
  await exited;
  assert.equal(ensureGone(child.pid!), false);
  assert.equal(alive(child.pid), false);
});

function listenerCounts() {
  return { exit: process.listenerCount("exit"), int: process.listenerCount("SIGINT"), term: process.listenerCount("SIGTERM") };
}

test("a manager installs no process handlers unless made with processGuard: true", async () => {
  const before = listenerCounts();
  const plain = new McpManager();
  assert.deepEqual({ counts: listenerCounts(), guarded: guardedCount() }, { counts: before, guarded: 0 });
  await plain.close();
  const guarded = new McpManager({ processGuard: true });
  assert.deepEqual({ counts: listenerCounts(), guarded: guardedCount() }, { counts: { exit: before.exit + 1, int: before.int + 1, term: before.term + 1 }, guarded: 1 });
  await guarded.close();
  assert.deepEqual({ counts: listenerCounts(), guarded: guardedCount() }, { counts: before, guarded: 0 });
});

test("the reference agent asks for the process guard for its sessions' managers", async () => {
  let agent!: ScriptedAgent;
  const p = await pair((c) => (agent = new ScriptedAgent(c, { globalConfigDir: false, workspaceConfig: false })));
  try {
    await agent.sessions.open("s1", { cwd: process.cwd(), mcpServers: [] });
    assert.equal(guardedCount(), 1);
    await agent.sessions.close("s1");
    assert.equal(guardedCount(), 0);
  } finally {
    await p.close();
  }
});
