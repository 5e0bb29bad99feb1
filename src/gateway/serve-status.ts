/**
 * `mcp-bridge://status`, the gateway's own resource: its upstreams as the reading client sees
 * them (its own per-client connections, and the shared ones), their state and last error, and
 * the gateway's counters. Everything comes from the managers' `status()`, whose strings are
 * redacted with every secret the gateway resolved, and from counts: no config value (a
 * command, an argument, an env or header value, a token) is ever part of it.
 */
import type { ServerStatus } from "../manager/manager.ts";
import type { Resource } from "../mcp/types.ts";
import type { CallAuditEvent, CallOutcome } from "./middleware-audit.ts";
import type { Isolation } from "./serve-config.ts";
import type { UpstreamPool } from "./upstream-pool.ts";

export const STATUS_URI = "mcp-bridge://status";

export const STATUS_RESOURCE: Resource = {
  uri: STATUS_URI,
  name: "status",
  title: "Gateway status",
  description: "Upstreams (state, last error, restarts), downstream sessions, upstream connections and call counters of this mcp-bridge serve.",
  mimeType: "application/json",
};

/** One upstream as the status shows it. */
export interface UpstreamStatusEntry {
  name: string;
  isolation: Isolation;
  state: ServerStatus["state"];
  transport: ServerStatus["transport"];
  protocolVersion?: string;
  tools: number;
  restarts: number;
  pid?: number;
  lastError?: string;
}

export interface GatewayStatus {
  startedAt: string;
  sessions: { open: number; max: number; opened: number; refused: number };
  upstreamConnections: { open: number; max: number };
  calls: CallCounters;
  /** This session's number (per-client upstreams are its own). */
  session?: number;
  upstreams: UpstreamStatusEntry[];
}

/** Tool calls through the gateway, by outcome (the audit middleware's outcomes). */
export interface CallCounters {
  total: number;
  ok: number;
  toolErrors: number;
  refused: number;
  failed: number;
}

/** Counts calls from audit events (the sink of the gateway's audit middleware). */
export class CallCounter {
  readonly counts: CallCounters = { total: 0, ok: 0, toolErrors: 0, refused: 0, failed: 0 };

  record(event: CallAuditEvent): void {
    this.count(event.outcome);
  }

  count(outcome: CallOutcome): void {
    this.counts.total++;
    if (outcome === "ok") this.counts.ok++;
    else if (outcome === "tool_error") this.counts.toolErrors++;
    else if (outcome === "refused") this.counts.refused++;
    else this.counts.failed++;
  }
}

/**
 * The status as the session `own` sees it. A client without a session of its own (a
 * stateless-era request, served only when every upstream is shared) sees the shared ones.
 */
export function gatewayStatus(
  pool: UpstreamPool,
  calls: CallCounter,
  startedAt: number,
  own: { id: number; statuses: ServerStatus[] } | undefined,
): GatewayStatus {
  const entries: UpstreamStatusEntry[] = [];
  for (const s of own?.statuses ?? []) entries.push(entryOf(s, "per-client"));
  for (const s of pool.shared.status()) entries.push(entryOf(s, "shared"));
  const status: GatewayStatus = {
    startedAt: new Date(startedAt).toISOString(),
    sessions: { open: pool.sessionCount, max: pool.maxSessions, opened: pool.counters.sessionsOpened, refused: pool.counters.sessionsRefused },
    upstreamConnections: { open: pool.upstreamConnections, max: pool.maxUpstreamConnections },
    calls: { ...calls.counts },
    upstreams: entries,
  };
  if (own !== undefined) status.session = own.id;
  return pool.redactor.redactJson(status);
}

function entryOf(s: ServerStatus, isolation: Isolation): UpstreamStatusEntry {
  const entry: UpstreamStatusEntry = { name: s.name, isolation, state: s.state, transport: s.transport, tools: s.tools, restarts: s.restarts };
  if (s.protocolVersion !== undefined) entry.protocolVersion = s.protocolVersion;
  if (s.pid !== undefined) entry.pid = s.pid;
  if (s.lastError !== undefined) entry.lastError = s.lastError;
  return entry;
}
