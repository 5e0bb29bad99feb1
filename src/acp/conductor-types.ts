/** Options and events of the {@link Conductor} (conductor.ts). */
import type { Transport } from "../transport/transport.ts";
import type { Conductor } from "./conductor.ts";
import type { McpOverAcpBinding } from "./mcp-over-acp.ts";
import type { McpProvider } from "./mcp-provider.ts";
import type { ShimBridgeEvent, ShimCommand } from "./shim.ts";

/** The agent to spawn (stdio, its own process group, as for an MCP server). */
export interface ConductorAgentCommand {
  command: string;
  args?: string[];
  cwd?: string;
  /** Added to the environment. */
  env?: Record<string, string>;
  /** Pass the conductor's environment on. Default true: the agent is the user's own program. */
  inheritEnv?: boolean;
}

/** What a conductor reports; none of these ends a session. */
export type ConductorEvent =
  | ShimBridgeEvent
  | { type: "agent-capability"; mcpOverAcp: boolean }
  | { type: "bridge-listening"; server: string; key: string; port: number }
  | { type: "session-ended"; sessionId: string }
  | { type: "agent-exited"; reason?: string };

export interface ConductorOptions {
  /** The agent: a command to spawn, or a transport already connected to one. */
  agent: ConductorAgentCommand | Transport;
  /** MCP servers the conductor adds to every session. */
  providers?: McpProvider[];
  /** Default {@link draftBinding}. */
  binding?: McpOverAcpBinding;
  /** `auto` (default): bridge only for an agent without the capability. */
  bridge?: "auto" | "always" | "never";
  /** The shim's command line for a port. Default `defaultShimCommand` (this Node, this checkout). */
  shimCommand?: ShimCommand;
  onEvent?: (event: ConductorEvent) => void;
  /** Each stderr line of a spawned agent. */
  onAgentStderr?: (line: string) => void;
  /** Time cap of one forwarded request, ms. Default 24 hours (a prompt turn may be long). */
  requestTimeoutMs?: number;
  /** Grace periods when stopping a spawned agent, ms. Default 2000. */
  agentShutdownGraceMs?: number;
}
