/**
 * The agent side of MCP over ACP as an `AcpMcpSessions` hook: `acp:` entries of `mcpServers`
 * become tunnels of an {@link AcpTunnelRouter} on the agent's ACP connection.
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { McpServerConfig } from "../config/types.ts";
import { createTransport, type TransportFactory } from "../manager/transport-factory.ts";
import { AcpTunnelRouter, type TunnelHandlerHost } from "./acp-tunnel-router.ts";
import type { AcpMessageLink } from "./acp-tunnel-transport.ts";
import { draftBinding, type McpOverAcpBinding } from "./mcp-over-acp.ts";
import type { McpOverAcpHook } from "./sessions.ts";
import type { AgentCapabilities } from "./types.ts";

/** The ACP connection an agent-side hook needs: send envelopes, receive them. An `AcpAgentConnection` fits. */
export type AcpAgentLink = AcpMessageLink & TunnelHandlerHost;

/** Host of the placeholder URLs that stand for `acp:` servers inside a session's manager. */
const PLACEHOLDER_PREFIX = "https://mcp-over-acp.invalid/";

/**
 * The agent side of MCP over ACP, as the `mcpOverAcp` hook of `AcpMcpSessions`: it announces
 * the capability, claims the `acp:` entries of `mcpServers`, and gives the session's manager a
 * transport factory that opens a tunnel for them (every other server goes to `createTransport`).
 *
 * ```ts
 * const connection = new AcpAgentConnection((conn) => new ScriptedAgent(conn, { mcpOverAcp: mcpOverAcpHook(conn) }));
 * ```
 *
 * Inside the manager an `acp:` server is configured as `http` with a placeholder URL under
 * `https://mcp-over-acp.invalid/` (a reserved name that never resolves), because the manager's
 * URL checks accept only http(s); the factory recognises the placeholder and never dials it.
 */
export function mcpOverAcpHook(connection: AcpAgentLink, options: { binding?: McpOverAcpBinding; outerTimeoutMs?: number } = {}): McpOverAcpHook {
  const binding = options.binding ?? draftBinding;
  const router = new AcpTunnelRouter({ link: connection, side: "client", binding, outerTimeoutMs: options.outerTimeoutMs });
  router.serve(connection);
  const keysOf = new Map<string, string[]>();
  const factory: TransportFactory = (prepared, hooks) => {
    const url = prepared.url?.href;
    if (url === undefined || !url.startsWith(PLACEHOLDER_PREFIX)) return createTransport(prepared, hooks);
    const key = decodeURIComponent(url.slice(PLACEHOLDER_PREFIX.length));
    // A restart reconnects: the previous tunnel of this key is finished with.
    void router.get(key)?.close();
    return router.open(key);
  };
  return {
    capabilities: binding.agentCapabilities() as AgentCapabilities,
    claims: (entry) => binding.isAcpServer(entry),
    open(sessionId, entries) {
      const servers: McpServerConfig[] = entries.map((entry, i) => {
        const name = binding.serverName(entry);
        const key = binding.serverKey(entry);
        if (name === undefined || name === "" || key === undefined) {
          throw new RpcError(ErrorCode.InvalidParams, `Invalid params: mcpServers: MCP-over-ACP entry ${i} needs a name and an acp: url`);
        }
        return { name, transport: "http", url: `${PLACEHOLDER_PREFIX}${encodeURIComponent(key)}`, headers: {} };
      });
      keysOf.set(sessionId, entries.map((e) => binding.serverKey(e)!));
      return { servers, transportFactory: factory };
    },
    async close(sessionId) {
      const keys = keysOf.get(sessionId) ?? [];
      keysOf.delete(sessionId);
      await Promise.all(keys.map((key) => router.get(key)?.close()));
    },
  };
}
