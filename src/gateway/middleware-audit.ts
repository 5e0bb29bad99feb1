/**
 * The audit middleware: one event per tool call, whatever its outcome: who called (the
 * downstream client), what, how long it took, how it ended, how many bytes went each way.
 * Arguments appear only as the redactor rewrites them, or not at all, as in the manager's
 * audit records (manager/audit.ts).
 */
import { utf8Length } from "../bridge/resources.ts";
import { stoppedBy } from "../mcp/middleware-pipeline.ts";
import type { ClientIdentity, Middleware, ProtocolEra } from "../mcp/provider-types.ts";
import type { CallToolResult } from "../mcp/types.ts";
import { Redactor } from "../security/redact.ts";
import { safeJson } from "../util/json.ts";

/** `ok`: the tool answered; `tool_error`: it answered with `isError`; `refused`/`failed`: a middleware stopped it. */
export type CallOutcome = "ok" | "tool_error" | "refused" | "failed";

export interface CallAuditEvent {
  client: ClientIdentity;
  era: ProtocolEra;
  /** The tool name the client called. */
  name: string;
  /** When the call reached the pipeline, ms since the epoch. */
  at: number;
  durationMs: number;
  outcome: CallOutcome;
  /** The middleware that refused or failed the call. */
  stoppedBy?: string;
  /** UTF-8 sizes: the arguments as JSON, and the result's text. */
  bytes: { args: number; result: number };
  /** The arguments after redaction; absent with `args: "omit"`. */
  args?: unknown;
}

export interface AuditMiddlewareOptions {
  /** Where each event goes; an exception it throws is swallowed (auditing never fails a call). */
  sink: (event: CallAuditEvent) => void;
  /** Redacts the arguments (known secrets, credential-like keys). Default: a new Redactor (keys only). */
  redactor?: Redactor;
  /** How arguments appear. Default `redacted`. */
  args?: "redacted" | "omit";
  /** Clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/**
 * Declare it first: as the outermost layer it sees every call, the ones inner layers refuse
 * included (docs/decisions.md 125).
 */
export function audit(options: AuditMiddlewareOptions): Middleware {
  const redactor = options.redactor ?? new Redactor();
  const now = options.now ?? Date.now;
  return {
    name: "audit",
    after(result, call, ctx) {
      const stop = stoppedBy(result);
      const event: CallAuditEvent = {
        client: ctx.client,
        era: ctx.era,
        name: redactor.redact(call.name),
        at: call.startedAt,
        durationMs: Math.max(0, now() - call.startedAt),
        outcome: outcomeOf(result, stop),
        bytes: { args: utf8Length(safeJson(call.arguments)), result: resultBytes(result) },
      };
      if (stop !== undefined) event.stoppedBy = stop.by;
      if (options.args !== "omit") event.args = redactor.redactValue(call.arguments);
      try {
        options.sink(event);
      } catch {
        // Auditing must not turn a result into a failure.
      }
      return result;
    },
  };
}

/**
 * Counts calls by outcome and nothing else: for a gateway that keeps no audit log, whose
 * status still counts its calls. Cheaper than {@link audit} with a counting sink, which
 * measures and redacts each call's arguments for an event nobody reads.
 */
export function countCalls(count: (outcome: CallOutcome) => void): Middleware {
  return {
    name: "audit",
    after(result) {
      try {
        count(outcomeOf(result));
      } catch {
        // Counting must not turn a result into a failure.
      }
      return result;
    },
  };
}

/** How a call ended, as the audit names it. */
function outcomeOf(result: CallToolResult, stop = stoppedBy(result)): CallOutcome {
  return stop?.how ?? (result.isError === true ? "tool_error" : "ok");
}

function resultBytes(result: CallToolResult): number {
  let n = 0;
  for (const b of result.content ?? []) if (b.type === "text") n += utf8Length(b.text);
  return n;
}
