/**
 * Sections 1 and 1b of the benchmark, the start-up figures, on every Node version at hand (this
 * process's, and the CI matrix's pinned binaries in scripts/node-matrix/ when installed):
 *
 * 1.  spawn + initialize + tools/list of a fresh stdio server, timed by a client runner on the
 *     same Node (the runners take turns round by round, pinned as the other sections are).
 *     Raw: raw-echo-server.mjs with the raw client. Ours: McpClient with a user's server
 *     (scripts/bench/package.ts) on the `.ts` source (under tsx on Node 20, by type stripping on
 *     22+), on the built per-file subpaths, and on the bundled `mcp-bridge/server/stdio`; and
 *     the same servers started by the raw client, which shows the server's share of the gap.
 * 1b. the CLI's whole cold path, process start to exit: `mcp-bridge inspect --json` of the raw
 *     server (the bin as packed, and the per-file build for comparison) against raw-cli.mjs,
 *     which does the same on the wire. Not pinned: the CLI's server inherits its CPU affinity.
 *
 * Every process starts with the benchmark's one environment (env.ts), and every ratio is shown
 * with its absolute gap in ms, since a cost both sides pay (a loader, a slow machine) flatters
 * any ratio.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { benchEnv } from "./env.ts";
import { spawnSection, type Plan, type SpawnTimes } from "./measure.ts";
import type { BuiltPackage } from "./package.ts";
import { compare, type CompareFigure, type Figure } from "./report.ts";
import type { RunnerProcess } from "./runner-process.ts";
import { median } from "./stats.ts";
import type { Mode, RunnerConfig, ServerCommand } from "./types.ts";

/** A Node binary the start-up sections run on. */
export interface NodeVersion {
  /** `node20`, `node24`, ...: the key of its figures. */
  key: string;
  /** `v24.21.0` */
  version: string;
  path: string;
}

/** The Node version whose start-up figures carry the targets (docs/decisions.md 80). */
export const TARGET_NODE = "node24";
const MAX_STARTUP_RATIO = 1.15;

/** This process's Node and the pinned matrix binaries that are installed, one per major version. */
export function nodeVersions(root: string): NodeVersion[] {
  const matrix = ["22", "24", "26"].map((major) => join(root, "scripts", "node-matrix", "node_modules", `node-${major}`, "bin", "node"));
  const out = new Map<string, NodeVersion>();
  for (const path of [process.execPath, ...matrix.filter((p) => existsSync(p))]) {
    const r = spawnSync(path, ["-p", "process.version"], { encoding: "utf8", env: benchEnv() });
    if (r.status !== 0) continue;
    const version = r.stdout.trim();
    const key = `node${version.slice(1).split(".")[0]}`;
    if (!out.has(key)) out.set(key, { key, version, path });
  }
  return [...out.values()].sort((a, b) => Number(a.key.slice(4)) - Number(b.key.slice(4)));
}

/** The server start variants of a Node version: Node 22.18+ runs `.ts` itself, Node 20 needs tsx. */
export function spawnVariants(node: NodeVersion): string[] {
  return [Number(node.key.slice(4)) >= 22 ? "native" : "tsx", "dist", "bundle"];
}

const SPAWN_LABELS: Record<string, string> = {
  tsx: "source .ts under tsx (context)",
  native: "source .ts, type stripping",
  dist: "dist, per-file subpaths",
  bundle: "dist, /server/stdio bundle",
};

/** Paths the start-up sections need besides the package. */
export interface StartupPaths {
  rawServer: string;
  rawCli: string;
  tsx: string;
}

/** What one runner of a start-up pair starts for each variant on `node`. */
export function spawnServers(mode: Mode, node: NodeVersion, pkg: BuiltPackage, paths: StartupPaths): Record<string, ServerCommand> {
  const run = (...args: string[]): ServerCommand => ({ command: node.path, args });
  const loader = ["--import", paths.tsx];
  if (mode === "raw") {
    const raw = run(paths.rawServer);
    return { tsx: run(...loader, paths.rawServer), native: raw, dist: raw, bundle: raw };
  }
  const { source, dist, bundle } = pkg.servers;
  return { tsx: run(...loader, source), native: run(source), dist: run(dist), bundle: run(bundle) };
}

/**
 * The three runners of section 1: `raw` (raw client, raw server), `ours` (McpClient, our
 * servers) and `server` (raw client, our servers: the server's own share).
 */
export type SpawnSide = "raw" | "ours" | "server";

/** The spawn figures of one Node version (per side), or why a variant could not run there. */
export interface VersionSpawn {
  node: NodeVersion;
  raw: SpawnTimes;
  ours: SpawnTimes;
  server: SpawnTimes;
  failed: Record<string, string>;
}

/** One variant of the CLI's cold path on one Node version: ms per round, per side. */
export interface CliTimes {
  raw: number[];
  ours: number[];
}

export interface StartupResult {
  versions: NodeVersion[];
  spawn: VersionSpawn[];
  /** By Node key, then variant (`bundle`, `dist`). */
  cli: Record<string, Record<string, CliTimes>>;
}

/**
 * Section 1 on every version: `start(node, configs)` starts the runners of the three sides on
 * that Node (in the order given), `stop` quits them.
 */
export async function spawnOnEveryNode(
  versions: readonly NodeVersion[],
  plan: Plan,
  configFor: (side: SpawnSide, node: NodeVersion) => RunnerConfig,
  start: (node: NodeVersion, configs: readonly RunnerConfig[]) => readonly RunnerProcess[],
  stop: (runners: readonly RunnerProcess[]) => Promise<void>,
): Promise<VersionSpawn[]> {
  const out: VersionSpawn[] = [];
  for (const node of versions) {
    const [raw, ours, server] = start(node, [configFor("raw", node), configFor("ours", node), configFor("server", node)]);
    try {
      const { bySide, failed } = await spawnSection([raw!, ours!, server!], plan, spawnVariants(node));
      out.push({ node, raw: bySide.get(raw!)!, ours: bySide.get(ours!)!, server: bySide.get(server!)!, failed });
    } finally {
      await stop([raw!, ours!, server!]);
    }
  }
  return out;
}

/** Runs one command to its exit with the benchmark's environment; resolves with the wall time. */
function timeProcess(argv: readonly string[], started: (pid: number) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: benchEnv() });
    if (child.pid !== undefined) started(child.pid);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve(ms);
      else reject(new Error(`${argv.slice(0, 3).join(" ")} ... ended with ${code ?? signal}: ${stderr.slice(0, 500)}`));
    });
  });
}

/**
 * Section 1b on every version. `calibrate`: every variant runs the raw CLI too. `started` is
 * told each process id (for the leftover check).
 */
export async function cliOnEveryNode(
  versions: readonly NodeVersion[],
  plan: Plan,
  pkg: BuiltPackage,
  paths: StartupPaths,
  calibrate: boolean,
  started: (pid: number) => void,
): Promise<StartupResult["cli"]> {
  const out: StartupResult["cli"] = {};
  for (const node of versions) {
    const raw = [node.path, paths.rawCli, "--", node.path, paths.rawServer];
    const inspect = (cli: string): string[] => (calibrate ? raw : [node.path, cli, "inspect", "--json", "--", node.path, paths.rawServer]);
    const commands: Record<string, readonly string[]> = { raw, bundle: inspect(pkg.cliBundle), dist: inspect(pkg.cliPerFile) };
    const names = Object.keys(commands);
    const once = async (): Promise<Record<string, number>> => {
      const ms: Record<string, number> = {};
      for (const name of names) ms[name] = await timeProcess(commands[name]!, started);
      names.reverse(); // the next round starts with the variant this one ended with
      return ms;
    };
    for (let r = 0; r < plan.cliWarmupRounds; r++) await once();
    const rounds: Record<string, number>[] = [];
    for (let r = 0; r < plan.cliRounds; r++) rounds.push(await once());
    out[node.key] = Object.fromEntries(["bundle", "dist"].map((v) => [v, { raw: rounds.map((r) => r.raw!), ours: rounds.map((r) => r[v]!) }]));
  }
  return out;
}

export const STARTUP_SECTIONS = {
  spawn: "1. spawn + initialize + tools/list of a fresh stdio server (median of paired rounds; raw = raw-echo-server.mjs on the same Node)",
  cli: "1b. CLI cold path, process start to exit: mcp-bridge inspect --json of the raw server (raw = raw-cli.mjs, the same on the wire)",
} as const;

/** A start-up figure: the paired ratio, and the median of the paired differences as `gapMs`. */
function startupFigure(id: string, section: string, label: string, raw: readonly number[], ours: readonly number[], target: boolean): CompareFigure {
  const fig = compare(
    { id, section, label, unit: "ms", better: "lower", raw: median([...raw]), ours: median([...ours]) },
    target ? { text: `<= ${MAX_STARTUP_RATIO}x raw`, maxRatio: MAX_STARTUP_RATIO } : undefined,
    { raw, ours },
  );
  fig.gapMs = median(ours.map((o, i) => o - raw[i]!));
  return fig;
}

/** The figures of sections 1 and 1b; the targets are on the bundles on {@link TARGET_NODE}. */
export function buildStartupFigures(s: StartupResult): Figure[] {
  const figs: Figure[] = [];
  for (const v of s.spawn) {
    for (const variant of Object.keys(v.ours)) {
      const label = `${v.node.version} ${SPAWN_LABELS[variant] ?? variant}`;
      const target = v.node.key === TARGET_NODE && variant === "bundle";
      const raw = v.raw[variant]!;
      const ours = v.ours[variant]!;
      figs.push(startupFigure(`spawn.${v.node.key}.${variant}.ms`, STARTUP_SECTIONS.spawn, label, raw.roundMs, ours.roundMs, target));
      // CPU time hardly moves with the neighbours' load, where wall time does.
      if (raw.cpuRoundMs && ours.cpuRoundMs) {
        figs.push(startupFigure(`spawn.${v.node.key}.${variant}.cpuMs`, STARTUP_SECTIONS.spawn, "  CPU, client + server (/proc)", raw.cpuRoundMs, ours.cpuRoundMs, false));
      }
      figs.push(startupFigure(`spawn.${v.node.key}.${variant}.server.ms`, STARTUP_SECTIONS.spawn, "  the server alone (raw client)", raw.roundMs, v.server[variant]!.roundMs, false));
    }
  }
  for (const node of s.versions) {
    const cli = s.cli[node.key];
    if (!cli) continue;
    for (const [variant, times] of Object.entries(cli)) {
      const label = `${node.version} ${variant === "bundle" ? "bin (dist/cli bundle)" : "per-file dist/src/cli"}`;
      const target = node.key === TARGET_NODE && variant === "bundle";
      figs.push(startupFigure(`cli.${node.key}.${variant}.ms`, STARTUP_SECTIONS.cli, label, times.raw, times.ours, target));
    }
  }
  return figs;
}

/** Lines for the report's notes: every variant that could not run, and why. */
export function startupFailures(s: StartupResult): string[] {
  return s.spawn.flatMap((v) => Object.entries(v.failed).map(([variant, why]) => `spawn.${v.node.key}.${variant} did not run: ${why}`));
}
