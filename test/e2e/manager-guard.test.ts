/** The process guard: no server (or its grandchild) outlives a parent that gets SIGTERM/SIGINT or exits. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { alive, reap, ROOT } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

const CHILD = join(ROOT, "test", "e2e", "manager-guard-child.ts");

async function runParent(mode: "wait" | "exit") {
  const { command, args } = nodeModuleCommand(CHILD, [mode]);
  const parent = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  parent.stderr.on("data", (c: Buffer) => (stderr += String(c)));
  const exited = once(parent, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  let out = "";
  for await (const chunk of parent.stdout) {
    out += String(chunk);
    if (out.includes("\n")) break;
  }
  const line = out.split("\n")[0] ?? "";
  assert.match(line, /^\{"pid":\d+,"grandchild":\d+\}$/, `parent printed ${JSON.stringify(out)}; stderr: ${stderr}`);
  const pids = JSON.parse(line) as { pid: number; grandchild: number };
  return { parent, exited, pids, stderr: () => stderr };
}

async function gone(pids: number[]): Promise<void> {
  // The kill is synchronous; a zombie's reaping by init may lag a little.
  await until(() => pids.every((p) => !alive(p)), `processes ${pids.join(", ")} to be gone`);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal}: the parent closes its servers, then dies of the signal as it would have`, async () => {
    const { parent, exited, pids } = await runParent("wait");
    try {
      assert.ok(alive(pids.pid) && alive(pids.grandchild));
      parent.kill(signal);
      const [code, got] = await exited;
      assert.deepEqual([code, got], [null, signal], "the signal was re-raised after the cleanup");
      await gone([pids.pid, pids.grandchild]);
      assert.equal(alive(pids.pid), false, "the server is gone");
      assert.equal(alive(pids.grandchild), false, "its grandchild is gone");
    } finally {
      reap(parent.pid);
      reap(pids.pid);
      reap(pids.grandchild);
    }
  });
}

test("process.exit without close(): the exit handler kills the server's whole process group", async () => {
  const { parent, exited, pids } = await runParent("exit");
  try {
    const [code] = await exited;
    assert.equal(code, 0);
    await gone([pids.pid, pids.grandchild]);
    assert.equal(alive(pids.pid), false);
    assert.equal(alive(pids.grandchild), false);
  } finally {
    reap(parent.pid);
    reap(pids.pid);
    reap(pids.grandchild);
  }
});
