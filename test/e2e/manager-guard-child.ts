/**
 * Run by manager-guard.test.ts: starts a manager with one stdio server (which starts a
 * grandchild and ignores stdin EOF and SIGTERM), prints `{"pid":..,"grandchild":..}` and then
 * either waits to be signalled (`wait`) or exits at once without closing anything (`exit`).
 */
import { McpManager } from "../../src/manager/manager.ts";
import { fixtureConfig } from "./manager-helpers.ts";

const mode = process.argv[2] ?? "wait";
const manager = new McpManager({ shutdownGraceMs: 300, processGuard: true });
let grandchild: number | undefined;
manager.on("log", (l) => {
  const m = /^grandchild-pid=(\d+)$/.exec(l.message);
  if (m !== null) grandchild = Number(m[1]);
});
await manager.connect([fixtureConfig("guarded", "faulty.ts", ["--spawn-grandchild", "--ignore-stdin-eof"])]);
while (grandchild === undefined) await new Promise((r) => setTimeout(r, 10));
process.stdout.write(`${JSON.stringify({ pid: manager.status()[0]!.pid, grandchild })}\n`);
if (mode === "exit") process.exit(0);
setInterval(() => {}, 1000);
