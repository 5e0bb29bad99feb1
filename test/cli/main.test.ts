/** The CLI: run in-process with captured output, and once as a real process. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs, UsageError } from "../../src/cli/args.ts";
import { table } from "../../src/cli/format.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { ROOT, alive, fixture } from "../e2e/helpers.ts";
import { echoCommand, run } from "./helpers.ts";
import { MODERN_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";

test("parseArgs splits flags, positionals and the server command; unknown flags are errors", () => {
  const a = parseArgs(["call", "--json", "echo", "{}", "--env", "A=1", "--env=B=2", "--", "node", "--json", "x"], {
    valued: ["env"],
    boolean: ["json"],
  });
  assert.deepEqual(a.positionals, ["call", "echo", "{}"]);
  assert.deepEqual(a.flags.get("env"), ["A=1", "B=2"]);
  assert.deepEqual(a.command, ["node", "--json", "x"]);
  assert.throws(() => parseArgs(["--nope"], { valued: [], boolean: [] }), UsageError);
  assert.throws(() => parseArgs(["--env"], { valued: ["env"], boolean: [] }), /needs a value/);
});

test("table pads columns to the widest cell", () => {
  assert.equal(table(["a", "bb"], [["xxx", "y"]]), "a    bb\n---  --\nxxx  y");
});

test("inspect --json prints server info, tools, resources and prompts", async () => {
  const r = await run(["inspect", "--json", "--", ...echoCommand]);
  assert.equal(r.code, 0, r.err);
  const info = JSON.parse(r.out) as { serverInfo: { name: string }; protocolVersion: string; tools: Array<{ name: string }>; resources: unknown[]; prompts: unknown[] };
  assert.equal(info.serverInfo.name, "echo");
  // The echo fixture is dual-era: the CLI speaks its newest, the stateless era.
  assert.equal(info.protocolVersion, MODERN_PROTOCOL_VERSIONS[0]);
  assert.ok(info.tools.some((t) => t.name === "echo"));
  assert.ok(info.resources.length > 0);
  assert.ok(info.prompts.length > 0);
});

test("inspect prints a readable summary", async () => {
  const r = await run(["inspect", "--", ...echoCommand]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /server\s+echo 1\.0\.0/);
  assert.match(r.out, /tools \(\d+\)/);
  assert.match(r.out, /echo:\/\/items\/\{id\}/);
});

test("call runs one tool; an error result exits 1; bad JSON arguments exit 2", async () => {
  const ok = await run(["call", "add", '{"a":2,"b":3}', "--", ...echoCommand]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /^5$/m);
  const failed = await run(["call", "fail", "{}", "--", ...echoCommand]);
  assert.equal(failed.code, 1);
  assert.match(failed.out, /always fails/);
  const bad = await run(["call", "add", "{nope", "--", ...echoCommand]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /not valid JSON/);
});

test("a server that cannot start exits 3 and one that does not answer exits 4, each with a clear error", async () => {
  const missing = await run(["inspect", "--", "mcp-bridge-test-no-such-command"]);
  assert.equal(missing.code, 3);
  assert.match(missing.err, /spawn "mcp-bridge-test-no-such-command" failed: ENOENT/);
  const dies = await run(["inspect", "--", process.execPath, "-e", "console.error('bad config'); process.exit(4)"]);
  assert.equal(dies.code, 3);
  assert.match(dies.err, /exited with code 4/);
  assert.match(dies.err, /bad config/);
  const never = fixture("faulty.ts", ["--never-reply"]);
  const silent = await run(["inspect", "--timeout", "300", "--", never.command, ...never.args!]);
  assert.equal(silent.code, 4);
  assert.match(silent.err, /TIMEOUT/);
});

test("usage errors exit 2 with the usage text", async () => {
  const r = await run(["frobnicate"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /unknown command "frobnicate"/);
  assert.match(r.err, /exit codes/);
  const none = await run(["inspect"]);
  assert.equal(none.code, 2);
  assert.match(none.err, /no server given/);
});

test("demo runs as a real process, prints servers and tools, and exits 0", () => {
  const demo = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["demo"]);
  const r = spawnSync(demo.command, demo.args, {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`echo\\s+stdio\\s+ready\\s+${MODERN_PROTOCOL_VERSIONS[0]}`));
  assert.match(r.stdout, /broken\s+stdio\s+failed/);
  assert.match(r.stdout, /-> hello from mcp-bridge/);
  const pids = /pids ([\d, ]+)\)/.exec(r.stdout)![1]!.split(", ").map(Number);
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.equal(alive(pid), false, `demo server ${pid} must be gone`);
});

test("--help documents every exit code", async () => {
  const r = await run(["--help"]);
  assert.equal(r.code, 0);
  const codes = r.out.slice(r.out.indexOf("exit codes\n")).split("\n").slice(1).map((l) => l.trim().slice(0, 3));
  assert.deepEqual(codes, ["0  ", "1  ", "2  ", "3  ", "4  ", "5  "]);
  assert.match(r.out, /1 {2}the tool returned an error \(isError: true\), or a failure none of the codes below names\n {2}2 {2}usage/);
});

test("the entry imports no command statically: each is imported when it runs", () => {
  const source = readFileSync(join(ROOT, "src", "cli", "main.ts"), "utf8");
  const staticImports = [...source.matchAll(/^import (?!type )[^;]*? from "(\.\/[^"]+)";$/gm)].map((m) => m[1]);
  assert.deepEqual(staticImports, ["./args.ts"]);
  for (const command of ["inspect", "call", "read", "prompt", "complete", "demo", "acp-agent", "shim"]) {
    assert.match(source, new RegExp(`await import\\("\\./${command}\\.ts"\\)`), command);
  }
});

/** Pids of this process's children now (Linux: /proc/<pid>/task/<pid>/children). */
function childPids(): string[] {
  return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
}

test("a server command starts its server before it makes the terminal, and makes it once", async () => {
  const { main } = await import("../../src/cli/main.ts");
  const before = childPids();
  const seen: string[][] = [];
  const terminal = () => {
    seen.push(childPids().filter((pid) => !before.includes(pid)));
    return { columns: 80 };
  };
  const out: string[] = [];
  const code = await main(["inspect", "--json", "--", ...echoCommand], (t) => out.push(t), () => undefined, terminal);
  assert.equal(code, 0);
  assert.equal(seen.length, 1, "the terminal was made once");
  assert.equal(seen[0]!.length, 1, "the server had been started when it was made");
  assert.equal((JSON.parse(out.join("\n")) as { serverInfo: { name: string } }).serverInfo.name, "echo");
  for (const pid of seen[0]!) assert.equal(alive(Number(pid)), false, `server ${pid} is stopped`);

  // --version starts nothing and still makes the terminal before printing.
  seen.length = 0;
  assert.equal(await main(["inspect", "--version", "--", ...echoCommand], () => undefined, () => undefined, terminal), 0);
  assert.deepEqual(seen, [[]]);
});
