/**
 * The benchmark: mcp-bridge's client and server against a raw baseline written without the
 * library, on the same machine in one run.
 *
 *   npm run bench                      text table
 *   npm run -s bench -- --json         the same as one JSON object on stdout (-s: no npm banner)
 *   npm run bench -- --quick           every section, once (for tests)
 *   npm run bench -- --calibrate       the raw baseline on both sides: each ratio then shows how
 *                                      far this machine moves a figure on its own (ideal 1.00x)
 *   npm run bench -- --schema          section 10 alone (JSON Schema validation of untrusted schemas)
 *   npm run bench -- --profile [DIR] [--profile-section calls|list|payloads|spawn|http|manager]
 *                                      CPU profiles of both sides of one section, summarised
 *
 * How it is fair: each client runs in its own plain-node process (our code transpiled by
 * typescript.transpileModule into a temp dir), so peak RSS belongs to one client; the two
 * sides take turns round by round; section 1 starts both servers under `node --import tsx`
 * (the loader's cost cancels) and under plain node; sections 2-6 use plain-node servers,
 * since tsx wraps every function our code creates (esbuild's `__name`) and would tax ours
 * alone. Targets are printed, never asserted.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureCommand, repoRoot } from "./bench/fixtures.ts";
import { measureImportTime, type ImportTimeResult } from "./bench/import-time.ts";
import { FULL_PLAN, NO_TIME_LIMIT, QUICK_PLAN, callSection, listSection, payloadSection, spawnSection, type ForkRunners, type Plan, type Sides } from "./bench/measure.ts";
import { ChildLedger } from "./bench/children.ts";
import { pinningAvailable } from "./bench/cpu.ts";
import { buildHttpFigures, httpPlan, httpProfilePlan, httpSection, type HttpSideResult } from "./bench/http.ts";
import { buildManagerFigures, FLEET, managerPlan, managerProfilePlan, managerSection, type ManagerPlan, type ManagerResult } from "./bench/manager.ts";
import { formatSummary, summarizeDir } from "./bench/profile.ts";
import { buildFigures, formatFigures, type Figure } from "./bench/report.ts";
import { RunnerProcess } from "./bench/runner-process.ts";
import { formatSchema, schemaSection, type SchemaBenchResult } from "./bench/schema.ts";
import { transpileTree } from "./bench/transpile.ts";
import type { Mode, RunnerConfig, ServerCommand, SideResult } from "./bench/types.ts";

const MANY_TOOLS = 1000;
/** Runner on CPU 0, its servers on CPU 1, where Linux taskset allows (all but 9a). */
const PIN = pinningAvailable() ? { client: 0, server: 1 } : undefined;
const SPAWN_VARIANTS = ["tsx", "node"] as const;
const PROFILE_SECTIONS = ["calls", "list", "payloads", "spawn", "http", "manager"] as const;
type ProfileSection = (typeof PROFILE_SECTIONS)[number];

interface Options {
  json: boolean;
  quick: boolean;
  /** Both sides run the raw baseline (sections 1-8): the ratios are this machine's noise. */
  calibrate: boolean;
  /** Directory for CPU profiles; set by `--profile`. */
  profileDir: string | undefined;
  profileSection: ProfileSection;
  /** Only section 10 (the validator; no processes but its own). */
  schemaOnly: boolean;
}

/** The whole result, as printed by `--json`. */
export interface BenchReport {
  meta: { node: string; platform: string; cpus: number; cpuModel: string; quick: boolean; calibrate: boolean; durationMs: number; notes: string[] };
  figures: Figure[];
  raw: SideResult;
  ours: SideResult;
  /** Import of the client entry points (mcp/client + transport/stdio). */
  importTime: ImportTimeResult;
  /** Import of the whole library (src/index). */
  importFull: ImportTimeResult;
  /** Section 8: Streamable HTTP, per side. */
  http: { raw: HttpSideResult; ours: HttpSideResult };
  /** Section 9: McpManager (ours runner only). */
  manager: ManagerResult;
  /** Section 10: the JSON Schema validator on the adversarial corpus and on ordinary schemas. */
  schema: SchemaBenchResult;
  /** Child processes started (runners and servers) and those found alive at the end. */
  children: { started: number; leftover: number[] };
}

const NOTES = [
  "raw = a baseline written without the library: ndjson lines, JSON.parse/JSON.stringify, a Map of pending ids (scripts/bench/raw-client.ts, raw-echo-server.mjs).",
  "ours = McpClient + StdioClientTransport against McpServer (fixtures/servers/echo.ts; section 5: scripts/bench/ours-server.ts).",
  "ratio = ours/raw. Throughput (calls/s, MiB/s): higher is better. Time, latency, CPU, memory (ms, us, MB, x): lower is better.",
  "Spawn and throughput ratios are the median of per-round ratios (each round runs both sides back to back), so they can differ a little from the quotient of the two medians shown.",
  "Sections 2-3 and 8 run in forks: each fork a fresh pair of runners and servers with its own warm-up, rounds paired within a fork and pooled (see Plan.forks in scripts/bench/measure.ts).",
  "Section 1 starts both servers under the same loader (node --import tsx, so its cost cancels) and under plain node (.js).",
  "Sections 2-6 run both servers under plain node (ours transpiled); each client runs in its own plain-node process, so RSS is per client.",
  "Section 8: each runner starts its HTTP server (ours: McpServer on StreamableHttpServer; raw: node:http) as a plain-node child on 127.0.0.1.",
  "Section 9: McpManager (trusted servers, rate limit and process guard off); 9b against a plain McpClient, call by call in turn.",
  PIN
    ? "All sections but 9a pin the main thread of each runner to CPU 0 and of its servers to CPU 1 (taskset): unpinned, where a server lands swings a round by 2x."
    : "Sections run unpinned (no taskset here): expect their ratios to swing from run to run.",
  "Raw and ours take turns, round by round. Targets are measured, not asserted.",
];

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { json: false, quick: false, calibrate: false, profileDir: undefined, profileSection: "calls", schemaOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--json") o.json = true;
    else if (a === "--quick") o.quick = true;
    else if (a === "--calibrate") o.calibrate = true;
    else if (a === "--schema") o.schemaOnly = true;
    else if (a === "--profile") {
      const next = argv[i + 1];
      o.profileDir = next !== undefined && !next.startsWith("--") ? argv[++i]! : join(tmpdir(), "mcp-bridge-bench-profiles");
    } else if (a === "--profile-section") {
      const s = argv[++i] as ProfileSection;
      if (!PROFILE_SECTIONS.includes(s)) throw new Error(`--profile-section must be one of ${PROFILE_SECTIONS.join(", ")}`);
      o.profileSection = s;
    } else throw new Error(`unknown argument ${a} (known: --json, --quick, --calibrate, --schema, --profile [DIR], --profile-section S)`);
  }
  return o;
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** Every child started, to check at the end that none survived; and the runners, to stop. */
const children = new ChildLedger();
const runners: RunnerProcess[] = [];

/** CPU profile flags, sampled every 100 us (the default 1 ms is too coarse for these runs). */
function cpuProfFlags(dir: string): string[] {
  return ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "100"];
}

function runnerConfig(mode: Mode, root: string, work: string, tsx: string, profileDir?: string): RunnerConfig {
  const node = process.execPath;
  const cmd = (args: string[]): ServerCommand => ({ command: node, args });
  const prof = profileDir ? cpuProfFlags(join(profileDir, `server-${mode}`)) : [];
  const many = ["--tools", String(MANY_TOOLS)];
  if (mode === "raw") {
    const script = join(root, "scripts", "bench", "raw-echo-server.mjs");
    return {
      mode,
      spawnServers: { tsx: cmd(["--import", tsx, script]), node: cmd([script]) },
      server: cmd([...prof, script]),
      manyToolsServer: cmd([...prof, script, ...many]),
      httpServer: cmd([...prof, join(work, "scripts", "bench", "raw-http-server.js")]),
    };
  }
  const echo = join(work, "fixtures", "servers", "echo.js");
  return {
    mode,
    spawnServers: { tsx: cmd(fixtureCommand("echo.ts").slice(1)), node: cmd([echo]) },
    server: cmd([...prof, echo]),
    manyToolsServer: cmd([...prof, join(work, "scripts", "bench", "ours-server.js"), ...many]),
    httpServer: cmd([...prof, join(work, "scripts", "bench", "ours-http-server.js")]),
  };
}

/** Quits runners one by one, recording the servers they report for the leftover check. */
async function quitRunners(list: Sides): Promise<void> {
  for (const r of list) children.track(await r.quit(), r.config.mode === "ours");
}

function startRunner(work: string, config: RunnerConfig, nodeFlags: readonly string[] = []): RunnerProcess {
  const runner = new RunnerProcess(work, config, nodeFlags);
  runners.push(runner);
  if (runner.pid !== undefined) children.track([runner.pid], false);
  return runner;
}

/** The library's entry points: src/index once it exists, else the client and stdio modules. */
/** What a stdio MCP client imports: the `./client` and `./transport/stdio` entry points. */
function clientModules(base: string, ext: ".ts" | ".js"): string[] {
  return [join(base, "src", "mcp", `client${ext}`), join(base, "src", "transport", `stdio${ext}`)];
}

/** The whole library: `src/index`, which pulls in HTTP, the manager, config and security too. */
function indexModules(base: string, ext: ".ts" | ".js"): string[] {
  return [join(base, "src", `index${ext}`)];
}

async function runSection(section: ProfileSection, sides: Sides, plan: Plan, mplan: ManagerPlan): Promise<void> {
  if (section === "spawn") await spawnSection(sides, plan, SPAWN_VARIANTS);
  else if (section === "http") await httpSection(sides, plan);
  else if (section === "manager") await managerSection(sides[0]!, sides[0]!, mplan);
  else if (section === "calls") await callSection(sides, plan);
  else if (section === "list") await listSection(sides, plan);
  else await payloadSection(sides, plan);
}

/**
 * The plan without its time limits, so that both sides do exactly the same work, and with
 * ten times the listings (a few dozen are too few samples next to the servers' start-up).
 */
function forProfile(plan: Plan): Plan {
  const all = (b: Plan["seqRound"]) => ({ iterations: b.iterations, ms: NO_TIME_LIMIT });
  return {
    ...plan,
    forks: 1,
    seqWarmup: all(plan.seqWarmup),
    seqRound: all(plan.seqRound),
    flightWarmup: all(plan.flightWarmup),
    flightRound: all(plan.flightRound),
    listRunsPerRound: plan.listRunsPerRound * 10,
  };
}

/** What one side does in a profiled section, so self times can be read per call. */
function workOf(section: ProfileSection, p: Plan, m: ManagerPlan): string {
  switch (section) {
    case "http":
    case "calls": {
      const seq = p.seqWarmup.iterations + p.seqRounds * p.seqRound.iterations;
      const flight = p.flightWarmup.iterations + p.flightRounds * p.flightRound.iterations;
      return `${seq} sequential + ${flight} in-flight echo calls`;
    }
    case "manager": {
      const calls = m.callWarmup.iterations + m.callRounds * m.callRound.iterations;
      return `${m.connectWarmupRounds + m.connectRounds} rounds of connecting 1 and ${FLEET} servers; about ${calls} plain and ${calls} bridged echo calls`;
    }
    case "list":
      return `${p.listWarmupRuns + p.listRounds * p.listRunsPerRound} listings of ${MANY_TOOLS} extra tools`;
    case "payloads":
      return p.payloads.map((x) => `${x.rounds + 1} x ${x.mib} MiB`).join(", ") + " echoes";
    case "spawn":
      return `${(p.spawnWarmupRounds + p.spawnRounds) * SPAWN_VARIANTS.length} spawns`;
  }
}

/** One side at a time, alone under the profiler, then a summary of each profile written. */
async function profileMode(opts: Options, root: string, work: string, tsx: string, dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  const base = opts.quick ? QUICK_PLAN : FULL_PLAN;
  const plan = opts.profileSection === "http" ? httpProfilePlan(opts.quick, base) : forProfile(base);
  const mplan = managerProfilePlan(opts.quick);
  // Section 9 compares two ways of using mcp-bridge; the raw runner takes no part.
  for (const mode of opts.profileSection === "manager" ? (["ours"] as const) : (["raw", "ours"] as const)) {
    progress(`profiling the ${mode} side of section "${opts.profileSection}"`);
    await mkdir(join(dir, `server-${mode}`), { recursive: true });
    const runner = startRunner(work, runnerConfig(mode, root, work, tsx, dir), cpuProfFlags(join(dir, `client-${mode}`)));
    await runSection(opts.profileSection, [runner], plan, mplan);
    children.track(await runner.quit(), mode === "ours");
  }
  const parts = [
    `CPU profiles of section "${opts.profileSection}" in ${dir} (self time; idle left out)`,
    `Each side did the same work: ${workOf(opts.profileSection, plan, mplan)}.`,
    "Wall-clock sampling: a syscall's time (writeUtf8String = write(2) to the pipe) includes waking the reader.",
    `Our code ran transpiled from ${work} (kept); line numbers refer to those .js files.`,
  ];
  for (const side of ["client-raw", "client-ours", "server-raw", "server-ours"]) {
    const summaries = await summarizeDir(join(dir, side), work, 20).catch(() => new Map());
    for (const [file, s] of summaries) parts.push("", formatSummary(`${side} (${file})`, s));
  }
  return parts.join("\n");
}

async function measure(opts: Options, root: string, work: string, tsx: string): Promise<BenchReport> {
  const t0 = performance.now();
  const plan = opts.quick ? QUICK_PLAN : FULL_PLAN;
  progress("7. import time");
  const importTime = measureImportTime(work, tsx, clientModules(root, ".ts"), clientModules(work, ".js"), opts.quick ? 1 : 16, 1);
  const importFull = measureImportTime(work, tsx, indexModules(root, ".ts"), indexModules(work, ".js"), opts.quick ? 1 : 6, 1);

  // Pinned (where taskset exists): each runner on CPU 0, its servers on CPU 1. Unpinned, where
  // the scheduler puts a client and its server swings a ping-pong ratio by 2x and more.
  const pin = PIN ? { pin: PIN } : {};
  // --calibrate: the "ours" side runs the raw baseline too (its figures keep the label "ours").
  const sideMode = (mode: Mode): Mode => (opts.calibrate ? "raw" : mode);
  const pinned = (mode: Mode): RunnerConfig => ({ ...runnerConfig(sideMode(mode), root, work, tsx), ...pin });
  const raw = startRunner(work, pinned("raw"));
  const ours = startRunner(work, pinned("ours"));
  const sides = [raw, ours];
  // Further forks of the call sections: a fresh pinned pair each, raw first as in `sides`.
  const forks: ForkRunners = {
    start: () => [startRunner(work, pinned("raw")), startRunner(work, pinned("ours"))],
    stop: quitRunners,
  };
  const startMb = await Promise.all(sides.map((s) => s.ask({ cmd: "rss" })));
  progress("1. spawn + initialize + tools/list");
  const spawn = await spawnSection(sides, plan, SPAWN_VARIANTS);
  progress("2, 3. tools/call, sequential and 64 in flight");
  const calls = await callSection(sides, plan, "stdio", undefined, forks);
  const afterCallsMb = [await raw.ask({ cmd: "rss" }), await ours.ask({ cmd: "rss" })];
  progress("5. tools/list of 1000 tools");
  const list = await listSection(sides, plan);
  progress("6. large payloads");
  const payloads = await payloadSection(sides, plan);
  const peakMb = [await raw.ask({ cmd: "rss" }), await ours.ask({ cmd: "rss" })];

  const results = await Promise.all(
    sides.map(async (side, i): Promise<SideResult> => ({
      mode: side.config.mode,
      spawn: spawn.get(side)!,
      ...calls.get(side)!,
      manyTools: list.get(side)!,
      payloads: payloads.get(side)!,
      rss: { startMb: startMb[i]!.maxRssMb, afterCallsMb: afterCallsMb[i]!.maxRssMb, peakMb: peakMb[i]!.maxRssMb },
      serverPids: await side.quit(),
    })),
  );
  for (const r of results) children.track(r.serverPids, r.mode === "ours");

  // Sections 8 and 9 get fresh runners: a heap shaped by sections 1-6 would tax one side more.
  const fresh = async <T>(configs: readonly RunnerConfig[], body: (s: Sides) => Promise<T>): Promise<T> => {
    const runnersNow = configs.map((config) => startRunner(work, config));
    const out = await body(runnersNow);
    await quitRunners(runnersNow);
    return out;
  };
  const config = (mode: Mode): RunnerConfig => runnerConfig(mode, root, work, tsx);
  progress("8. tools/call over Streamable HTTP, sequential and 64 in flight");
  const http = await fresh([pinned("raw"), pinned("ours")], async (s) => {
    const bySide = await httpSection(s, httpPlan(opts.quick, plan), forks);
    return { raw: bySide.get(s[0]!)!, ours: bySide.get(s[1]!)! };
  });
  progress(`9. McpManager: connect 1 and ${FLEET} servers; bridged vs plain calls`);
  const manager = await fresh([config("ours"), { ...config("ours"), ...pin }], (s) => managerSection(s[0]!, s[1]!, managerPlan(opts.quick)));
  progress("10. JSON Schema validation of untrusted schemas");
  const schema = schemaSection(work, opts.quick);
  const leftover = children.reapLeftovers();
  const [rawResult, oursResult] = results as [SideResult, SideResult];
  return {
    meta: {
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "unknown",
      quick: opts.quick,
      calibrate: opts.calibrate,
      durationMs: performance.now() - t0,
      notes: NOTES,
    },
    figures: [...buildFigures(rawResult, oursResult, importTime, importFull), ...buildHttpFigures(http.raw, http.ours), ...buildManagerFigures(manager)],
    raw: rawResult,
    ours: oursResult,
    importTime,
    importFull,
    http,
    manager,
    schema,
    children: { started: children.started, leftover },
  };
}

function formatReport(r: BenchReport): string {
  const m = r.meta;
  const withTarget = r.figures.filter((f) => f.pass !== undefined);
  const misses = withTarget.filter((f) => f.pass === false).length;
  const { leftover, started } = r.children;
  return [
    `mcp-bridge benchmark: Node ${m.node}, ${m.platform}, ${m.cpus} CPUs (${m.cpuModel})${m.quick ? ", QUICK mode" : ""}, ${(m.durationMs / 1000).toFixed(1)} s`,
    ...(m.calibrate ? ["  CALIBRATION: both sides of sections 1-8 ran the raw baseline; each ratio is this machine's noise (ideal 1.00x). Import time and section 9 are unchanged."] : []),
    ...m.notes.map((n) => `  ${n}`),
    formatFigures(r.figures),
    "",
    formatSchema(r.schema),
    "",
    `Targets: ${withTarget.length - misses} of ${withTarget.length} PASS, ${misses} MISS; section 10: ${r.schema.pass ? "PASS" : "MISS"}.`,
    `Child processes: ${started} started, ${leftover.length === 0 ? "all gone at the end" : `${leftover.length} left over and killed: ${leftover.join(", ")}`}.`,
  ].join("\n");
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const root = repoRoot();
  const tsx = import.meta.resolve("tsx");
  const work = await mkdtemp(join(tmpdir(), "mcp-bridge-bench-"));
  const stop = (signal: NodeJS.Signals): void => {
    progress(`stopped by ${signal}`);
    children.reapLeftovers();
    process.exit(130);
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  let keepWork = false;
  try {
    progress("transpiling src/, fixtures/servers/ and scripts/bench/ for plain node");
    await transpileTree(root, ["src", "fixtures/servers", "scripts/bench"], work);
    if (opts.schemaOnly) {
      progress("10. JSON Schema validation of untrusted schemas");
      const schema = schemaSection(work, opts.quick);
      process.stdout.write(opts.json ? `${JSON.stringify(schema, null, 2)}\n` : `${formatSchema(schema)}\n`);
      return;
    }
    if (opts.profileDir !== undefined) {
      keepWork = true;
      process.stdout.write(`${await profileMode(opts, root, work, tsx, opts.profileDir)}\n`);
      const leftover = children.reapLeftovers();
      if (leftover.length > 0) progress(`killed leftover processes: ${leftover.join(", ")}`);
      return;
    }
    const report = await measure(opts, root, work, tsx);
    process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
    if (report.children.leftover.length > 0) process.exitCode = 1;
  } finally {
    // On failure the runners may still be up: stdin EOF makes them close their servers.
    await Promise.all(runners.map((r) => r.stop()));
    if (!keepWork) await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  const leftover = children.reapLeftovers();
  if (leftover.length > 0) progress(`killed leftover processes: ${leftover.join(", ")}`);
  process.exitCode = 1;
});
