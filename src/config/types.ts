/**
 * Configuration of the MCP servers an agent uses. One native shape, {@link McpServerConfig};
 * the parsers turn every accepted input format (native, ACP `McpServer[]`, Claude Desktop /
 * Cursor `mcpServers`, VS Code `servers`) into it.
 */

/** How to reach a server. `auto` tries Streamable HTTP, then legacy HTTP+SSE. */
export type TransportKind = "stdio" | "http" | "sse" | "auto";

/**
 * `trusted`: the command may be a bare name looked up on PATH.
 * `untrusted`: the command must be an absolute path (or on an allow-list), each tool needs
 * approval on first use, and its output is marked as untrusted content.
 */
export type TrustLevel = "trusted" | "untrusted";

export interface McpServerConfig {
  /** Unique within a session; used in bridged tool names (`mcp__<name>__<tool>`). */
  name: string;
  transport: TransportKind;
  /** stdio: the executable. */
  command?: string;
  args?: string[];
  /** stdio: variables added to the minimal child environment. Values may be `secret://` refs. */
  env?: Record<string, string>;
  cwd?: string;
  /** http/sse/auto: the endpoint URL. */
  url?: string;
  /** http/sse/auto: headers sent on every request. Values may be `secret://` refs. */
  headers?: Record<string, string>;
  /** Default true; `false` removes a server inherited from a lower config layer. */
  enabled?: boolean;
  /** Connect (spawn + handshake) time limit, ms. Default 30 000. */
  timeout?: number;
  /** Tool call time limit, ms. Default 120 000. */
  toolTimeout?: number;
  /** Restart after a crash. Default true for stdio, false otherwise. */
  restartOnCrash?: boolean;
  /** Restarts before giving up. Default 5. */
  maxRestarts?: number;
  /** Replaces the server name in bridged tool names. */
  toolPrefix?: string;
  trust?: TrustLevel;
  /** Expose the server's resources. Default true. */
  resources?: boolean;
  /** Globs on resource URIs; only matching resources are exposed. */
  resourceFilter?: string[];
  /** Globs on bridged tool names: only matching tools are exposed (default: all). */
  allow?: string[];
  /** Globs on bridged tool names: matching tools are hidden and refused. Deny wins over allow. */
  deny?: string[];
}

/** One problem found while parsing: where, and why. Never contains a secret value. */
export interface ConfigProblem {
  /** JSON-pointer-like path, e.g. `/mcpServers/fs/args/0`. */
  path: string;
  message: string;
  severity: "error" | "warning";
}

/** What every parser returns: the servers it could read, and every problem at once. */
export interface ParseResult {
  servers: McpServerConfig[];
  problems: ConfigProblem[];
}
