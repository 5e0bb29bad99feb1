/**
 * The benchmark's child ledger, with real processes: survivors are killed and reported, the
 * dead are not, and a tracked process group takes its grandchildren with it.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { ChildLedger } from "../../scripts/bench/children.ts";
import { reap, waitGone } from "../e2e/helpers.ts";

/** A node child that sleeps for a minute, optionally leading its own process group. */
function sleeper(detached = false): ChildProcess {
  return spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore", detached });
}

test("reapLeftovers kills and reports the survivors, and skips the ones already gone", async () => {
  const ledger = new ChildLedger();
  const alive = sleeper();
  const dead = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await once(dead, "exit");
  ledger.track([alive.pid!, dead.pid!], false);
  ledger.track([alive.pid!], false);
  assert.equal(ledger.started, 2);
  const exited = once(alive, "exit");
  assert.deepEqual(ledger.reapLeftovers(), [alive.pid]);
  const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  assert.equal(signal, "SIGKILL");
  assert.deepEqual(ledger.reapLeftovers(), []);
});

test("a tracked group leader takes its grandchild with it", async () => {
  const ledger = new ChildLedger();
  // The leader prints the pid of a grandchild it started in the same group, then both sleep.
  const leader = spawn(
    process.execPath,
    ["-e", `const c = require("node:child_process").spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" }); console.log(c.pid); setTimeout(() => {}, 60_000);`],
    { stdio: ["ignore", "pipe", "ignore"], detached: true },
  );
  const [line] = (await once(leader.stdout!, "data")) as [Buffer];
  const grandchild = Number(String(line).trim());
  assert.ok(Number.isInteger(grandchild) && grandchild > 0, `grandchild pid: ${String(line)}`);
  try {
    ledger.track([leader.pid!], true);
    const exited = once(leader, "exit");
    assert.deepEqual(ledger.reapLeftovers(), [leader.pid]);
    await exited;
    assert.ok(await waitGone(grandchild), "the grandchild outlived its group's reaping");
  } finally {
    reap(grandchild);
    reap(leader.pid);
  }
});
