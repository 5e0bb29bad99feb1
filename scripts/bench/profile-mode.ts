/**
 * `npm run bench -- --profile [DIR] --profile-section S`: CPU profiles of both sides of one
 * section of the benchmark, each side alone under the profiler, summarised (profile.ts).
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { httpProfilePlan, httpSection, httpStatelessSection } from "./http.ts";
import { FLEET, managerProfilePlan, managerSection, type ManagerPlan } from "./manager.ts";
import { FULL_PLAN, NO_TIME_LIMIT, QUICK_PLAN, callSection, listSection, payloadSection, spawnSection, type Plan, type Sides } from "./measure.ts";
import type { BuiltPackage } from "./package.ts";
import { formatSummary, summarizeDir } from "./profile.ts";
import type { RunnerProcess } from "./runner-process.ts";
import { spawnVariants, type NodeVersion, type StartupPaths } from "./startup.ts";
import type { Mode } from "./types.ts";

export const PROFILE_SECTIONS = ["calls", "list", "payloads", "spawn", "http", "http-stateless", "manager"] as const;
export type ProfileSection = (typeof PROFILE_SECTIONS)[number];

/** Extra tools of the server section 5 lists. */
export const MANY_TOOLS = 1000;

/** CPU profile flags, sampled every 100 us (the default 1 ms is too coarse for these runs). */
export function cpuProfFlags(dir: string): string[] {
  return ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "100"];
}

/** The package the start-up sections run, and this process's Node (sections 2-9 run on it). */
export interface StartupSetup {
  pkg: BuiltPackage;
  paths: StartupPaths;
  here: NodeVersion;
}

async function runSection(section: ProfileSection, sides: Sides, plan: Plan, mplan: ManagerPlan, startup: StartupSetup): Promise<void> {
  if (section === "spawn") await spawnSection(sides, plan, spawnVariants(startup.here));
  else if (section === "http") await httpSection(sides, plan);
  else if (section === "http-stateless") await httpStatelessSection(sides, plan);
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
function workOf(section: ProfileSection, p: Plan, m: ManagerPlan, startup: StartupSetup): string {
  switch (section) {
    case "http":
    case "http-stateless":
    case "calls": {
      const seq = p.seqWarmup.iterations + p.seqRounds * p.seqRound.iterations;
      const flight = p.flightWarmup.iterations + p.flightRounds * p.flightRound.iterations;
      return `${seq} sequential + ${flight} in-flight echo calls`;
    }
    case "manager": {
      const calls = m.callWarmup.iterations + m.callRounds * m.callRound.iterations;
      return `${m.connectWarmupRounds + m.connectRounds} rounds of connecting 1 and ${FLEET} servers; about ${calls} plain, ${calls} bridged and ${calls} untrusted echo calls`;
    }
    case "list":
      return `${p.listWarmupRuns + p.listRounds * p.listRunsPerRound} listings of ${MANY_TOOLS} extra tools`;
    case "payloads":
      return p.payloads.map((x) => `${x.rounds + 1} x ${x.mib} MiB`).join(", ") + " echoes";
    case "spawn":
      return `${(Math.max(1, p.spawnWarmupRounds) + p.spawnRounds) * spawnVariants(startup.here).length} spawns (${spawnVariants(startup.here).join(", ")})`;
  }
}

/** What a profile run needs to know. */
export interface ProfileRun {
  quick: boolean;
  section: ProfileSection;
  /** Where the profiles go (emptied first). */
  dir: string;
  /** The transpiled tree our code ran from (kept, so that line numbers can be looked up). */
  work: string;
  startup: StartupSetup;
  progress: (message: string) => void;
}

/**
 * One side at a time, alone under the profiler, then a summary of each profile written.
 * `start` starts a runner of a mode with the profiler on (its servers' flags in its config);
 * `finish` quits it.
 */
export async function profileMode(run: ProfileRun, start: (mode: Mode) => RunnerProcess, finish: (runner: RunnerProcess) => Promise<void>): Promise<string> {
  const { dir, work, section } = run;
  await rm(dir, { recursive: true, force: true });
  const base = run.quick ? QUICK_PLAN : FULL_PLAN;
  const plan = section === "http" || section === "http-stateless" ? httpProfilePlan(run.quick, base) : forProfile(base);
  const mplan = managerProfilePlan(run.quick);
  // Section 9 compares ways of using mcp-bridge; the raw runner takes no part.
  for (const mode of section === "manager" ? (["ours"] as const) : (["raw", "ours"] as const)) {
    run.progress(`profiling the ${mode} side of section "${section}"`);
    await mkdir(join(dir, `server-${mode}`), { recursive: true });
    const runner = start(mode);
    await runSection(section, [runner], plan, mplan, run.startup);
    await finish(runner);
  }
  const parts = [
    `CPU profiles of section "${section}" in ${dir} (self time; idle left out)`,
    `Each side did the same work: ${workOf(section, plan, mplan, run.startup)}.`,
    "Wall-clock sampling: a syscall's time (writeUtf8String = write(2) to the pipe) includes waking the reader.",
    `Our code ran transpiled from ${work} (kept); line numbers refer to those .js files.`,
  ];
  for (const side of ["client-raw", "client-ours", "server-raw", "server-ours"]) {
    const summaries = await summarizeDir(join(dir, side), work, 20).catch(() => new Map());
    for (const [file, s] of summaries) parts.push("", formatSummary(`${side} (${file})`, s));
  }
  return parts.join("\n");
}
