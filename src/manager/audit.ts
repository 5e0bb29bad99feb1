/**
 * One audit record per tool call, whatever its outcome: who was called, how long it took, how
 * it ended, how many bytes went each way. Arguments appear only as the redactor rewrites them
 * (known secrets and values under credential-like keys become `[REDACTED]`), or not at all.
 */
import type { BridgedResult, FailureKind } from "../bridge/types.ts";
import type { Redactor } from "../security/redact.ts";
import { utf8Length } from "../bridge/resources.ts";
import { safeJson } from "../util/json.ts";

/** `ok`: the tool answered; `tool_error`: it answered with `isError`; else why the bridge failed it. */
export type AuditOutcome = "ok" | "tool_error" | FailureKind;

export interface AuditRecord {
  /** The configured server name (empty when the bridged name was unknown). */
  server: string;
  /** The tool's name on its server (empty when unknown). */
  tool: string;
  /** The bridged name the agent called. */
  name: string;
  /** When the call started, ms since the epoch. */
  at: number;
  durationMs: number;
  outcome: AuditOutcome;
  /** UTF-8 sizes: the arguments as JSON, and the result's text. */
  bytes: { args: number; result: number };
  /** The arguments after redaction; absent when the manager is set to omit them. */
  args?: unknown;
  /** The result was cut by the size limits. */
  truncated?: boolean;
}

/** How arguments appear in audit records. */
export type AuditArgsMode = "redacted" | "omit";

export interface AuditInput {
  server: string;
  tool: string;
  name: string;
  startedAt: number;
  endedAt: number;
  args: unknown;
  result: BridgedResult;
}

/** Builds the record for a finished call. Never throws. */
export function auditRecord(input: AuditInput, redactor: Redactor, mode: AuditArgsMode = "redacted"): AuditRecord {
  const { result } = input;
  const outcome: AuditOutcome = result.failure?.kind ?? (result.isError ? "tool_error" : "ok");
  const record: AuditRecord = {
    server: input.server,
    tool: input.tool,
    // What the model typed: it may hold a secret it saw.
    name: redactor.redact(input.name),
    at: input.startedAt,
    durationMs: Math.max(0, input.endedAt - input.startedAt),
    outcome,
    bytes: { args: jsonBytes(input.args), result: utf8Length(result.text) },
  };
  if (mode === "redacted") record.args = safeRedact(redactor, input.args);
  if (result.truncated !== undefined) record.truncated = true;
  return record;
}

function safeRedact(redactor: Redactor, value: unknown): unknown {
  try {
    return redactor.redactValue(value);
  } catch {
    return "[arguments could not be redacted and were left out]";
  }
}

function jsonBytes(value: unknown): number {
  return utf8Length(safeJson(value));
}
