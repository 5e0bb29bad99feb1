/**
 * Section 8 of the benchmark: tools/call over Streamable HTTP, sequential and 64 in flight.
 * Ours: McpClient + StreamableHttpClientTransport against the echo fixture's McpServer on a
 * StreamableHttpServer. Raw: a node:http keep-alive pair written without the library
 * (raw-http-client.ts, raw-http-server.ts). Each server runs in a child process of its runner,
 * under plain node. Also reported: whether the client's keep-alive agent stays flat (sockets
 * and listeners) from after the 64-in-flight warm-up to the end of the section.
 */
import { callSection, NO_TIME_LIMIT, type ForkRunners, type Plan, type Sides } from "./measure.ts";
import { compare, type Figure, type ValueFigure } from "./report.ts";
import type { RunnerProcess } from "./runner-process.ts";
import type { AgentProbe, CallSummary, Mode } from "./types.ts";

type Probe = AgentProbe & { maxListenersWarnings: number };

/** Everything the HTTP section measured for one side. */
export interface HttpSideResult {
  mode: Mode;
  sequential: CallSummary;
  inFlight: CallSummary & { concurrency: number };
  /** The client's agent after the 64-in-flight warm-up, and at the end of the section. */
  agent: { afterWarmup: Probe; atEnd: Probe };
}

export const HTTP_SECTIONS = {
  sequential: "8a. Streamable HTTP: sequential tools/call echo (raw = node:http keep-alive pair, one POST per call)",
  inFlight: "8b. Streamable HTTP: tools/call echo, 64 in flight",
  agent: "8c. Streamable HTTP: our client's keep-alive agent, after the 64-in-flight warm-up -> at the end of section 8 (info)",
  statelessSequential:
    "8d. Streamable HTTP, stateless era (2026-07-28): sequential tools/call echo, no session, per-request _meta and headers (raw = the node:http pair sending the same)",
  statelessInFlight: "8e. Streamable HTTP, stateless era (2026-07-28): tools/call echo, 64 in flight",
} as const;

/** What the stateless-era part of section 8 measured for one side. */
export type HttpStatelessSideResult = Pick<HttpSideResult, "mode" | "sequential" | "inFlight">;

/**
 * The call budgets of section 8 (and of the gateway's HTTP rows): a longer warm-up than
 * sections 2-3, shorter rounds. Warm-ups are counted in calls, never capped by time: with a
 * time cap, the side that is slower before V8 has optimised it (ours: far more code; a
 * gateway: a whole hop more) gets fewer warm-up calls, and on a loaded machine a section then
 * measured half-tiered code, and the optimising compiler's thread, on one side only. Rounds
 * stay time-capped.
 */
export function httpPlan(quick: boolean, base: Plan): Plan {
  if (quick) return base;
  return {
    ...base,
    // Our client and server have far more code than the raw pair for V8 to optimise: a
    // 2000-call warm-up left ours half-tiered (0.6-0.8x raw); 10 000 calls get both steady.
    seqWarmup: { iterations: 10_000, ms: NO_TIME_LIMIT },
    seqRounds: 6,
    seqRound: { iterations: 4000, ms: 300 },
    flightWarmup: { iterations: 5000, ms: NO_TIME_LIMIT },
    // Rounds of 150 ms (about 2000 calls) swung the stateless in-flight ratio from 0.54x to
    // 1.16x within one run, and a median of six such rounds moved by 0.2x between runs.
    flightRounds: 4,
    flightRound: { iterations: 40_000, ms: 300 },
  };
}

/** The same work without time limits, for profiles (both sides do exactly the same calls). */
export function httpProfilePlan(quick: boolean, base: Plan): Plan {
  const p = { ...httpPlan(quick, base), forks: 1 };
  const all = (b: Plan["seqRound"]) => ({ iterations: b.iterations, ms: NO_TIME_LIMIT });
  return { ...p, seqWarmup: all(p.seqWarmup), seqRound: all(p.seqRound), flightWarmup: all(p.flightWarmup), flightRound: all(p.flightRound) };
}

/**
 * Runs section 8 on every side (each runner starts its own HTTP server on first use), in
 * `plan.forks` forks. The agent is probed in the first fork: after its warm-up, and at the end
 * of the section, when that fork's runners have been idle while the others ran.
 */
export async function httpSection(sides: Sides, plan: Plan, forks?: ForkRunners): Promise<Map<RunnerProcess, HttpSideResult>> {
  const afterWarmup = new Map<RunnerProcess, Probe>();
  const probe = async (side: RunnerProcess): Promise<void> => {
    afterWarmup.set(side, await side.ask({ cmd: "httpProbe" }));
  };
  const calls = await callSection(sides, plan, "http", probe, forks);
  const out = new Map<RunnerProcess, HttpSideResult>();
  for (const side of sides) {
    const atEnd = await side.ask({ cmd: "httpProbe" });
    out.set(side, { mode: side.config.mode, ...calls.get(side)!, agent: { afterWarmup: afterWarmup.get(side)!, atEnd } });
  }
  return out;
}

/**
 * Sections 8d and 8e: the same calls in the stateless era (2026-07-28), a self-contained POST
 * each. Run by the runners of section 8, after it.
 */
export async function httpStatelessSection(sides: Sides, plan: Plan, forks?: ForkRunners): Promise<Map<RunnerProcess, HttpStatelessSideResult>> {
  const calls = await callSection(sides, plan, "http-stateless", undefined, forks);
  return new Map(sides.map((side) => [side, { mode: side.config.mode, ...calls.get(side)! }]));
}

/** The figures of sections 8d and 8e: throughput (with its target), latency and CPU per call. */
export function buildHttpStatelessFigures(raw: HttpStatelessSideResult, ours: HttpStatelessSideResult): Figure[] {
  return callFigures(raw, ours, "http.stateless", [
    ["sequential", HTTP_SECTIONS.statelessSequential, 0.85],
    ["inFlight", HTTP_SECTIONS.statelessInFlight, 0.8],
  ]);
}

/**
 * Throughput, latency and CPU figures of a call section pair, `key` by `key`; `heads` names
 * the two columns when they are not raw and ours (the gateway section's direct and gateway).
 */
export function callFigures(
  raw: Pick<HttpSideResult, "sequential" | "inFlight">,
  ours: Pick<HttpSideResult, "sequential" | "inFlight">,
  prefix: string,
  parts: readonly (readonly ["sequential" | "inFlight", string, number | undefined])[],
  heads?: { raw: string; ours: string },
): Figure[] {
  const base = heads === undefined ? {} : { heads };
  const figs: Figure[] = [];
  for (const [key, section, minRatio] of parts) {
    const r = raw[key];
    const o = ours[key];
    const id = (name: string): string => `${prefix}.${key}.${name}`;
    figs.push(
      compare(
        { id: id("callsPerSec"), section, label: "throughput", unit: "calls/s", better: "higher", raw: r.callsPerSec, ours: o.callsPerSec, ...base },
        minRatio === undefined ? undefined : { text: `>= ${minRatio}x ${heads?.raw ?? "raw"}`, minRatio },
        { raw: r.roundRates, ours: o.roundRates },
      ),
      compare({ id: id("p50Ms"), section, label: "latency p50", unit: "ms", better: "lower", raw: r.p50Ms, ours: o.p50Ms, ...base }),
      compare({ id: id("p99Ms"), section, label: "latency p99", unit: "ms", better: "lower", raw: r.p99Ms, ours: o.p99Ms, ...base }),
      compare({ id: id("clientCpuUs"), section, label: "client CPU per call", unit: "us", better: "lower", raw: r.clientCpuUsPerCall, ours: o.clientCpuUsPerCall, ...base }),
    );
    if (r.serverCpuUsPerCall && o.serverCpuUsPerCall) {
      figs.push(compare({ id: id("serverCpuUs"), section, label: "server CPU per call (from /proc)", unit: "us", better: "lower", raw: r.serverCpuUsPerCall, ours: o.serverCpuUsPerCall, ...base }));
    }
  }
  return figs;
}

/** The figures of section 8, in print order. */
export function buildHttpFigures(raw: HttpSideResult, ours: HttpSideResult): Figure[] {
  const figs = callFigures(raw, ours, "http", [
    ["sequential", HTTP_SECTIONS.sequential, 0.85],
    ["inFlight", HTTP_SECTIONS.inFlight, undefined],
  ]);
  const show = (side: HttpSideResult): string => {
    const { afterWarmup: a, atEnd: e } = side.agent;
    return `${a.sockets} sockets / ${a.listeners} listeners -> ${e.sockets} / ${e.listeners}`;
  };
  const section = `${HTTP_SECTIONS.agent}\n   ours ${show(ours)}; raw ${show(raw)}`;
  const value = (id: string, label: string, unit: string, v: number): ValueFigure => ({ kind: "value", id, section, label, unit, better: "lower", value: v });
  const { afterWarmup: a, atEnd: e } = ours.agent;
  figs.push(
    value("http.agent.sockets", "sockets open at the end (busy + free)", "sockets", e.sockets),
    value("http.agent.socketGrowth", "socket growth (end - after warm-up)", "sockets", e.sockets - a.sockets),
    value("http.agent.listenerGrowth", "listener growth on agent + sockets", "count", e.listeners - a.listeners),
    value("http.agent.maxListenersWarnings", "MaxListenersExceeded warnings in our runner", "count", e.maxListenersWarnings),
  );
  return figs;
}
