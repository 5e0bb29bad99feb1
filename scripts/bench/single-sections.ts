/**
 * The benchmark's single-section modes, each a few sections alone on fresh runners, for the
 * work on one part without the whole run's half hour:
 *
 *   --startup         sections 1 and 1b (start-up on every Node version at hand)
 *   --stdio           sections 2 and 3 (stdio tools/call, sequential and 64 in flight)
 *   --http-stateless  sections 8d and 8e (stateless-era HTTP calls)
 *   --gateway         section 11 (mcp-bridge serve against direct calls, and many sessions)
 *   --schema          section 10 (the validator; no processes, run by scripts/bench.ts before
 *                     the package is built, as it needs none)
 *
 * scripts/bench.ts owns the runners and the child ledger and hands them in as
 * {@link SectionDeps}; each mode prints its figures with the load average around it and the
 * notes that concern its sections.
 */
import { loadavg } from "node:os";
import { buildGatewayFigures, GATEWAY_SESSIONS, gatewayRunnerConfigs, gatewaySection } from "./gateway.ts";
import { buildHttpStatelessFigures, httpPlan, httpStatelessSection } from "./http.ts";
import { callSection, FULL_PLAN, QUICK_PLAN, type ForkRunners, type Plan, type Sides } from "./measure.ts";
import type { StartupSetup } from "./profile-mode.ts";
import { buildCallFigures, formatFigures, type Figure } from "./report.ts";
import type { RunnerProcess } from "./runner-process.ts";
import { buildStartupFigures, cliOnEveryNode, nodeVersions, spawnOnEveryNode, spawnServers, startupFailures, type NodeVersion, type StartupResult } from "./startup.ts";
import type { Mode, RunnerConfig } from "./types.ts";

export type SingleSection = "startup" | "stdio" | "http-stateless" | "gateway";

/** The flag of each mode, as scripts/bench.ts parses it. */
export const SINGLE_SECTION_FLAGS: Readonly<Record<`--${SingleSection}`, SingleSection>> = {
  "--startup": "startup",
  "--stdio": "stdio",
  "--http-stateless": "http-stateless",
  "--gateway": "gateway",
};

/** What a mode needs from scripts/bench.ts. */
export interface SectionDeps {
  root: string;
  work: string;
  startup: StartupSetup;
  quick: boolean;
  calibrate: boolean;
  /** The whole run's notes (scripts/bench.ts NOTES), of which each mode prints its own. */
  notes: readonly string[];
  /** A runner's config: pinned when taskset exists, and the raw baseline on both sides under --calibrate. */
  pinned(mode: Mode): RunnerConfig;
  /** The same, never pinned and never calibrated (section 11 is ours on both sides). */
  config(mode: Mode): RunnerConfig;
  /** Pin of runner and servers, when taskset exists. */
  pin: Pick<RunnerConfig, "pin">;
  /** A runner (on the Node binary `node`, default this one), tracked in the child ledger. */
  startRunner(config: RunnerConfig, node?: string): RunnerProcess;
  quitRunners(list: Sides): Promise<void>;
  /** Puts a process this file started (a CLI run of 1b) in the child ledger. */
  trackPid(pid: number): void;
  progress(message: string): void;
}

/** What a mode measured: its figures, the notes to print above them, and its raw result for --json. */
export interface SectionOutcome {
  notes: string[];
  figures: Figure[];
  /** The result under its report key (`startup`, `httpStateless`, `gateway`). */
  result: Record<string, unknown>;
}

/**
 * Sections 1 and 1b on every Node version at hand (also part of the whole run): a fresh
 * pinned pair of runners on each version for section 1, then the CLI's processes.
 */
export async function startupSections(deps: SectionDeps, plan: Plan, versions: NodeVersion[]): Promise<StartupResult> {
  const { startup, calibrate, pin } = deps;
  // --calibrate: every side runs the raw client and the raw server.
  const raw = (m: Mode): Mode => (calibrate ? "raw" : m);
  deps.progress(`1. spawn + initialize + tools/list on ${versions.map((v) => v.version).join(", ")}`);
  const spawn = await spawnOnEveryNode(
    versions,
    plan,
    (side, node) => {
      const servers = spawnServers(raw(side === "raw" ? "raw" : "ours"), node, startup.pkg, startup.paths);
      // Only `spawnServers` is used by a start-up runner; the rest names any server of them.
      const mode = raw(side === "ours" ? "ours" : "raw");
      return { mode, spawnServers: servers, server: servers.dist!, manyToolsServer: servers.dist!, httpServer: servers.dist!, ...pin };
    },
    (node, configs) => configs.map((c) => deps.startRunner(c, node.path)),
    deps.quitRunners,
  );
  deps.progress("1b. CLI cold path: inspect of a stdio server, process start to exit");
  const cli = await cliOnEveryNode(versions, plan, startup.pkg, startup.paths, calibrate, deps.trackPid);
  return { versions, spawn, cli };
}

/** Runs one mode; the load average is read around it. */
export async function runSingleSection(section: SingleSection, deps: SectionDeps): Promise<SectionOutcome> {
  const load = loadavg()[0]!.toFixed(1);
  const out = await measureSection(section, deps);
  return { ...out, notes: [`load average ${load} -> ${loadavg()[0]!.toFixed(1)}`, ...out.notes] };
}

/** The text a mode prints: its notes, then its figures. */
export function formatSection(outcome: SectionOutcome): string {
  return [...outcome.notes, formatFigures(outcome.figures)].join("\n");
}

/** A fresh pinned pair of runners (raw, ours) per fork. */
function pinnedForks(deps: SectionDeps): ForkRunners {
  return { start: () => [deps.startRunner(deps.pinned("raw")), deps.startRunner(deps.pinned("ours"))], stop: deps.quitRunners };
}

async function measureSection(section: SingleSection, deps: SectionDeps): Promise<SectionOutcome> {
  const plan = deps.quick ? QUICK_PLAN : FULL_PLAN;
  const { notes } = deps;
  switch (section) {
    case "startup": {
      const result = await startupSections(deps, plan, nodeVersions(deps.root));
      return { notes: [...notes.slice(2, 3), ...startupFailures(result)], figures: buildStartupFigures(result), result: { startup: result } };
    }
    case "stdio": {
      const forks = pinnedForks(deps);
      const sides = forks.start();
      deps.progress("2, 3. tools/call, sequential and 64 in flight");
      const calls = await callSection(sides, plan, "stdio", undefined, forks);
      await deps.quitRunners(sides);
      const result = { raw: calls.get(sides[0]!)!, ours: calls.get(sides[1]!)! };
      return { notes: [...notes.slice(0, 3), notes[5]!, notes[notes.length - 2]!], figures: buildCallFigures(result.raw, result.ours), result: { stdio: result } };
    }
    case "http-stateless": {
      const forks = pinnedForks(deps);
      const sides = forks.start();
      deps.progress("8d-e. tools/call over Streamable HTTP in the stateless era (2026-07-28), sequential and 64 in flight");
      const era = await httpStatelessSection(sides, httpPlan(deps.quick, plan), forks);
      await deps.quitRunners(sides);
      const result = { raw: era.get(sides[0]!)!, ours: era.get(sides[1]!)! };
      return { notes: [...notes.slice(2, 4), ...notes.slice(8, 9), notes[notes.length - 2]!], figures: buildHttpStatelessFigures(result.raw, result.ours), result: { httpStateless: result } };
    }
    case "gateway": {
      deps.progress("11. mcp-bridge serve: calls through the gateway vs direct, stdio and HTTP; many downstream sessions");
      const sides = gatewayRunnerConfigs({ ...deps.config("ours"), ...deps.pin }, deps.work, deps.startup.pkg.cliBundle).map((c) => deps.startRunner(c));
      const gateway = await gatewaySection(sides, { stdio: plan, http: httpPlan(deps.quick, plan), sessions: deps.quick ? 20 : GATEWAY_SESSIONS });
      await deps.quitRunners(sides);
      const own = notes.filter((n) => n.startsWith("Section 11") || n === notes[notes.length - 2]);
      return { notes: [...notes.slice(2, 3), ...own], figures: buildGatewayFigures(gateway), result: { gateway } };
    }
  }
}
