/**
 * `mcp-bridge inspect ... | head -1`: the reader of stdout goes away after one line. The CLI
 * must end quietly (no EPIPE stack trace) and stop its server's whole process group, the
 * server's own child included, which exiting alone leaves running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { descendants, fixture, reap, ROOT, waitGone } from "../e2e/helpers.ts";

test("inspect whose reader leaves after the first line exits 0 without a stack trace and leaves no process behind", { timeout: 60_000 }, async () => {
  // 9000 tools make ~250 KB of output: far more than a pipe holds plus one read of it, so
  // writes are still going when the reader leaves. The server ignores stdin's end and SIGTERM,
  // as a wrapper with a live child does, so only the whole shutdown (grace, SIGTERM, SIGKILL of
  // the group) stops it: the CLI must not exit before that is done.
  const server = fixture("faulty.ts", ["--tools", "9000", "--spawn-grandchild", "--ignore-stdin-eof"]);
  const main = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["inspect", "--", server.command, ...server.args!]);
  const cli = spawn(main.command, main.args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => cli.on("exit", (code, signal) => resolve([code, signal])));
  let stderr = "";
  cli.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  let below: number[] = [];
  try {
    const firstLine = await new Promise<string>((resolve, reject) => {
      let out = "";
      cli.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const end = out.indexOf("\n");
        if (end === -1) return;
        // The server and its grandchild, while they certainly run; then the reader leaves.
        below = descendants(cli.pid!);
        cli.stdout.destroy();
        resolve(out.slice(0, end));
      });
      cli.on("exit", () => reject(new Error(`the CLI exited before printing a line: ${stderr}`)));
    });
    assert.match(firstLine, /^server\s+faulty/);
    // At least the server and the grandchild it started; tsx may add its esbuild service
    // process under the CLI, which must be gone at the end as well.
    assert.ok(below.length >= 2, `expected the server and its grandchild below the CLI, found ${below.length}`);
    assert.deepEqual(await exited, [0, null]);
    assert.equal(stderr, "", "nothing on stderr: no EPIPE stack trace");
    for (const pid of below) assert.equal(await waitGone(pid), true, `process ${pid} outlived the CLI`);
  } finally {
    for (const pid of [cli.pid, ...below]) reap(pid);
  }
});
