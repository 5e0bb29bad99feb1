/**
 * Gateway interop, part of `npm run interop`: third-party clients against `mcp-bridge serve`
 * in front of two third-party servers, `@modelcontextprotocol/server-everything` and
 * `@modelcontextprotocol/server-filesystem` (all pinned in scripts/interop/).
 *
 *   - the official SDK's client (scripts/interop-sdk/sdk-gateway-client.mjs) over stdio and
 *     Streamable HTTP: both upstreams' tools under the gateway's names, a call to each, a
 *     resource and a prompt, and a sampling request server-everything sends during its tool
 *     call, which the gateway forwards to that client;
 *   - the MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`) over stdio and Streamable
 *     HTTP: one run per method (tools/list, tools/call on each upstream, resources/list,
 *     prompts/get), each checked on what it prints.
 *
 * serve binds 127.0.0.1 only, and its upstreams are stdio children, so no network namespace is
 * needed. Every third-party process runs on the pinned Node 22, and so does serve (its type
 * stripping runs our source as it is). Prints one table; any failure exits 1.
 *
 *   npx tsx scripts/interop-serve.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ensureInteropPackage, finish, formatTable, INTEROP_DIR, NODE22, node22Env, ROOT } from "./conformance.ts";
import { processGroupsForScript, type ProcessGroups, type Started } from "./netns.ts";

const PACKAGES = join(INTEROP_DIR, "node_modules", "@modelcontextprotocol");
const EVERYTHING_JS = join(PACKAGES, "server-everything", "dist", "index.js");
const FILESYSTEM_JS = join(PACKAGES, "server-filesystem", "dist", "index.js");
/**
 * The Inspector CLI's entry. It is run with its own directory as the working directory: 1.0.3
 * looks for its package.json with `existsSync("../package.json")`, relative to the working
 * directory, and fails elsewhere.
 */
const INSPECTOR_DIR = join(PACKAGES, "inspector-cli", "build");
const SDK_CLIENT = join(ROOT, "scripts", "interop-sdk", "sdk-gateway-client.mjs");
const MAIN = join(ROOT, "src", "cli", "main.ts");
/** Each run's deadline: a peer that never answers fails its row instead of hanging the run. */
const RUN_LIMIT_MS = 60_000;
/**
 * How long serve gets to stop after SIGTERM. It stops each upstream as the specification says
 * (stdin closed, 2 s, SIGTERM, 2 s, SIGKILL), and server-everything does not end at its
 * stdin's end: serve needed 2.05 s, and SIGKILLed after the default 2 s it left that
 * upstream running, in a process group of its own.
 */
const SERVE_STOP_GRACE_MS = 15_000;
const NOTE_TEXT = "hello through the gateway\n";

interface Row {
  client: string;
  wire: string;
  steps: { step: string; ok: boolean; detail: string }[];
}

const passed = (r: Row): boolean => r.steps.length > 0 && r.steps.every((s) => s.ok);

/** The config serve runs: both upstreams trusted (their commands are absolute paths), the filesystem one confined to `dir`. */
function writeConfig(dir: string): string {
  const config = join(dir, "serve.json");
  const mcpServers = {
    everything: { command: NODE22, args: [EVERYTHING_JS, "stdio"], trust: "trusted" },
    filesystem: { command: NODE22, args: [FILESYSTEM_JS, join(dir, "files")], trust: "trusted" },
  };
  writeFileSync(config, JSON.stringify({ mcpServers }, null, 2));
  return config;
}

/** `serve --stdio` as a command line for a client that starts its server. */
const serveStdio = (config: string): string[] => [NODE22, MAIN, "serve", "--config", config, "--stdio"];

/** The SDK client against serve; its JSON lines become the row's steps. */
async function sdkRow(groups: ProcessGroups, wire: string, note: string, target: readonly string[]): Promise<Row> {
  const row: Row = { client: "SDK client", wire, steps: [] };
  const child = groups.start(`sdk-gateway-client ${wire}`, NODE22, [SDK_CLIENT, note, ...target], { cwd: ROOT, env: node22Env() });
  const { code, timedOut } = await finish(groups, child, RUN_LIMIT_MS);
  for (const line of child.output().split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      row.steps.push(JSON.parse(line) as Row["steps"][number]);
    } catch {
      // a line of serve's stderr that happens to start with "{": not a step
    }
  }
  if (timedOut) row.steps.push({ step: "(run)", ok: false, detail: `no end within ${RUN_LIMIT_MS / 1000} s` });
  else if (code !== 0 && row.steps.every((s) => s.ok)) row.steps.push({ step: "(run)", ok: false, detail: `exit ${String(code)}: ${child.output().slice(-500)}` });
  return row;
}

/** One Inspector CLI run per method against `target` (its arguments before `--method`, and after `--`). */
async function inspectorRow(groups: ProcessGroups, wire: string, note: string, target: { before: string[]; after: string[] }): Promise<Row> {
  const row: Row = { client: "Inspector CLI", wire, steps: [] };
  const runs: Array<[string, string[], (out: string) => boolean]> = [
    ["tools/list", [], (out) => out.includes('"mcp__everything__echo"') && out.includes('"mcp__filesystem__read_text_file"')],
    ["echo", ["--method", "tools/call", "--tool-name", "mcp__everything__echo", "--tool-arg", "message=hi inspector"], (out) => out.includes("Echo: hi inspector")],
    ["fs read", ["--method", "tools/call", "--tool-name", "mcp__filesystem__read_text_file", "--tool-arg", `path=${note}`], (out) => out.includes(JSON.stringify(NOTE_TEXT).slice(1, -1))],
    ["resources/list", ["--method", "resources/list"], (out) => out.includes("mcp-bridge://everything/")],
    ["prompts/get", ["--method", "prompts/get", "--prompt-name", "mcp__everything__simple-prompt"], (out) => out.includes('"messages"')],
  ];
  for (const [step, args, ok] of runs) {
    const method = args.length === 0 ? ["--method", "tools/list"] : args;
    const child = groups.start(`inspector ${wire} ${step}`, NODE22, ["index.js", ...target.before, ...method, ...(target.after.length > 0 ? ["--", ...target.after] : [])], { cwd: INSPECTOR_DIR, env: node22Env() });
    const { code, timedOut } = await finish(groups, child, RUN_LIMIT_MS);
    const out = child.output();
    const good = !timedOut && code === 0 && ok(out);
    row.steps.push({ step, ok: good, detail: good ? "ok" : timedOut ? `no end within ${RUN_LIMIT_MS / 1000} s` : `exit ${String(code)}: ${out.slice(-600)}` });
  }
  return row;
}

/** Waits for serve's `serving ... at <url>` line. */
async function servingUrl(serve: Started, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = /serving \d+ upstream\(s\) at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(serve.output());
    if (m) return m[1]!;
    if (serve.child.exitCode !== null) throw new Error(`serve exited early: ${serve.output().slice(-800)}`);
    if (Date.now() > deadline) throw new Error(`serve did not listen within ${timeoutMs} ms: ${serve.output().slice(-800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs every row; prints the table and the failures; resolves 0 when all passed, else 1. */
export async function runServeInterop(): Promise<number> {
  ensureInteropPackage();
  const groups = processGroupsForScript();
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-serve-interop-"));
  const rows: Row[] = [];
  const started = Date.now();
  try {
    const note = join(dir, "files", "note.txt");
    mkdirSync(join(dir, "files"));
    writeFileSync(note, NOTE_TEXT);
    const config = writeConfig(dir);
    rows.push(await sdkRow(groups, "stdio", note, ["stdio", ...serveStdio(config)]));
    rows.push(await inspectorRow(groups, "stdio", note, { before: [NODE22], after: serveStdio(config).slice(1) }));
    const serve = groups.start("serve --http", NODE22, [MAIN, "serve", "--config", config, "--http", "127.0.0.1:0"], { cwd: ROOT, env: node22Env() });
    try {
      const url = await servingUrl(serve, 30_000);
      rows.push(await sdkRow(groups, "streamable http", note, ["http", url]));
      rows.push(await inspectorRow(groups, "streamable http", note, { before: [url, "--transport", "http"], after: [] }));
    } catch (err) {
      rows.push({ client: "SDK client, Inspector CLI", wire: "streamable http", steps: [{ step: "serve", ok: false, detail: String(err) }] });
    } finally {
      await groups.stop(serve, SERVE_STOP_GRACE_MS);
    }
  } finally {
    await groups.stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
  const table = formatTable(
    ["client", "server", "wire", "steps", "result"],
    rows.map((r) => [r.client, "mcp-bridge serve", r.wire, r.steps.map((s) => (s.ok ? s.step : `${s.step}:FAIL`)).join(" "), passed(r) ? "PASS" : "FAIL"]),
  );
  const out = [
    `\nGateway interop: SDK client and Inspector CLI -> mcp-bridge serve -> server-everything + server-filesystem (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    table,
    "",
  ];
  for (const r of rows) for (const s of r.steps) if (!s.ok) out.push(`FAIL ${r.client} (${r.wire}) ${s.step}: ${s.detail}`);
  process.stdout.write(`${out.join("\n")}\n`);
  return rows.every(passed) ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  runServeInterop().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`interop-serve: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
