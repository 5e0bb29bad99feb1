/**
 * The events of a server connection and of the manager. Every string in them has been through
 * the session's redactor before it is emitted.
 */
import type { AuditRecord } from "./audit.ts";

/**
 * - `connecting`: spawning / connecting, handshake, first `tools/list` (under the server's timeout).
 * - `ready`: tools can be called.
 * - `restarting`: it crashed, hung or failed its health checks; a new attempt follows after
 *   the backoff delay. Calls get an error result saying so.
 * - `failed`: it will not be tried again (configuration error, or the restart budget is spent).
 * - `closed`: closed by us; final.
 */
export type ServerState = "connecting" | "ready" | "restarting" | "failed" | "closed";

export interface StateChange {
  server: string;
  /** Undefined for the first event of a connection. */
  from: ServerState | undefined;
  to: ServerState;
  /** When it changed, ms since the epoch. */
  at: number;
  /** `connecting`: 0 for the first attempt, n for restart n. `restarting`: n of the restart to come. */
  attempt?: number;
  /** `restarting`: the backoff delay before the next attempt, ms. */
  delayMs?: number;
  /** `restarting`/`failed`: why (redacted). */
  error?: string;
}

/** Where a log line came from. */
export type LogSource = "stderr" | "server" | "transport" | "manager";

export interface LogEntry {
  server: string;
  source: LogSource;
  /** MCP log level for `server`; `info` for stderr lines, `warning`/`debug` for our own. */
  level: string;
  /** One line of text (redacted). */
  message: string;
  /** The MCP `logger` field of a server log message, if any. */
  logger?: string;
  at: number;
}

/**
 * - `server_limit` / `tool_limit`: servers or tools dropped by the manager's limits (`dropped` names them).
 * - `duplicate_server`: a second config with a name already in use was ignored.
 * - `duplicate_tool`: a server listed one tool name twice; the first listing is used.
 * - `injection`: a prompt-injection pattern in untrusted server text.
 * - `plaintext_credential`: a credential-like env or header key holds plaintext.
 * - `tools_refresh`: re-reading a server's tool list failed; the previous list is kept.
 * - `health`: a health-check ping failed.
 * - `request_failed`: listing a server's resources or prompts failed; the others are returned.
 * - `secret_in_tool_name`: tools whose names hold a known secret were left out (named redacted).
 */
export type WarningKind =
  | "server_limit"
  | "tool_limit"
  | "duplicate_server"
  | "duplicate_tool"
  | "injection"
  | "plaintext_credential"
  | "tools_refresh"
  | "health"
  | "request_failed"
  | "secret_in_tool_name";

export interface ManagerWarning {
  kind: WarningKind;
  message: string;
  server?: string;
  /** `server_limit` / `tool_limit` / `duplicate_tool`: what was dropped, in order. */
  dropped?: string[];
  /** `injection`: the detector rule and where the text came from. */
  rule?: string;
  source?: string;
  at: number;
}

/** The bridged tool set changed (a server became ready, failed, refreshed its list, ...). */
export interface ToolsChange {
  /** Bridged names now exposed that were not before. */
  added: string[];
  /** Bridged names no longer exposed. */
  removed: string[];
  /** Bridged names still exposed whose definition changed. */
  changed: string[];
  /** Tools exposed now. */
  count: number;
}

/** Events of a single {@link ServerConnection}. */
export interface ConnectionEvents {
  state: StateChange;
  /** The server's tool list differs from the last one known (after list_changed or a reconnect). */
  toolsChanged: { server: string };
  /** The server sent `notifications/prompts/list_changed` or `notifications/resources/list_changed`. */
  listChanged: ListChange;
  log: LogEntry;
  warning: ManagerWarning;
}

/** A server's prompts or resources changed (it said so); they are listed afresh on demand. */
export interface ListChange {
  server: string;
  list: "prompts" | "resources";
}

/** Events of {@link McpManager}. */
export interface McpManagerEvents {
  state: StateChange;
  toolsChanged: ToolsChange;
  /** A ready server's prompts or resources changed; at most one per server and list per `listChangedDebounceMs`. */
  listChanged: ListChange;
  warning: ManagerWarning;
  log: LogEntry;
  audit: AuditRecord;
}
