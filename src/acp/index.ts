/**
 * The ACP side of mcp-bridge (`mcp-bridge/acp`): the agent connection, session-scoped MCP
 * servers, the reference agent, and MCP over ACP. ACP types live here, apart from the MCP
 * types of the main entry, because the two protocols share type names (`Implementation`, ...).
 */
export * from "./types.ts";
export {
  AcpAgentConnection,
  sessionNotFound,
  invalidParams,
  negotiateAcpVersion,
  type Agent,
  type AcpAgentConnectionOptions,
  type AcpRequestContext,
} from "./connection.ts";
export {
  AcpMcpSessions,
  type AcpClientFeatures,
  type AcpMcpSessionsOptions,
  type McpOverAcpHook,
  type SessionRequestContext,
  type SessionServersRequest,
} from "./sessions.ts";
export type { AcpSessionAuth } from "./session-auth.ts";
export { ScriptedAgent, SCRIPTED_AGENT_INFO } from "./agent.ts";
export { toolKind } from "./content.ts";
export { PERMISSION_OPTIONS } from "./tool-calls.ts";
export {
  draftBinding,
  DRAFT_METHODS,
  DRAFT_CAPABILITY_FLAG,
  unknownServerError,
  type McpOverAcpBinding,
  type TunnelDirection,
} from "./mcp-over-acp.ts";
export { AcpTunnelTransport, type AcpMessageLink } from "./acp-tunnel-transport.ts";
export { AcpTunnelRouter } from "./acp-tunnel-router.ts";
export { mcpOverAcpHook } from "./mcp-over-acp-hook.ts";
export { McpProvider, type McpProviderOptions, type ProviderDeclaration } from "./mcp-provider.ts";
export { Conductor, type ConductorOptions, type ConductorEvent } from "./conductor.ts";
export { ShimListener, ShimBridge, defaultShimCommand, SHIM_TOKEN_ENV } from "./shim.ts";
