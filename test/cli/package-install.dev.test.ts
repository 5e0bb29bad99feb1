/**
 * The package as a user gets it: packed by `npm pack` from a copy of the checkout that has no
 * `dist/` (so the pack must build it itself, through the `prepare` script), installed with
 * `npm i` of the tarball into a scratch project, and run through its bin and its subpaths with
 * plain `node`: no tsx, no `fixtures/`, nothing of the checkout. A green suite in the checkout
 * proves nothing about the tarball.
 */
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, sep } from "node:path";
import { after, before, describe, test } from "node:test";
import { reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { resourceNotFoundCode } from "../helpers/era.ts";
import { MODERN_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-package-"));
const stage = join(dir, "checkout");
const app = join(dir, "app");
const bin = join(app, "node_modules", ".bin", "mcp-bridge");

/**
 * The environment of a user's shell: this test's Node first on PATH (the bin's `#!/usr/bin/env
 * node` finds it), and nothing of the test runner (no loader in NODE_OPTIONS, no `npm_*`
 * settings of an outer `npm test`).
 */
const env: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value !== undefined && name !== "NODE_OPTIONS" && !name.toLowerCase().startsWith("npm_")) env[name] = value;
}
env.PATH = [dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(delimiter);

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 120_000 });
  if (result.error) throw result.error;
  return result;
}

/** The pids of the server below, as it records them (one line each). */
const pidFile = join(dir, "server-pids");

/** An MCP server a user would write against the installed package's narrow subpaths. */
const USER_SERVER = `
import { appendFileSync } from "node:fs";
import { McpServer } from "mcp-bridge/server";
import { StdioServerTransport } from "mcp-bridge/transport/stdio-server";
appendFileSync(${JSON.stringify(pidFile)}, process.pid + "\\n");
const server = new McpServer({ name: "user-echo", version: "1.0.0" });
server.tool(
  { name: "echo", description: "Returns its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  (args) => ({ content: [{ type: "text", text: String(args.text) }] }),
);
const session = await server.connect(new StdioServerTransport());
session.onclose = () => void server.close();
`;

/**
 * The same server on the bundled `mcp-bridge/server/stdio`, throwing the per-file
 * `mcp-bridge/jsonrpc` RpcError: the bundle must recognise it as its own (instanceof).
 */
const BUNDLED_SERVER = `
import { appendFileSync } from "node:fs";
import { McpServer, StdioServerTransport } from "mcp-bridge/server/stdio";
import { RpcError } from "mcp-bridge/jsonrpc";
appendFileSync(${JSON.stringify(pidFile)}, process.pid + "\\n");
const server = new McpServer({ name: "bundled-echo", version: "1.0.0" });
server.resource({ uri: "test://missing", name: "missing" }, () => {
  throw new RpcError(-32002, "nothing at test://missing", { uri: "test://missing" });
});
const session = await server.connect(new StdioServerTransport());
session.onclose = () => void server.close();
`;

/**
 * An agent's client on the bundled `mcp-bridge/client/stdio`, against the server above: its
 * errors must be the per-file subpaths' classes (instanceof both ways). Prints the server's
 * pid as soon as it has one, then what it found as one JSON line.
 */
const USER_CLIENT = `
import { McpClient, StdioClientTransport, BridgeError, RpcError } from "mcp-bridge/client/stdio";
import { McpClient as PerFileClient } from "mcp-bridge/client";
import { BridgeError as PerFileBridgeError, RpcError as PerFileRpcError } from "mcp-bridge/jsonrpc";
const notConnected = await new PerFileClient().callTool("echo").catch((err) => err instanceof BridgeError && err.code);
const transport = new StdioClientTransport({ command: process.execPath, args: [${JSON.stringify(join(app, "server.js"))}] });
const client = new McpClient({ clientInfo: { name: "user-agent", version: "1.0.0" } });
await client.connect(transport);
process.stdout.write("pid " + transport.pid + "\\n");
try {
  const echoed = await client.callTool("echo", { text: "hi" });
  const missing = await client.readResource("test://missing").catch((err) => err instanceof PerFileRpcError && err instanceof RpcError);
  const sameClasses = BridgeError === PerFileBridgeError && RpcError === PerFileRpcError;
  process.stdout.write(JSON.stringify({ notConnected, echoed, missing, sameClasses, era: client.era }) + "\\n");
} finally {
  await client.close();
}
`;

describe("the packed and installed package", { timeout: 300_000 }, () => {
  let packed: { filename: string; files: { path: string }[] };
  let installOutput = "";

  before(() => {
    // A checkout without dist/: what pack sees in a fresh clone. node_modules is the
    // checkout's (tsc for the build); it is never packed.
    mkdirSync(stage);
    for (const entry of ["package.json", "tsconfig.json", "tsconfig.build.json", "README.md", "LICENSE", "src", "scripts/build-bundles.ts"]) {
      cpSync(join(ROOT, entry), join(stage, entry), { recursive: true });
    }
    symlinkSync(join(ROOT, "node_modules"), join(stage, "node_modules"), "dir");
    const pack = run("npm", ["pack", "--json", "--pack-destination", dir], stage);
    assert.equal(pack.status, 0, pack.stderr);
    [packed] = JSON.parse(pack.stdout) as (typeof packed)[];

    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
    writeFileSync(join(app, "server.js"), USER_SERVER);
    writeFileSync(join(app, "bundled-server.js"), BUNDLED_SERVER);
    writeFileSync(join(app, "client.js"), USER_CLIENT);
    const install = run("npm", ["i", "--offline", "--no-audit", "--no-fund", join(dir, packed.filename)], app);
    assert.equal(install.status, 0, install.stderr);
    installOutput = install.stdout + install.stderr;
  });

  after(() => {
    for (const pid of readPids()) reap(pid);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the tarball holds the built CLI and demo servers, the source for `vendor`, and nothing of the checkout besides", () => {
    const paths = packed.files.map((f) => f.path);
    const built = ["dist/src/cli/main.js", "dist/src/cli/demo-server.js", "dist/src/index.js", "dist/src/index.d.ts"];
    // The bundles of scripts/build-bundles.ts: the bin, its demo servers, the stdio server and client entries.
    const bundled = ["dist/cli/main.js", "dist/cli/demo-server.js", "dist/server-stdio.js", "dist/src/server-stdio.d.ts", "dist/client-stdio.js", "dist/src/client-stdio.d.ts"];
    for (const file of [...built, ...bundled]) assert.ok(paths.includes(file), `${file} is missing from the tarball`);
    // src/ as it is in the checkout, every file of it: what `mcp-bridge vendor` copies.
    const source = readdirSync(join(ROOT, "src"), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join("/"));
    assert.deepEqual(paths.filter((p) => p.startsWith("src/")).sort(), source.sort());
    const dist = (p: string): boolean => p.startsWith("dist/src/") || /^dist\/cli\/[\w-]+\.js$/.test(p) || /^dist\/(server|client)-stdio\.js$/.test(p);
    assert.deepEqual(paths.filter((p) => !dist(p) && !p.startsWith("src/")).sort(), ["LICENSE", "README.md", "package.json"]);
    // No loader and no devDependency came along: the app has the package and nothing else.
    assert.deepEqual(readdirSync(join(app, "node_modules")).filter((n) => !n.startsWith(".")), ["mcp-bridge"]);
    // The package declares no install-time script: npm has nothing to warn about.
    assert.doesNotMatch(installOutput, /install scripts/i);
  });

  test("npx mcp-bridge --help prints the usage and exits 0; --version prints the package's version", () => {
    const help = run("npx", ["--offline", "mcp-bridge", "--help"], app);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: mcp-bridge <command>/);
    assert.match(help.stdout, /exit codes/);
    const version = run("npx", ["--offline", "mcp-bridge", "--version"], app);
    assert.equal(version.status, 0, version.stderr);
    const ours = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    assert.equal(version.stdout.trim(), ours.version);
  });

  test("demo runs its embedded servers with plain node, calls one, and stops them", async () => {
    const demo = run(bin, ["demo"], app);
    assert.equal(demo.status, 0, `${demo.stdout}\n${demo.stderr}`);
    // The demo's servers are dual-era: the manager speaks their newest, the stateless era.
    assert.match(demo.stdout, new RegExp(`echo\\s+stdio\\s+ready\\s+${MODERN_PROTOCOL_VERSIONS[0]}`));
    assert.match(demo.stdout, /many-tools\s+stdio\s+ready/);
    assert.match(demo.stdout, /-> hello from mcp-bridge/);
    const pids = /pids ([\d, ]+)\)/.exec(demo.stdout)![1]!.split(", ").map(Number);
    assert.equal(pids.length, 2);
    for (const pid of pids) assert.equal(await waitGone(pid), true, `demo server ${pid} outlived the demo`);
  });

  test("inspect reaches a server written against the installed subpaths, and stops it", async () => {
    const inspect = run(bin, ["inspect", "--json", "--", process.execPath, join(app, "server.js")], app);
    assert.equal(inspect.status, 0, inspect.stderr);
    const info = JSON.parse(inspect.stdout) as { serverInfo: { name: string }; tools: { name: string }[] };
    assert.equal(info.serverInfo.name, "user-echo");
    assert.deepEqual(info.tools.map((t) => t.name), ["echo"]);
    const [pid] = readPids();
    assert.ok(pid !== undefined, "the server recorded its pid");
    assert.equal(await waitGone(pid), true, `server ${pid} outlived inspect`);
  });

  test("a server on the bundled mcp-bridge/server/stdio answers a per-file RpcError with its own code", async () => {
    const before = readPids().length;
    const read = run(bin, ["read", "--json", "test://missing", "--", process.execPath, join(app, "bundled-server.js")], app);
    assert.equal(read.status, 5, read.stderr);
    const { error } = JSON.parse(read.stderr) as { error: { rpcCode: number; data: unknown } };
    // The CLI speaks the stateless era to this dual-era server, which sends "not found" as
    // -32602 (a foreign error class would have been -32603).
    assert.deepEqual({ rpcCode: error.rpcCode, data: error.data }, { rpcCode: resourceNotFoundCode("modern"), data: { uri: "test://missing" } });
    const pid = readPids()[before];
    assert.ok(pid !== undefined, "the server recorded its pid");
    assert.equal(await waitGone(pid), true, `server ${pid} outlived read`);
  });

  test("a client on the bundled mcp-bridge/client/stdio, run with plain node, calls the user's server and makes the per-file error classes", async () => {
    const before = readPids().length;
    const result = run(process.execPath, [join(app, "client.js")], app);
    const lines = result.stdout.split("\n").filter((l) => l !== "");
    const clientPid = lines.find((l) => l.startsWith("pid "));
    const pid = readPids()[before];
    try {
      assert.equal(result.status, 0, result.stderr);
      assert.ok(pid !== undefined, "the server recorded its pid");
      assert.equal(clientPid, `pid ${pid}`, "the client's transport spawned the server that recorded its pid");
      assert.deepEqual(JSON.parse(lines.at(-1)!), {
        notConnected: "NOT_CONNECTED",
        echoed: { content: [{ type: "text", text: "hi" }] },
        missing: true,
        sameClasses: true,
        // The user's server is dual-era: the default probe finds 2026-07-28.
        era: "modern",
      });
      assert.equal(await waitGone(pid), true, `server ${pid} outlived the client`);
    } finally {
      reap(pid);
    }
  });

  test("vendor from the installed package copies its source, and the copy's verify.mjs passes with plain node", () => {
    const vendored = join(dir, "vendored");
    const copy = run(bin, ["vendor", vendored, "--subset", "client"], app);
    assert.equal(copy.status, 0, copy.stderr);
    assert.match(copy.stdout, /^vendored mcp-bridge \S+, subset client: \d+ files of src\//);
    assert.deepEqual(readFileSync(join(vendored, "src", "mcp", "client.ts")), readFileSync(join(ROOT, "src", "mcp", "client.ts")));
    const verify = run(process.execPath, [join(vendored, "verify.mjs")], app);
    assert.equal(verify.status, 0, verify.stdout + verify.stderr);
    assert.match(verify.stdout, /^verify: ok, \d+ files match MANIFEST\.sha256/);
  });
});

function readPids(): number[] {
  try {
    return readFileSync(pidFile, "utf8").split("\n").filter((l) => l !== "").map(Number);
  } catch {
    return [];
  }
}
