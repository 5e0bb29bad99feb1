/**
 * `main` spawns the server of `-- <command>` before the command's modules load
 * (src/cli/early-spawn.ts): the command then uses that very process, a usage error still starts
 * nothing, a `secret://` reference is resolved before any spawn, and `--verbose` shows what the
 * server wrote before the command was ready to print it.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fixtureCommand, run } from "./helpers.ts";
import { waitGone } from "../e2e/helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-early-spawn-"));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A fresh file for `--log-start`, and the faulty server's command line writing to it. */
function logged(extra: string[] = []): { file: string; command: string[] } {
  const file = join(dir, `start-${files++}.log`);
  return { file, command: fixtureCommand("faulty.ts", ["--log-start", file, ...extra]) };
}

/** The pids of the processes that logged their start; each must be gone by now. */
async function startedPids(file: string): Promise<number[]> {
  const pids = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map((line) => Number(line.split(" ")[1])) : [];
  for (const pid of pids) assert.ok(await waitGone(pid), `server ${pid} is still running`);
  return pids;
}

test("the server spawned early is the one the command talks to: one process, for inspect and call", async () => {
  const a = logged();
  const inspected = await run(["inspect", "--json", "--", ...a.command]);
  assert.equal(inspected.code, 0, inspected.err);
  assert.ok((JSON.parse(inspected.out) as { tools: { name: string }[] }).tools.some((t) => t.name === "echo"));
  assert.equal((await startedPids(a.file)).length, 1);

  const b = logged();
  const called = await run(["call", "echo", '{"text":"early"}', "--timeout", "20000", "--", ...b.command]);
  assert.deepEqual(called, { code: 0, out: "early", err: "" });
  assert.equal((await startedPids(b.file)).length, 1);
});

test("a usage error the command's own checks find starts no server (exit 2)", async () => {
  const cases: string[][] = [
    ["call"],
    ["call", "echo", "{not json"],
    ["call", "echo", "[1]"],
    ["inspect", "extra"],
    ["read"],
    ["prompt"],
    ["prompt", "p", '{"n":1}'],
    ["complete", "tool", "x", "y"],
    ["complete", "prompt", "p", "a", "--context", "{"],
    ["inspect", "--log-level", "loud"],
    ["inspect", "--timeout", "-5"],
    ["inspect", "--era", "newest"],
  ];
  for (const words of cases) {
    const s = logged();
    const r = await run([...words, "--", ...s.command]);
    assert.equal(r.code, 2, `${words.join(" ")}: ${r.err}`);
    assert.deepEqual(await startedPids(s.file), [], `${words.join(" ")} started a server`);
  }
});

test("a secret:// reference in --env is resolved before the one spawn: the server never sees the reference", async () => {
  process.env.MCP_BRIDGE_EARLY_SPAWN_TOKEN = "resolved-value";
  try {
    const s = logged(["--print-env"]);
    const r = await run(["call", "env", "--env", "TOKEN=secret://env/MCP_BRIDGE_EARLY_SPAWN_TOKEN", "--json", "--", ...s.command]);
    assert.equal(r.code, 0, r.err);
    // The result is printed redacted (the value is a secret); the server got the value itself.
    assert.ok(!r.out.includes("secret://"), r.out);
    assert.match(r.out, /TOKEN/);
    assert.equal((await startedPids(s.file)).length, 1);
  } finally {
    delete process.env.MCP_BRIDGE_EARLY_SPAWN_TOKEN;
  }
});

test("--verbose shows a line the server wrote to stderr before the command had loaded", async () => {
  const s = logged(["--exit-at-start"]);
  const r = await run(["inspect", "--verbose", "--", ...s.command]);
  assert.equal(r.code, 3);
  assert.match(r.err, /\[node\] faulty: exiting at start as asked/);
  assert.equal((await startedPids(s.file)).length, 1);
});
