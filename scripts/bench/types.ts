/**
 * What the benchmark's parts say to each other: the client contract both the raw baseline
 * and mcp-bridge implement, the commands `scripts/bench.ts` sends a client runner, and the
 * per-side results it builds from the answers.
 */
import type { GatewaySessionsResult } from "./gateway.ts";
import type { Budget, CallStats } from "./stats.ts";

/** A command line that starts a stdio MCP server. */
export interface ServerCommand {
  command: string;
  args: string[];
  /** The name the echo tool has there: `echo`, unless a gateway namespaces it. */
  tool?: string;
}

/** One connected client, raw or ours; created already past `initialize`. */
export interface BenchClient {
  /** Process id of the server child. */
  readonly pid: number | undefined;
  /** Lists every tool (following `nextCursor`); resolves with how many there were. */
  listTools(): Promise<number>;
  /** Calls the `echo` tool; resolves with the text it answered. */
  echo(text: string): Promise<string>;
  /** Ends the connection and waits for the server process to exit. */
  close(): Promise<void>;
  /** HTTP clients: the keep-alive agent's sockets and listeners now. */
  probe?(): AgentProbe;
}

export type ConnectClient = (server: ServerCommand) => Promise<BenchClient>;

export type Mode = "raw" | "ours";

/** How the call sections reach their server: stdio pipes, or Streamable HTTP on 127.0.0.1. */
/** How the call sections reach the server: stdio, Streamable HTTP (2025 session), or its stateless era (2026-07-28). */
export type Via = "stdio" | "http" | "http-stateless";

/** Open sockets of a client's keep-alive agent and the listeners on it and on them. */
export interface AgentProbe {
  sockets: number;
  listeners: number;
}

/** The servers one runner uses; they differ by mode (raw server or McpServer). */
export interface RunnerConfig {
  mode: Mode;
  /** Servers started fresh for every spawn + initialize + tools/list, by start variant. */
  spawnServers: Record<string, ServerCommand>;
  /** Server for the call and payload sections (one connection, kept open). */
  server: ServerCommand;
  /** Server listing many extra tools (one connection, kept open). */
  manyToolsServer: ServerCommand;
  /** HTTP server for the HTTP section: prints `{"url": ...}` on stdout, exits on stdin EOF. */
  httpServer: ServerCommand;
  /** Pin the runner to CPU `client` and every server it starts to CPU `server` (Linux taskset). */
  pin?: { client: number; server: number };
}

/**
 * One request to a runner, sent as a JSON line on its stdin; the runner answers each with
 * one JSON line on stdout, `{ ok: true, value }` or `{ ok: false, error }`.
 */
export type RunnerCommand =
  | { cmd: "spawn"; variant: string }
  | { cmd: "sequential"; budget: Budget; via: Via }
  | { cmd: "inFlight"; budget: Budget; concurrency: number; via: Via }
  | { cmd: "httpProbe" }
  | { cmd: "managerConnect"; servers: number }
  | { cmd: "managerCalls"; budget: Budget }
  | { cmd: "gatewaySessions"; count: number }
  | { cmd: "list"; runs: number }
  | { cmd: "payload"; mib: number; runs: number }
  | { cmd: "rss" }
  | { cmd: "env" }
  | { cmd: "quit" };

/** What each command answers. */
export interface RunnerAnswers {
  /**
   * Spawn + initialize + tools/list of a fresh server, ms; and the CPU time it cost, client and
   * server together, ms (null where /proc is missing).
   */
  spawn: { ms: number; cpuMs: number | null };
  sequential: CallRound;
  inFlight: CallRound;
  /** Duration of each full listing, ms, and the number of tools listed (base + extra). */
  list: { timesMs: number[]; tools: number; baseTools: number };
  /** Duration of each echo, ms; `ok` when every echo came back identical. */
  payload: { timesMs: number[]; ok: boolean };
  /** The HTTP client's agent now, and MaxListenersExceeded warnings the runner has seen. */
  httpProbe: AgentProbe & { maxListenersWarnings: number };
  /** McpManager.connect of that many stdio servers, ms, until every one is ready. */
  managerConnect: { ms: number };
  /** Sequential echoes in turn: a plain McpClient one, McpManager.callTool of a trusted and of an untrusted server; ms each. */
  managerCalls: { plainMs: number[]; bridgedMs: number[]; untrustedMs: number[] };
  /** Section 11e on a fresh gateway from the runner's HTTP server command (gateway-sessions.ts). */
  gatewaySessions: GatewaySessionsResult;
  /** Peak resident set size of the runner so far, MB. */
  rss: { maxRssMb: number };
  /** The names of the runner's environment variables (its servers inherit them), sorted. */
  env: { names: string[] };
  /** Every server process the runner started (all closed by now). */
  quit: { serverPids: number[] };
}

/** One round of timed calls, with the CPU time both processes spent on it. */
export interface CallRound {
  latenciesMs: number[];
  elapsedMs: number;
  /** CPU time (user + system) of the client process during the round, ms. */
  clientCpuMs: number;
  /** CPU time of the server process, ms, from Linux's /proc; null where /proc is missing. */
  serverCpuMs: number | null;
}

/** Calls per second and latency of a call section, plus CPU per call on each side. */
export type CallSummary = CallStats & {
  rounds: number;
  /** calls/s of each round, in round order (round i of both sides ran back to back). */
  roundRates: number[];
  clientCpuUsPerCall: number;
  /** null where the server's CPU time cannot be read (no /proc). */
  serverCpuUsPerCall: number | null;
};

export interface PayloadResult {
  mib: number;
  medianMs: number;
  /** Payload MiB per second of round trip (the text goes out and comes back). */
  mibPerSec: number;
  runs: number;
  /** Every echo came back with exactly the text sent. */
  ok: boolean;
}

/** Everything measured for one side (raw or ours). */
export interface SideResult {
  mode: Mode;
  /** calls/s is the median over rounds; p50/p99 pool the latencies of every round. */
  sequential: CallSummary;
  inFlight: CallSummary & { concurrency: number };
  manyTools: { medianMs: number; runs: number; tools: number; extraTools: number };
  payloads: PayloadResult[];
  /** maxRSS of the runner process, MB: at start, after the call sections, at the end. */
  rss: { startMb: number; afterCallsMb: number; peakMb: number };
  /** Every server process this side started (for the leftover check). */
  serverPids: number[];
}
