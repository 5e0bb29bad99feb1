/**
 * The vendored client as a user runs it: copied into a folder with no node_modules anywhere,
 * imported as TypeScript by Node 24 itself (type stripping: no tsx, no build), connected over
 * stdio to the echo fixture, also run natively by Node 24. Node 24 is the pinned binary of
 * scripts/node-matrix; its absence is a failure, never a skip.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { run } from "./helpers.ts";

const NODE24 = join(ROOT, "scripts", "node-matrix", "node_modules", "node-24", "bin", "node");
const work = mkdtempSync(join(tmpdir(), "mcp-bridge-vendor24-"));
const pids: number[] = [];
after(() => {
  for (const pid of pids) reap(pid);
  rmSync(work, { recursive: true, force: true });
});

/**
 * An agent's few lines against the vendored copy: connect to the server named on its command
 * line, print the server's pid, list the tools, call `echo`, and close.
 */
const AGENT = `
import { McpClient } from "./mcp-bridge/src/mcp/client.ts";
import { StdioClientTransport } from "./mcp-bridge/src/transport/stdio-client.ts";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args });
const client = new McpClient({ clientInfo: { name: "vendored-agent", version: "1.0.0" } });
await client.connect(transport);
console.log("server pid " + transport.pid);
const tools = await client.listTools();
const result = await client.callTool("echo", { text: "hello from the vendored client" });
console.log(JSON.stringify({ server: client.serverInfo?.name, echo: tools.some((t) => t.name === "echo"), result }));
await client.close();
`;

/** Runs Node 24 with no loader and nothing of npm or the test runner in its environment. */
function node24(args: string[]): { code: number | null; out: string; err: string } {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && name !== "NODE_OPTIONS" && !name.toLowerCase().startsWith("npm_")) env[name] = value;
  }
  const r = spawnSync(NODE24, args, { cwd: work, env, encoding: "utf8", timeout: 60_000 });
  if (r.pid !== undefined) pids.push(r.pid);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test("Node 24 runs the vendored client subset natively from a folder without node_modules and talks to the echo fixture", async () => {
  assert.ok(existsSync(NODE24), `${NODE24} is missing: run \`npm ci\` in scripts/node-matrix to install the pinned Node binaries`);
  const vendored = join(work, "mcp-bridge");
  const r = await run(["vendor", vendored, "--subset", "client"]);
  assert.equal(r.code, 0, r.err);
  writeFileSync(join(work, "agent.mjs"), AGENT);
  mkdirSync(join(work, "empty"));
  assert.deepEqual(readdirSync(work).sort(), ["agent.mjs", "empty", "mcp-bridge"]);

  const agent = node24(["agent.mjs", NODE24, join(ROOT, "fixtures", "servers", "echo.ts")]);
  const [pidLine = "", resultLine = ""] = agent.out.split("\n");
  const pid = Number(/^server pid (\d+)$/.exec(pidLine)?.[1]);
  if (Number.isInteger(pid)) pids.push(pid);
  assert.equal(agent.code, 0, agent.err);
  assert.deepEqual(JSON.parse(resultLine), {
    server: "echo",
    echo: true,
    result: { content: [{ type: "text", text: "hello from the vendored client" }] },
  });
  assert.equal(await waitGone(pid), true, `the echo server ${pid} outlived client.close()`);

  // The copy is still exactly what was vendored, by its own script under Node 24.
  assert.deepEqual(node24([join(vendored, "verify.mjs")]), {
    code: 0,
    out: `verify: ok, ${countFiles(vendored) - 1} files match MANIFEST.sha256 in ${vendored}\n`,
    err: "",
  });
});

function countFiles(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile()).length;
}
