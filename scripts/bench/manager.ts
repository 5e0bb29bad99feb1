/**
 * Section 9 of the benchmark, on the ours runner alone (both sides are mcp-bridge):
 * a. McpManager.connect of 10 stdio echo servers in parallel against one server alone;
 * b. sequential echoes through McpManager.callTool ("mcp__echo__echo") against a plain
 *    McpClient on the same kind of server (the bridge's own cost per call);
 * c. the same through the default path of an `untrusted` server (result wrapped in markers,
 *    injection scan, first-use approval granted), against the same plain calls.
 * Connects of 1 and of 10 take turns round by round; plain, bridged and untrusted echoes take
 * turns call by call (on a shared machine, a round of one against a round of the other swings by 2x).
 */
import { NO_TIME_LIMIT } from "./measure.ts";
import { compare, type Figure } from "./report.ts";
import type { RunnerProcess } from "./runner-process.ts";
import { median, percentile, type Budget } from "./stats.ts";

export const FLEET = 10;

export interface ManagerPlan {
  connectWarmupRounds: number;
  connectRounds: number;
  callWarmup: Budget;
  callRounds: number;
  callRound: Budget;
}

export const FULL_MANAGER_PLAN: ManagerPlan = {
  connectWarmupRounds: 1,
  connectRounds: 5,
  callWarmup: { iterations: 5000, ms: 1500 },
  callRounds: 5,
  callRound: { iterations: 5000, ms: 300 },
};

export const QUICK_MANAGER_PLAN: ManagerPlan = {
  connectWarmupRounds: 0,
  connectRounds: 1,
  callWarmup: { iterations: 5, ms: NO_TIME_LIMIT },
  callRounds: 1,
  callRound: { iterations: 20, ms: 1000 },
};

export function managerPlan(quick: boolean): ManagerPlan {
  return quick ? QUICK_MANAGER_PLAN : FULL_MANAGER_PLAN;
}

/** The same work without time limits, for profiles. */
export function managerProfilePlan(quick: boolean): ManagerPlan {
  const p = managerPlan(quick);
  const all = (b: Budget): Budget => ({ iterations: b.iterations, ms: NO_TIME_LIMIT });
  return { ...p, callWarmup: all(p.callWarmup), callRound: all(p.callRound) };
}

/** Sequential echoes of one kind: the median over rounds of the mean time per call, and pooled percentiles. */
export interface ManagerCalls {
  usPerCall: number;
  p50Ms: number;
  p99Ms: number;
  calls: number;
}

export interface ManagerResult {
  /** Median ms of connect() for one server and for {@link FLEET} in parallel. */
  connect: { oneMs: number; fleetMs: number; servers: number; rounds: number };
  plain: ManagerCalls;
  bridged: ManagerCalls;
  /** The default path of an untrusted server (see manager-runner.ts). */
  untrusted: ManagerCalls;
  rounds: number;
}

export const MANAGER_SECTIONS = {
  connect: `9a. McpManager.connect of stdio echo servers, until all ready (median; ratio = ${FLEET} in parallel / 1 alone; info)`,
  call: '9b. sequential tools/call echo, call by call in turn: manager.callTool("mcp__echo__echo") vs a plain McpClient (ratio = bridged/plain)',
  untrusted: "9c. the same through the default path of an untrusted server: markers, injection scan, approval granted (ratio = untrusted/plain)",
} as const;

/** Runs `a` and `b` in `n` rounds, alternating which goes first. */
async function alternate<T>(n: number, a: () => Promise<T>, b: () => Promise<T>): Promise<{ a: T[]; b: T[] }> {
  const out = { a: [] as T[], b: [] as T[] };
  for (let round = 0; round < n; round++) {
    if (round % 2 === 0) {
      out.a.push(await a());
      out.b.push(await b());
    } else {
      out.b.push(await b());
      out.a.push(await a());
    }
  }
  return out;
}

/**
 * Runs section 9: connects on `connecter` (an unpinned runner: the servers of a connect must be
 * free to start on every CPU), echoes on `caller` (pinned where possible).
 */
export async function managerSection(connecter: RunnerProcess, caller: RunnerProcess, plan: ManagerPlan): Promise<ManagerResult> {
  const connect = (servers: number) => async () => (await connecter.ask({ cmd: "managerConnect", servers })).ms;
  await alternate(plan.connectWarmupRounds, connect(1), connect(FLEET));
  const times = await alternate(plan.connectRounds, connect(1), connect(FLEET));

  await caller.ask({ cmd: "managerCalls", budget: plan.callWarmup });
  const rounds: { plainMs: number[]; bridgedMs: number[]; untrustedMs: number[] }[] = [];
  for (let i = 0; i < plan.callRounds; i++) rounds.push(await caller.ask({ cmd: "managerCalls", budget: plan.callRound }));
  const summarize = (pick: (r: (typeof rounds)[number]) => number[]): ManagerCalls => {
    const all = rounds.flatMap(pick);
    const mean = (xs: number[]): number => (1000 * xs.reduce((t, x) => t + x, 0)) / xs.length;
    return { usPerCall: median(rounds.map((r) => mean(pick(r)))), p50Ms: percentile(all, 50), p99Ms: percentile(all, 99), calls: all.length };
  };
  return {
    connect: { oneMs: median(times.a), fleetMs: median(times.b), servers: FLEET, rounds: plan.connectRounds },
    plain: summarize((r) => r.plainMs),
    bridged: summarize((r) => r.bridgedMs),
    untrusted: summarize((r) => r.untrustedMs),
    rounds: plan.callRounds,
  };
}

/** The figures of section 9, in print order. */
export function buildManagerFigures(m: ManagerResult): Figure[] {
  const connect = MANAGER_SECTIONS.connect;
  const call = MANAGER_SECTIONS.call;
  const pair = { raw: "plain", ours: "bridged" };
  const { plain: p, bridged: b, untrusted: u } = m;
  const untrusted = MANAGER_SECTIONS.untrusted;
  const pairU = { raw: "plain", ours: "untrusted" };
  return [
    compare({
      id: "manager.connect.ms",
      section: connect,
      label: `connect 1 vs ${m.connect.servers} servers in parallel`,
      unit: "ms",
      better: "lower",
      raw: m.connect.oneMs,
      ours: m.connect.fleetMs,
      heads: { raw: "1", ours: String(m.connect.servers) },
    }),
    compare(
      { id: "manager.call.usPerCall", section: call, label: "time per call (mean)", unit: "us", better: "lower", raw: p.usPerCall, ours: b.usPerCall, heads: pair },
      { text: "<= 1.1x plain", maxRatio: 1.1 },
    ),
    compare({ id: "manager.call.p50Ms", section: call, label: "latency p50", unit: "ms", better: "lower", raw: p.p50Ms, ours: b.p50Ms, heads: pair }),
    compare({ id: "manager.call.p99Ms", section: call, label: "latency p99", unit: "ms", better: "lower", raw: p.p99Ms, ours: b.p99Ms, heads: pair }),
    compare(
      { id: "manager.untrusted.usPerCall", section: untrusted, label: "time per call (mean)", unit: "us", better: "lower", raw: p.usPerCall, ours: u.usPerCall, heads: pairU },
      { text: "<= 1.2x plain", maxRatio: 1.2 },
    ),
    compare({ id: "manager.untrusted.p50Ms", section: untrusted, label: "latency p50", unit: "ms", better: "lower", raw: p.p50Ms, ours: u.p50Ms, heads: pairU }),
    compare({ id: "manager.untrusted.p99Ms", section: untrusted, label: "latency p99", unit: "ms", better: "lower", raw: p.p99Ms, ours: u.p99Ms, heads: pairU }),
  ];
}
