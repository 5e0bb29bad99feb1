/**
 * The benchmark: mcp-bridge's client and server against a raw baseline written without the
 * library, on the same machine in one run.
 *
 *   npm run bench                      text table
 *   npm run -s bench -- --json         the same as one JSON object on stdout (-s: no npm banner)
 *   npm run bench -- --quick           every section, once (for tests)
 *   npm run bench -- --startup         sections 1 and 1b alone (start-up on every Node version)
 *   npm run bench -- --stdio           sections 2 and 3 alone (stdio tools/call)
 *   npm run bench -- --calibrate       the raw baseline on both sides: each ratio then shows how
 *                                      far this machine moves a figure on its own (ideal 1.00x)
 *   npm run bench -- --schema          section 10 alone (JSON Schema validation of untrusted schemas)
 *   npm run bench -- --http-stateless  sections 8d and 8e alone (stateless-era HTTP calls)
 *   npm run bench -- --gateway         section 11 alone (mcp-bridge serve against direct calls)
 *                                      (the single-section modes: bench/single-sections.ts)
 *   npm run bench -- --profile [DIR] [--profile-section calls|list|payloads|spawn|http|http-stateless|manager]
 *                                      CPU profiles of both sides of one section, summarised
 *
 * How it is fair: every process, raw or ours, starts with the same two environment variables
 * (bench/env.ts); each client runs in its own plain-node process (our code transpiled by
 * typescript.transpileModule into a temp dir), so peak RSS belongs to one client; the two
 * sides take turns round by round; sections 1 and 1b run on every Node version at hand, ours
 * from the package as `npm run build` makes it (bench/startup.ts); sections 2-6 use plain-node
 * servers, since tsx wraps every function our code creates (esbuild's `__name`) and would tax
 * ours alone. Targets are printed, never asserted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_ENV_NAMES } from "./bench/env.ts";
import { repoRoot } from "./bench/fixtures.ts";
import { measureImportTime, measurePackageImport, type ImportTimeResult, type PackageImportResult } from "./bench/import-time.ts";
import { FULL_PLAN, QUICK_PLAN, callSection, listSection, payloadSection, type ForkRunners, type Sides } from "./bench/measure.ts";
import { buildPackage } from "./bench/package.ts";
import {
  buildStartupFigures,
  nodeVersions,
  spawnServers,
  startupFailures,
  type StartupPaths,
  type StartupResult,
} from "./bench/startup.ts";
import { ChildLedger } from "./bench/children.ts";
import { pinningAvailable } from "./bench/cpu.ts";
import {
  buildHttpFigures,
  buildHttpStatelessFigures,
  httpPlan,
  httpSection,
  httpStatelessSection,
  type HttpSideResult,
  type HttpStatelessSideResult,
} from "./bench/http.ts";
import { buildGatewayFigures, GATEWAY_SESSIONS, gatewayRunnerConfigs, gatewaySection, type GatewayResult } from "./bench/gateway.ts";
import { buildManagerFigures, FLEET, managerPlan, managerSection, type ManagerResult } from "./bench/manager.ts";
import { cpuProfFlags, MANY_TOOLS, PROFILE_SECTIONS, profileMode, type ProfileSection, type StartupSetup as Startup } from "./bench/profile-mode.ts";
import { buildFigures, formatFigures, type Figure } from "./bench/report.ts";
import { RunnerProcess } from "./bench/runner-process.ts";
import { formatSchema, schemaSection, type SchemaBenchResult } from "./bench/schema.ts";
import { formatSection, runSingleSection, SINGLE_SECTION_FLAGS, startupSections, type SectionDeps, type SingleSection } from "./bench/single-sections.ts";
import { transpileTree } from "./bench/transpile.ts";
import type { Mode, RunnerConfig, ServerCommand, SideResult } from "./bench/types.ts";

/** Runner on CPU 0, its servers on CPU 1, where Linux taskset allows (all but 9a). */
const PIN = pinningAvailable() ? { client: 0, server: 1 } : undefined;

interface Options {
  json: boolean;
  quick: boolean;
  /** Both sides run the raw baseline (sections 1-8): the ratios are this machine's noise. */
  calibrate: boolean;
  /** Only the sections of one mode (bench/single-sections.ts). */
  single: SingleSection | undefined;
  /** Directory for CPU profiles; set by `--profile`. */
  profileDir: string | undefined;
  profileSection: ProfileSection;
  /** Only section 10 (the validator; no processes but its own). */
  schemaOnly: boolean;
}

/** The whole result, as printed by `--json`. */
export interface BenchReport {
  meta: {
    node: string;
    platform: string;
    cpus: number;
    cpuModel: string;
    quick: boolean;
    calibrate: boolean;
    durationMs: number;
    /** The environment variables every process starts with, and those a runner actually saw. */
    env: { passed: string[]; runner: string[] };
    /** The machine's 1-minute load average at the start and at the end (other work on a shared machine). */
    load: { start: number; end: number };
    notes: string[];
  };
  figures: Figure[];
  /** Sections 1 and 1b on every Node version at hand (bench/startup.ts). */
  startup: StartupResult;
  raw: SideResult;
  ours: SideResult;
  /** Import of the per-file client entry points (mcp/client + transport/stdio-client). */
  importTime: ImportTimeResult;
  /** Import of `mcp-bridge/client/stdio`, the bundled client entry the README's example uses, from the built package. */
  importBundle: PackageImportResult;
  /** Import of the whole library (src/index). */
  importFull: ImportTimeResult;
  /** Section 8: Streamable HTTP, per side. */
  http: { raw: HttpSideResult; ours: HttpSideResult };
  httpStateless: { raw: HttpStatelessSideResult; ours: HttpStatelessSideResult };
  /** Section 9: McpManager (ours runner only). */
  manager: ManagerResult;
  /** Section 10: the JSON Schema validator on the adversarial corpus and on ordinary schemas. */
  schema: SchemaBenchResult;
  /** Section 11: mcp-bridge serve against direct calls, and many downstream sessions. */
  gateway: GatewayResult;
  /** Child processes started (runners and servers) and those found alive at the end. */
  children: { started: number; leftover: number[] };
}

const NOTES = [
  "raw = a baseline written without the library: ndjson lines, JSON.parse/JSON.stringify, a Map of pending ids (scripts/bench/raw-client.ts, raw-echo-server.mjs).",
  "ours = McpClient + StdioClientTransport against McpServer (fixtures/servers/echo.ts; section 5: scripts/bench/ours-server.ts); sections 1 and 1b: the package as built (see bench/startup.ts).",
  `Every process starts with only ${BENCH_ENV_NAMES.join(" and ")} in its environment (bench/env.ts), raw and ours alike.`,
  "ratio = ours/raw. Throughput (calls/s, MiB/s): higher is better. Time, latency, CPU, memory (ms, us, MB, x): lower is better.",
  "Spawn and throughput ratios are the median of per-round ratios (each round runs both sides back to back), so they can differ a little from the quotient of the two medians shown.",
  "Sections 2-3 and 8 run in forks: each fork a fresh pair of runners and servers with its own warm-up, rounds paired within a fork and pooled (see Plan.forks in scripts/bench/measure.ts).",
  "Section 1 runs on every Node version at hand, with runners on that Node; its tsx rows (both sides under the loader) are context, not targets. Start-up rows show the gap in ms beside the ratio.",
  "Sections 2-6 run both servers under plain node (ours transpiled); each client runs in its own plain-node process, so RSS is per client.",
  "Section 8: each runner starts its HTTP server (ours: McpServer on StreamableHttpServer; raw: node:http) as a plain-node child on 127.0.0.1.",
  "Section 9: McpManager (rate limit and process guard off); 9b a trusted server, 9c an untrusted one as configured by default (markers, injection scan, approval granted), each against a plain McpClient, call by call in turn.",
  "Section 11: McpClient -> echo (direct) against McpClient -> mcp-bridge serve -> echo (the built CLI, --rate-limit off), and against McpClient -> a minimal Node proxy -> echo (raw-proxy-*: the hop alone, 11f-g); the gateway adds a whole hop, so a free tool shows it at its largest.",
  PIN
    ? "All sections but 9a pin the main thread of each runner to CPU 0 and of its servers to CPU 1 (taskset): unpinned, where a server lands swings a round by 2x."
    : "Sections run unpinned (no taskset here): expect their ratios to swing from run to run.",
  "Raw and ours take turns, round by round. Targets are measured, not asserted.",
];

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { json: false, quick: false, calibrate: false, single: undefined, profileDir: undefined, profileSection: "calls", schemaOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--json") o.json = true;
    else if (a === "--quick") o.quick = true;
    else if (a === "--calibrate") o.calibrate = true;
    else if (a in SINGLE_SECTION_FLAGS) o.single = SINGLE_SECTION_FLAGS[a as keyof typeof SINGLE_SECTION_FLAGS];
    else if (a === "--schema") o.schemaOnly = true;
    else if (a === "--profile") {
      const next = argv[i + 1];
      o.profileDir = next !== undefined && !next.startsWith("--") ? argv[++i]! : join(tmpdir(), "mcp-bridge-bench-profiles");
    } else if (a === "--profile-section") {
      const s = argv[++i] as ProfileSection;
      if (!PROFILE_SECTIONS.includes(s)) throw new Error(`--profile-section must be one of ${PROFILE_SECTIONS.join(", ")}`);
      o.profileSection = s;
    } else throw new Error(`unknown argument ${a} (known: --json, --quick, --calibrate, ${Object.keys(SINGLE_SECTION_FLAGS).join(", ")}, --schema, --profile [DIR], --profile-section S)`);
  }
  return o;
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

/** Every child started, to check at the end that none survived; and the runners, to stop. */
const children = new ChildLedger();
const runners: RunnerProcess[] = [];

function runnerConfig(mode: Mode, work: string, startup: Startup, profileDir?: string): RunnerConfig {
  const node = process.execPath;
  const cmd = (args: string[]): ServerCommand => ({ command: node, args });
  const prof = profileDir ? cpuProfFlags(join(profileDir, `server-${mode}`)) : [];
  const many = ["--tools", String(MANY_TOOLS)];
  const spawn = spawnServers(mode, startup.here, startup.pkg, startup.paths);
  if (mode === "raw") {
    const script = startup.paths.rawServer;
    return {
      mode,
      spawnServers: spawn,
      server: cmd([...prof, script]),
      manyToolsServer: cmd([...prof, script, ...many]),
      httpServer: cmd([...prof, join(work, "scripts", "bench", "raw-http-server.js")]),
    };
  }
  const echo = join(work, "fixtures", "servers", "echo.js");
  return {
    mode,
    spawnServers: spawn,
    server: cmd([...prof, echo]),
    manyToolsServer: cmd([...prof, join(work, "scripts", "bench", "ours-server.js"), ...many]),
    httpServer: cmd([...prof, join(work, "scripts", "bench", "ours-http-server.js")]),
  };
}

/** Quits runners one by one, recording the servers they report for the leftover check. */
async function quitRunners(list: Sides): Promise<void> {
  for (const r of list) children.track(await r.quit(), r.config.mode === "ours");
}

function startRunner(work: string, config: RunnerConfig, nodeFlags: readonly string[] = [], node?: string): RunnerProcess {
  const runner = new RunnerProcess(work, config, nodeFlags, node);
  runners.push(runner);
  if (runner.pid !== undefined) children.track([runner.pid], false);
  return runner;
}

/**
 * What a stdio MCP client imports from the per-file subpaths: `./client` and
 * `./transport/stdio-client` (`./transport/stdio` would add the server side too). The README's
 * example imports the bundled `./client/stdio`, measured from the built package beside it.
 */
function clientModules(base: string, ext: ".ts" | ".js"): string[] {
  return [join(base, "src", "mcp", `client${ext}`), join(base, "src", "transport", `stdio-client${ext}`)];
}

/** The whole library: `src/index`, which pulls in HTTP, the manager, config and security too. */
function indexModules(base: string, ext: ".ts" | ".js"): string[] {
  return [join(base, "src", `index${ext}`)];
}

async function measure(opts: Options, root: string, work: string, startup: Startup): Promise<BenchReport> {
  const t0 = performance.now();
  const loadStart = loadavg()[0]!;
  const plan = opts.quick ? QUICK_PLAN : FULL_PLAN;
  const tsx = startup.paths.tsx;
  const versions = nodeVersions(root);
  const startupResult = await startupSections(sectionDeps(opts, root, work, startup), plan, versions);
  progress("7. import time");
  const importTime = measureImportTime(work, tsx, clientModules(root, ".ts"), clientModules(work, ".js"), opts.quick ? 1 : 16, 1);
  const importBundle = measurePackageImport(startup.pkg.app, ["mcp-bridge/client/stdio"], opts.quick ? 1 : 16, 1);
  const importFull = measureImportTime(work, tsx, indexModules(root, ".ts"), indexModules(work, ".js"), opts.quick ? 1 : 6, 1);

  // Pinned (where taskset exists): each runner on CPU 0, its servers on CPU 1. Unpinned, where
  // the scheduler puts a client and its server swings a ping-pong ratio by 2x and more.
  const pin = PIN ? { pin: PIN } : {};
  // --calibrate: the "ours" side runs the raw baseline too (its figures keep the label "ours").
  const sideMode = (mode: Mode): Mode => (opts.calibrate ? "raw" : mode);
  const pinned = (mode: Mode): RunnerConfig => ({ ...runnerConfig(sideMode(mode), work, startup), ...pin });
  const raw = startRunner(work, pinned("raw"));
  const ours = startRunner(work, pinned("ours"));
  const sides = [raw, ours];
  // Further forks of the call sections: a fresh pinned pair each, raw first as in `sides`.
  const forks: ForkRunners = {
    start: () => [startRunner(work, pinned("raw")), startRunner(work, pinned("ours"))],
    stop: quitRunners,
  };
  const startMb = await Promise.all(sides.map((s) => s.ask({ cmd: "rss" })));
  const runnerEnv = (await raw.ask({ cmd: "env" })).names;
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
  const config = (mode: Mode): RunnerConfig => runnerConfig(mode, work, startup);
  progress("8. tools/call over Streamable HTTP, sequential and 64 in flight");
  const { http, httpStateless } = await fresh([pinned("raw"), pinned("ours")], async (s) => {
    const bySide = await httpSection(s, httpPlan(opts.quick, plan), forks);
    progress("8d-e. tools/call over Streamable HTTP in the stateless era (2026-07-28), sequential and 64 in flight");
    const era = await httpStatelessSection(s, httpPlan(opts.quick, plan), forks);
    return {
      http: { raw: bySide.get(s[0]!)!, ours: bySide.get(s[1]!)! },
      httpStateless: { raw: era.get(s[0]!)!, ours: era.get(s[1]!)! },
    };
  });
  progress(`9. McpManager: connect 1 and ${FLEET} servers; plain, bridged and untrusted calls`);
  const manager = await fresh([config("ours"), { ...config("ours"), ...pin }], (s) => managerSection(s[0]!, s[1]!, managerPlan(opts.quick)));
  progress("10. JSON Schema validation of untrusted schemas");
  const schema = schemaSection(work, opts.quick);
  progress("11. mcp-bridge serve: calls through the gateway vs direct, stdio and HTTP; many downstream sessions");
  const gatewayPlans = { stdio: plan, http: httpPlan(opts.quick, plan), sessions: opts.quick ? 20 : GATEWAY_SESSIONS };
  // Ours for direct and the gateway, also under --calibrate (like section 9): the gateway is
  // ours alone; the raw proxy column is the same raw-proxy-* in every mode.
  const gateway = await fresh(gatewayRunnerConfigs({ ...config("ours"), ...pin }, work, startup.pkg.cliBundle), (s) => gatewaySection(s, gatewayPlans));
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
      env: { passed: [...BENCH_ENV_NAMES], runner: runnerEnv },
      load: { start: loadStart, end: loadavg()[0]! },
      notes: [...NOTES, ...startupFailures(startupResult)],
    },
    figures: [
      ...buildStartupFigures(startupResult),
      ...buildFigures(rawResult, oursResult, importTime, importBundle, importFull),
      ...buildHttpFigures(http.raw, http.ours),
      ...buildHttpStatelessFigures(httpStateless.raw, httpStateless.ours),
      ...buildManagerFigures(manager),
      ...buildGatewayFigures(gateway),
    ],
    startup: startupResult,
    raw: rawResult,
    ours: oursResult,
    importTime,
    importBundle,
    importFull,
    http,
    httpStateless,
    manager,
    schema,
    gateway,
    children: { started: children.started, leftover },
  };
}

/** What the single-section modes need of this file: runners, their configs and the ledger. */
function sectionDeps(opts: Options, root: string, work: string, startup: Startup): SectionDeps {
  const pin = PIN ? { pin: PIN } : {};
  return {
    root,
    work,
    startup,
    quick: opts.quick,
    calibrate: opts.calibrate,
    notes: NOTES,
    pinned: (mode) => ({ ...runnerConfig(opts.calibrate ? "raw" : mode, work, startup), ...pin }),
    config: (mode) => runnerConfig(mode, work, startup),
    pin,
    startRunner: (config, node) => startRunner(work, config, [], node),
    quitRunners,
    trackPid: (pid) => children.track([pid], false),
    progress,
  };
}

function formatReport(r: BenchReport): string {
  const m = r.meta;
  const withTarget = r.figures.filter((f) => f.pass !== undefined);
  const misses = withTarget.filter((f) => f.pass === false).length;
  const { leftover, started } = r.children;
  return [
    `mcp-bridge benchmark: Node ${m.node}, ${m.platform}, ${m.cpus} CPUs (${m.cpuModel})${m.quick ? ", QUICK mode" : ""}, ${(m.durationMs / 1000).toFixed(1)} s, load average ${m.load.start.toFixed(1)} -> ${m.load.end.toFixed(1)}`,
    ...(m.calibrate ? ["  CALIBRATION: both sides of sections 1-8 ran the raw baseline; each ratio is this machine's noise (ideal 1.00x). Import time and sections 9 and 11 are unchanged."] : []),
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
    progress("building the package as npm run build does (tsc, then the bundles)");
    const paths: StartupPaths = {
      rawServer: join(root, "scripts", "bench", "raw-echo-server.mjs"),
      rawCli: join(root, "scripts", "bench", "raw-cli.mjs"),
      tsx: import.meta.resolve("tsx"),
    };
    const here = nodeVersions(root).find((v) => v.version === process.version)!;
    const startup: Startup = { pkg: await buildPackage(root, work, paths.rawCli, paths.rawServer), paths, here };
    if (opts.profileDir !== undefined) {
      keepWork = true;
      const dir = opts.profileDir;
      const profile = { quick: opts.quick, section: opts.profileSection, dir, work, startup, progress };
      const start = (mode: Mode): RunnerProcess => startRunner(work, runnerConfig(mode, work, startup, dir), cpuProfFlags(join(dir, `client-${mode}`)));
      const finish = async (runner: RunnerProcess): Promise<void> => children.track(await runner.quit(), runner.config.mode === "ours");
      process.stdout.write(`${await profileMode(profile, start, finish)}\n`);
      const leftover = children.reapLeftovers();
      if (leftover.length > 0) progress(`killed leftover processes: ${leftover.join(", ")}`);
      return;
    }
    if (opts.single !== undefined) {
      const outcome = await runSingleSection(opts.single, sectionDeps(opts, root, work, startup));
      process.stdout.write(opts.json ? `${JSON.stringify({ notes: outcome.notes, figures: outcome.figures, ...outcome.result }, null, 2)}\n` : `${formatSection(outcome)}\n`);
      const leftover = children.reapLeftovers();
      if (leftover.length > 0) process.exitCode = 1;
      return;
    }
    const report = await measure(opts, root, work, startup);
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
