/**
 * How this Node runs a module of ours as a program: `.ts` with nothing installed where Node
 * strips types (22.18+), through tsx only where it cannot (Node 20); `.js` always plain.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { loaderArgs, nodeCommand, nodeModuleCommand, stripsTypes } from "../../src/util/node-command.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-node-command-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What a child started by `nodeModuleCommand` prints: its Node options and what it computed. */
function runModule(file: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const { command, args: argv } = nodeModuleCommand(file, args);
  const r = spawnSync(command, argv, { cwd: dir, encoding: "utf8", timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("a .ts module runs with this Node, with the tsx loader only where Node cannot strip types", () => {
  const file = join(dir, "typed.ts");
  writeFileSync(file, 'const sum: number = 1 + 2;\nconsole.log(JSON.stringify({ sum, argv: process.argv.slice(2), execArgv: process.execArgv }));\n');
  const r = runModule(file, ["--flag", "x"]);
  assert.deepEqual(r, {
    status: 0,
    stdout: `${JSON.stringify({ sum: 3, argv: ["--flag", "x"], execArgv: stripsTypes() ? [] : ["--import", import.meta.resolve("tsx")] })}\n`,
    stderr: "",
  });
});

test("JavaScript needs no loader on any Node", () => {
  assert.deepEqual(loaderArgs("/pkg/dist/src/cli/main.js"), []);
  assert.deepEqual(nodeModuleCommand("/pkg/server.mjs", ["a"]), { command: process.execPath, args: ["/pkg/server.mjs", "a"] });
});

test("nodeCommand picks the built .js beside a .js caller and the .ts beside a .ts caller", () => {
  assert.deepEqual(nodeCommand("file:///pkg/dist/src/acp/shim.js", "../cli/main", ["shim", "4000"]), {
    command: process.execPath,
    args: ["/pkg/dist/src/cli/main.js", "shim", "4000"],
  });
  assert.deepEqual(nodeCommand("file:///repo/src/acp/shim.ts", "../cli/main", ["shim", "4000"]), {
    command: process.execPath,
    args: [...loaderArgs("/repo/src/cli/main.ts"), "/repo/src/cli/main.ts", "shim", "4000"],
  });
});
