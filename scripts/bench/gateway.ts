/**
 * Section 11 of the benchmark: `mcp-bridge serve` (the package's built CLI) in front of the
 * echo fixture, against the same calls made to that fixture directly, and through a minimal
 * Node proxy. "direct" is McpClient -> echo, "gateway" is McpClient -> serve -> echo, as a user
 * runs it, and "raw proxy" McpClient -> raw-proxy-stdio.mjs / raw-proxy-http.ts -> echo, the
 * least any proxy does (imports nothing of ours).
 *
 * a-b. stdio: serve --stdio with the echo fixture as a stdio upstream; sequential and 64 in flight.
 * c-d. Streamable HTTP: serve --http in front of the echo fixture on HTTP (gateway-http-server.ts),
 *      against the fixture's HTTP server directly.
 * e.   500 downstream HTTP sessions open at once on serve --http: its RSS growth per session,
 *      and one call on every session (gateway-sessions.ts).
 * f-g. (info) the raw proxy against direct (what the hop alone keeps), and the gateway against
 *      the raw proxy (what the gateway's own work costs).
 *
 * The gateway adds a whole hop: every call is two round trips where the direct one is one, so
 * a free tool (the echo) shows that hop at its largest. Every gateway runs with
 * `--rate-limit off` (its default, 100 calls a minute per upstream, would refuse the benchmark).
 * "server CPU" is the gateway's (or the proxy's) process alone (its upstream works as much as
 * the direct side's server does).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callFigures } from "./http.ts";
import { callSection, type Plan, type Sides } from "./measure.ts";
import { compare, type Figure, type ValueFigure } from "./report.ts";
import type { RunnerProcess } from "./runner-process.ts";
import type { RunnerConfig, SideResult } from "./types.ts";

/** The bridged name of the echo fixture's `echo` behind a gateway that calls its upstream "echo". */
export const GATEWAY_TOOL = "mcp__echo__echo";

/** Downstream sessions of 11e. */
export const GATEWAY_SESSIONS = 500;

export const GATEWAY_SECTIONS = {
  stdioSequential: "11a. mcp-bridge serve --stdio: sequential tools/call echo through the gateway vs the same call direct (ratio = gateway/direct)",
  stdioInFlight: "11b. mcp-bridge serve --stdio: tools/call echo, 64 in flight",
  httpSequential: "11c. mcp-bridge serve --http: sequential tools/call echo through the gateway vs direct to the upstream's Streamable HTTP",
  httpInFlight: "11d. mcp-bridge serve --http: tools/call echo, 64 in flight",
  sessions: "11e. mcp-bridge serve --http with many downstream sessions open at once, one GET stream each (info)",
  hop: "11f. the hop alone: a raw Node proxy (scripts/bench/raw-proxy-stdio.mjs, raw-proxy-http.ts) vs direct (info: the most any proxy keeps)",
  overProxy: "11g. the gateway vs that raw proxy (info: what the gateway's own work costs)",
} as const;

type Calls = Pick<SideResult, "sequential" | "inFlight">;

/** What 11e measured: the gateway's RSS before and with every session open, and the calls served. */
export interface GatewaySessionsResult {
  sessions: number;
  rssBeforeMb: number;
  rssOpenMb: number;
  kbPerSession: number;
  /** Calls answered correctly, one per session, all sessions open. */
  callsServed: number;
  openMs: number;
}

/** Calls made direct, through the raw proxy (the hop alone), and through the gateway. */
interface Columns {
  direct: Calls;
  rawProxy: Calls;
  gateway: Calls;
}

export interface GatewayResult {
  stdio: Columns;
  http: Columns;
  sessions: GatewaySessionsResult;
}

/**
 * The runner config of the gateway side: `direct`'s servers with serve in front of them.
 * Writes the stdio gateway's config into `work`.
 */
export function gatewayRunnerConfig(direct: RunnerConfig, work: string, cli: string): RunnerConfig {
  const config = join(work, "gateway-stdio.json");
  const upstream = { command: direct.server.command, args: direct.server.args, trust: "trusted" };
  writeFileSync(config, JSON.stringify({ mcpServers: { echo: upstream } }));
  const node = direct.server.command;
  return {
    ...direct,
    server: { command: node, args: [cli, "serve", "--config", config, "--stdio", "--rate-limit", "off"], tool: GATEWAY_TOOL },
    httpServer: {
      command: node,
      args: [join(work, "scripts", "bench", "gateway-http-server.js"), cli, work, "--", direct.httpServer.command, ...direct.httpServer.args],
      tool: GATEWAY_TOOL,
    },
  };
}

/**
 * The runner config of the raw-proxy side: `direct`'s servers behind raw-proxy-stdio.mjs and
 * raw-proxy-http.js (the least any Node proxy does), so the hop itself is measured too.
 */
export function rawProxyRunnerConfig(direct: RunnerConfig, work: string): RunnerConfig {
  const node = direct.server.command;
  const stdioProxy = fileURLToPath(new URL("./raw-proxy-stdio.mjs", import.meta.url));
  return {
    ...direct,
    server: { command: node, args: [stdioProxy, "--", direct.server.command, ...direct.server.args], tool: GATEWAY_TOOL },
    httpServer: {
      command: node,
      args: [join(work, "scripts", "bench", "raw-proxy-http.js"), "--", direct.httpServer.command, ...direct.httpServer.args],
      tool: GATEWAY_TOOL,
    },
  };
}

/**
 * The runner configs of section 11, in column order: direct, raw proxy, gateway (`direct`'s
 * servers, its pinning too, behind nothing, the raw proxy and serve).
 */
export function gatewayRunnerConfigs(direct: RunnerConfig, work: string, cli: string): [RunnerConfig, RunnerConfig, RunnerConfig] {
  return [direct, rawProxyRunnerConfig(direct, work), gatewayRunnerConfig(direct, work, cli)];
}

/**
 * Runs section 11 on runners started from {@link gatewayRunnerConfigs}, in its order (direct,
 * raw proxy, gateway; one fork: each keeps its servers), with `sessions` downstream sessions
 * for 11e.
 */
export async function gatewaySection(runners: Sides, plans: { stdio: Plan; http: Plan; sessions: number }): Promise<GatewayResult> {
  const [direct, rawProxy, gateway] = runners as [RunnerProcess, RunnerProcess, RunnerProcess];
  const columns = (m: Map<RunnerProcess, Calls>): Columns => ({ direct: m.get(direct)!, rawProxy: m.get(rawProxy)!, gateway: m.get(gateway)! });
  const stdio = columns(await callSection(runners, { ...plans.stdio, forks: 1 }, "stdio"));
  const http = columns(await callSection(runners, { ...plans.http, forks: 1 }, "http"));
  const sessions = await gateway.ask({ cmd: "gatewaySessions", count: plans.sessions });
  return { stdio, http, sessions };
}

/** One info section comparing two of the columns: throughput and the server side's CPU per call. */
function proxyFigures(g: GatewayResult, key: string, section: string, heads: { raw: string; ours: string }, pair: (c: Columns) => [Calls, Calls]): Figure[] {
  const figs: Figure[] = [];
  for (const [via, columns] of [["stdio", g.stdio], ["http", g.http]] as const) {
    const [a, b] = pair(columns);
    for (const [mode, label] of [["sequential", "sequential"], ["inFlight", "64 in flight"]] as const) {
      const id = `gateway.${key}.${via}.${mode}`;
      const rounds = { raw: a[mode].roundRates, ours: b[mode].roundRates };
      figs.push(compare({ id: `${id}.callsPerSec`, section, label: `${via} ${label}: throughput`, unit: "calls/s", better: "higher", raw: a[mode].callsPerSec, ours: b[mode].callsPerSec, heads }, undefined, rounds));
      const ca = a[mode].serverCpuUsPerCall;
      const cb = b[mode].serverCpuUsPerCall;
      if (ca && cb) figs.push(compare({ id: `${id}.serverCpuUs`, section, label: `${via} ${label}: server CPU per call`, unit: "us", better: "lower", raw: ca, ours: cb, heads }));
    }
  }
  return figs;
}

/** The figures of section 11, in print order. */
export function buildGatewayFigures(g: GatewayResult): Figure[] {
  const heads = { raw: "direct", ours: "gateway" };
  const s = g.sessions;
  const section = GATEWAY_SECTIONS.sessions;
  const value = (id: string, label: string, unit: string, v: number, better: "lower" | "higher" = "lower"): ValueFigure => ({ kind: "value", id, section, label, unit, better, value: v });
  return [
    ...callFigures(g.stdio.direct, g.stdio.gateway, "gateway.stdio", [
      ["sequential", GATEWAY_SECTIONS.stdioSequential, 0.8],
      ["inFlight", GATEWAY_SECTIONS.stdioInFlight, 0.8],
    ], heads),
    ...callFigures(g.http.direct, g.http.gateway, "gateway.http", [
      ["sequential", GATEWAY_SECTIONS.httpSequential, 0.8],
      ["inFlight", GATEWAY_SECTIONS.httpInFlight, 0.8],
    ], heads),
    ...proxyFigures(g, "hop", GATEWAY_SECTIONS.hop, { raw: "direct", ours: "raw proxy" }, (c) => [c.direct, c.rawProxy]),
    ...proxyFigures(g, "overProxy", GATEWAY_SECTIONS.overProxy, { raw: "raw proxy", ours: "gateway" }, (c) => [c.rawProxy, c.gateway]),
    value("gateway.sessions.count", "downstream sessions open at once", "sessions", s.sessions, "higher"),
    value("gateway.sessions.kbPerSession", "gateway RSS growth per session", "KB", s.kbPerSession),
    value("gateway.sessions.rssOpenMb", "gateway RSS with every session open", "MB", s.rssOpenMb),
    value("gateway.sessions.callsServed", "calls served, one per open session", "calls", s.callsServed, "higher"),
    value("gateway.sessions.openMs", "time to open every session", "ms", s.openMs),
  ];
}
