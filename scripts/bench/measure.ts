/**
 * The benchmark's schedule: each section is run in rounds, raw and ours taking turns
 * (raw first in even rounds, ours first in odd ones), so slow drift on a shared machine
 * (CPU frequency, neighbours, page cache) lands on both sides alike. Warm-up rounds run the
 * same commands first and are thrown away.
 */
import type { RunnerProcess } from "./runner-process.ts";
import { callStats, median, type Budget } from "./stats.ts";
import type { CallRound, CallSummary, PayloadResult, SideResult, Via } from "./types.ts";

export interface Plan {
  /**
   * Runner processes per side for the call sections (2, 3 and 8): each fork is a fresh pair
   * of runners and servers doing the warm-ups and `seqRounds`/`flightRounds` again, and the
   * rounds of all forks are pooled. Where a process lands on this kind of machine moves a
   * throughput ratio by several percent for its whole life (identical raw-vs-raw runners
   * measured 0.93-1.10x), so one pair of processes is one sample, not a measurement.
   */
  forks: number;
  spawnWarmupRounds: number;
  spawnRounds: number;
  /** The CLI's cold path (section 1b): whole processes, each variant once per round. */
  cliWarmupRounds: number;
  cliRounds: number;
  seqWarmup: Budget;
  seqRounds: number;
  seqRound: Budget;
  concurrency: number;
  flightWarmup: Budget;
  flightRounds: number;
  flightRound: Budget;
  listWarmupRuns: number;
  listRounds: number;
  listRunsPerRound: number;
  /** Sizes in MiB, each with its own warm-up echo and rounds (one echo per side per round). */
  payloads: readonly { mib: number; rounds: number }[];
}

/** Budgets cross a JSON pipe, where Infinity would turn into null: "no limit" is ten minutes. */
export const NO_TIME_LIMIT = 600_000;

export const FULL_PLAN: Plan = {
  forks: 3,
  spawnWarmupRounds: 1,
  spawnRounds: 16,
  cliWarmupRounds: 1,
  cliRounds: 16,
  // Warm-ups long enough for V8 to optimise both sides (our code is larger than the raw
  // baseline, so a short warm-up measures the JIT rather than the library).
  seqWarmup: { iterations: 10000, ms: NO_TIME_LIMIT },
  seqRounds: 5,
  seqRound: { iterations: 2000, ms: 400 },
  concurrency: 64,
  flightWarmup: { iterations: 20000, ms: NO_TIME_LIMIT },
  flightRounds: 3,
  flightRound: { iterations: 20_000, ms: 400 },
  // 30 listings left McpServer's list path half-optimised (1.45-1.53x the raw server, 1.1-1.25x
  // after 200 more); the figure then swung with when V8's compiler thread got the CPU.
  listWarmupRuns: 250,
  listRounds: 5,
  listRunsPerRound: 4,
  payloads: [
    { mib: 1, rounds: 5 },
    { mib: 4, rounds: 3 },
    { mib: 16, rounds: 3 },
  ],
};

/** Every section still runs, so every figure exists; just once or a few times (two forks, so that path runs too). */
export const QUICK_PLAN: Plan = {
  forks: 2,
  spawnWarmupRounds: 0,
  spawnRounds: 1,
  cliWarmupRounds: 0,
  cliRounds: 1,
  seqWarmup: { iterations: 5, ms: NO_TIME_LIMIT },
  seqRounds: 1,
  seqRound: { iterations: 20, ms: 1000 },
  concurrency: 64,
  flightWarmup: { iterations: 64, ms: NO_TIME_LIMIT },
  flightRounds: 1,
  flightRound: { iterations: 128, ms: 1000 },
  listWarmupRuns: 0,
  listRounds: 1,
  listRunsPerRound: 1,
  payloads: [
    { mib: 1, rounds: 1 },
    { mib: 4, rounds: 1 },
    { mib: 16, rounds: 1 },
  ],
};

export type Sides = readonly RunnerProcess[];

/** Starts the runners of one more fork (same configs, same order as the first) and stops them. */
export interface ForkRunners {
  start(): Sides;
  stop(sides: Sides): Promise<void>;
}

/** Runs `body` for every side in `n` rounds, alternating who goes first; results by side. */
export async function inRounds<T>(sides: Sides, n: number, body: (side: RunnerProcess) => Promise<T>): Promise<Map<RunnerProcess, T[]>> {
  const out = new Map<RunnerProcess, T[]>(sides.map((s) => [s, []]));
  for (let round = 0; round < n; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) out.get(side)!.push(await body(side));
  }
  return out;
}

/** Spawn results of one side: per start variant that worked on both sides. */
export type SpawnTimes = Record<string, { medianMs: number; runs: number; roundMs: number[]; cpuRoundMs?: number[] }>;

/**
 * 1. spawn + initialize + tools/list, every start variant in every round. A variant that fails
 * on either side (a server that cannot start on this Node) is dropped from then on and listed
 * in `failed` with the first line of the reason.
 */
export async function spawnSection(
  sides: Sides,
  plan: Plan,
  variants: readonly string[],
): Promise<{ bySide: Map<RunnerProcess, SpawnTimes>; failed: Record<string, string> }> {
  const failed: Record<string, string> = {};
  const once = async (side: RunnerProcess): Promise<Record<string, { ms: number; cpuMs: number | null }>> => {
    const ms: Record<string, { ms: number; cpuMs: number | null }> = {};
    for (const variant of variants) {
      if (failed[variant] !== undefined) continue;
      try {
        ms[variant] = await side.ask({ cmd: "spawn", variant });
      } catch (err) {
        failed[variant] = `${side.config.mode}: ${reason(err)}`;
      }
    }
    return ms;
  };
  // At least one round before the timed ones, so that a failing variant is known before them.
  await inRounds(sides, Math.max(1, plan.spawnWarmupRounds), once);
  const rounds = await inRounds(sides, plan.spawnRounds, once);
  const ok = variants.filter((v) => failed[v] === undefined);
  const bySide = mapValues(rounds, (list) =>
    Object.fromEntries(
      ok.map((v) => {
        const roundMs = list.map((r) => r[v]!.ms);
        const cpu = list.map((r) => r[v]!.cpuMs);
        const times = { medianMs: median(roundMs), runs: list.length, roundMs };
        return [v, cpu.every((c) => c !== null) ? { ...times, cpuRoundMs: cpu as number[] } : times];
      }),
    ),
  );
  return { bySide, failed };
}

/** The line of a runner's error that says why (its stack and the server's stderr left out). */
function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines = text.split("\n");
  const why = lines.find((l) => /ERR_[A-Z_]+/.test(l)) ?? lines[0]!;
  return why.trim().slice(0, 300);
}

/**
 * 2, 3 (and 8, `via` "http"). small echoes: one at a time, then `concurrency` in flight, in
 * `plan.forks` forks: `sides` is the first, `forks` starts the others. Rounds are paired
 * within a fork and pooled across forks, in the same order on every side. The results are
 * keyed by `sides`. `afterFlightWarmup` runs for each side of the first fork once its
 * in-flight warm-up is done.
 */
export async function callSection(
  sides: Sides,
  plan: Plan,
  via: Via = "stdio",
  afterFlightWarmup?: (side: RunnerProcess) => Promise<void>,
  forks?: ForkRunners,
): Promise<Map<RunnerProcess, Pick<SideResult, "sequential" | "inFlight">>> {
  const seq = sides.map((): CallRound[] => []);
  const flight = sides.map((): CallRound[] => []);
  const { concurrency } = plan;
  const runFork = async (fork: Sides, first: boolean): Promise<void> => {
    for (const side of fork) await side.ask({ cmd: "sequential", budget: plan.seqWarmup, via });
    const s = await inRounds(fork, plan.seqRounds, (side) => side.ask({ cmd: "sequential", budget: plan.seqRound, via }));
    for (const side of fork) {
      await side.ask({ cmd: "inFlight", budget: plan.flightWarmup, concurrency, via });
      if (first) await afterFlightWarmup?.(side);
    }
    const f = await inRounds(fork, plan.flightRounds, (side) => side.ask({ cmd: "inFlight", budget: plan.flightRound, concurrency, via }));
    fork.forEach((side, i) => {
      seq[i]!.push(...s.get(side)!);
      flight[i]!.push(...f.get(side)!);
    });
  };
  await runFork(sides, true);
  for (let n = 1; n < plan.forks; n++) {
    if (!forks) throw new Error("callSection: plan.forks > 1 needs a way to start fresh runners");
    const fork = forks.start();
    try {
      await runFork(fork, false);
    } finally {
      await forks.stop(fork);
    }
  }
  const out = new Map<RunnerProcess, Pick<SideResult, "sequential" | "inFlight">>();
  sides.forEach((side, i) => {
    out.set(side, { sequential: summarizeCalls(seq[i]!), inFlight: { ...summarizeCalls(flight[i]!), concurrency } });
  });
  return out;
}

/** Throughput, pooled latencies and CPU per call of a list of rounds. */
export function summarizeCalls(list: readonly CallRound[]): CallSummary {
  const calls = list.reduce((n, r) => n + r.latenciesMs.length, 0);
  const pooled = callStats(list.flatMap((r) => r.latenciesMs), list.reduce((t, r) => t + r.elapsedMs, 0));
  const serverCpu = list.every((r) => r.serverCpuMs !== null) ? list.reduce((t, r) => t + r.serverCpuMs!, 0) : null;
  const roundRates = list.map((r) => callStats(r.latenciesMs, r.elapsedMs).callsPerSec);
  return {
    ...pooled,
    // A round disturbed by a neighbour should not drag the figure: median of per-round rates.
    callsPerSec: median(roundRates),
    rounds: list.length,
    roundRates,
    clientCpuUsPerCall: (list.reduce((t, r) => t + r.clientCpuMs, 0) * 1000) / calls,
    serverCpuUsPerCall: serverCpu === null ? null : (serverCpu * 1000) / calls,
  };
}

/** 5. full listings of the server with many tools. */
export async function listSection(sides: Sides, plan: Plan): Promise<Map<RunnerProcess, SideResult["manyTools"]>> {
  for (const side of sides) await side.ask({ cmd: "list", runs: plan.listWarmupRuns });
  const rounds = await inRounds(sides, plan.listRounds, (side) => side.ask({ cmd: "list", runs: plan.listRunsPerRound }));
  return mapValues(rounds, (list) => {
    const times = list.flatMap((r) => r.timesMs);
    const last = list[list.length - 1]!;
    return { medianMs: median(times), runs: times.length, tools: last.tools, extraTools: last.tools - last.baseTools };
  });
}

/**
 * 6. echoes of each size: a warm-up echo, then rounds of one echo per side. Sizes are done
 * one after the other, so each echo follows one of the same size and inherits the same
 * garbage-collection debt.
 */
export async function payloadSection(sides: Sides, plan: Plan): Promise<Map<RunnerProcess, PayloadResult[]>> {
  const out = new Map<RunnerProcess, PayloadResult[]>(sides.map((s) => [s, []]));
  for (const { mib, rounds } of plan.payloads) {
    for (const side of sides) await side.ask({ cmd: "payload", mib, runs: 1 });
    const runs = await inRounds(sides, rounds, (side) => side.ask({ cmd: "payload", mib, runs: 1 }));
    for (const [side, list] of runs) {
      const medianMs = median(list.flatMap((r) => r.timesMs));
      out.get(side)!.push({ mib, medianMs, mibPerSec: (mib * 1000) / medianMs, runs: list.length, ok: list.every((r) => r.ok) });
    }
  }
  return out;
}

function mapValues<K, A, B>(m: Map<K, A>, f: (a: A) => B): Map<K, B> {
  return new Map([...m].map(([k, v]) => [k, f(v)]));
}
