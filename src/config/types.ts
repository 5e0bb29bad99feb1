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
  /**
   * JSON pointer (RFC 6901 escaping of `~` and `/`) into the parsed value, e.g.
   * `/mcpServers/fs/args/0`; `""` is the whole value. Control characters in keys are shown
   * as `\uXXXX`, so a path is always one printable line.
   */
  path: string;
  message: string;
  /** `error`: the server (or file) is not used. `warning`: it is used as described. */
  severity: "error" | "warning";
  /** Where the value came from: a file path, `agent` or `session`. Set by discovery. */
  source?: string;
}

/** What every parser returns: the servers it could read, and every problem at once. */
export interface ParseResult {
  servers: McpServerConfig[];
  problems: ConfigProblem[];
}

/**
 * A config with every default filled in (see `withDefaults` in parse-common.ts). Fields that
 * have no default (`command`, `url`, `cwd`, `toolPrefix`, `resourceFilter`, `allow`, `deny`)
 * stay optional: absent means "not set" / "no filter".
 */
export type ResolvedServerConfig = McpServerConfig &
  Required<
    Pick<
      McpServerConfig,
      | "args"
      | "env"
      | "headers"
      | "enabled"
      | "timeout"
      | "toolTimeout"
      | "restartOnCrash"
      | "maxRestarts"
      | "trust"
      | "resources"
    >
  >;
