/**
 * The downstream side of `mcp-bridge serve`: one McpServer per downstream session, serving
 * that session's own per-client upstreams and the shared ones (each through a
 * {@link ManagerProvider} of its own), the `mcp-bridge://status` resource, and the audit
 * middleware that counts every call. When the session ends (stdin's end, DELETE, idle expiry,
 * a dropped SSE stream) its McpServer and its upstream connections are closed.
 *
 * A request of the stateless era (2026-07-28) over HTTP has no session to own upstreams: it is
 * served by one McpServer of the shared upstreams only, and refused as an unsupported version
 * (so a dual-era client falls back to a session) while any upstream is per-client
 * (docs/decisions.md 146).
 */
import { errorMessage } from "../jsonrpc/errors.ts";
import type { McpManager } from "../manager/manager.ts";
import type { McpServerOptions } from "../mcp/server.ts";
import { McpServer } from "../mcp/server.ts";
import type { Middleware } from "../mcp/provider-types.ts";
import type { Implementation } from "../mcp/types.ts";
import type { Transport } from "../transport/transport.ts";
import { ManagerProvider } from "./manager-provider.ts";
import { audit, countCalls, type CallAuditEvent } from "./middleware-audit.ts";
import { CallCounter, gatewayStatus, STATUS_RESOURCE, STATUS_URI } from "./serve-status.ts";
import type { ClientUpstreams, UpstreamPool } from "./upstream-pool.ts";

/**
 * Each McpServer's bound on a provider answer. The managers already bound every upstream
 * request (`timeout`, `toolTimeout` reset by progress, under the peer's 10-minute hard cap),
 * with clearer errors, so this only catches what they would not: the server's 60-second
 * default would cut long tools and calls waiting on a person's elicitation (docs/decisions.md 139).
 */
const PROVIDER_TIMEOUT_MS = 605_000;

export interface GatewaySessionsOptions {
  info: Implementation;
  /** False: the upstreams' own names (`serve --no-namespace`, one upstream; docs/decisions.md 141). Default true. */
  namespaced?: boolean;
  /** Each tool call's audit event, after it was counted (e.g. written as a JSON line). */
  onAudit?: (event: CallAuditEvent) => void;
  /** Log lines for a person (stderr). */
  log: (line: string) => void;
  /** A session's per-client upstreams have started (each ready or failed). */
  onSessionOpen?: (upstreams: ClientUpstreams) => void;
}

export class GatewaySessions {
  readonly calls = new CallCounter();
  private readonly pool: UpstreamPool;
  private readonly options: GatewaySessionsOptions;
  private readonly startedAt = Date.now();
  private readonly live = new Set<{ server: McpServer; upstreams: ClientUpstreams }>();
  private stateless: McpServer | undefined;

  constructor(pool: UpstreamPool, options: GatewaySessionsOptions) {
    this.pool = pool;
    this.options = options;
  }

  /**
   * Serves one downstream session on `transport`: opens its per-client upstreams (BridgeError
   * `LIMIT_EXCEEDED` at a cap, nothing started), connects an McpServer, and closes both when
   * the session ends (then `onEnd` is called). Resolves once the transport is connected.
   */
  async connect(transport: Transport, onEnd?: () => void): Promise<void> {
    const upstreams = await this.pool.openSession();
    this.options.onSessionOpen?.(upstreams);
    const server = this.newServer(upstreams, {});
    const entry = { server, upstreams };
    this.live.add(entry);
    const end = async (): Promise<void> => {
      if (!this.live.delete(entry)) return;
      await server.close();
      await upstreams.close();
      this.options.log(`session ${upstreams.id} ended; its upstream connections are closed`);
    };
    try {
      const session = await server.connect(transport);
      session.onclose = () => {
        end().catch((err: unknown) => this.options.log(`closing session ${upstreams.id} failed: ${errorMessage(err)}`));
        onEnd?.();
      };
    } catch (err) {
      await end();
      throw err;
    }
  }

  /**
   * The `onSession` of the HTTP servers: a session of its own for each session id, the shared
   * server for a stateless-era request (which has none).
   */
  readonly onHttpSession = (transport: Transport, info: { sessionId: string | undefined }): Promise<unknown> => {
    if (info.sessionId !== undefined) return this.connect(transport);
    this.stateless ??= this.newServer(undefined, this.pool.perClientNames.length > 0 ? { statelessVersions: [] } : {});
    return this.stateless.connect(transport);
  };

  /** Ends every downstream session and their upstreams (the shared ones are the pool's to close). */
  async close(): Promise<void> {
    const all = [...this.live];
    this.live.clear();
    await Promise.allSettled([this.stateless?.close(), ...all.map(async (e) => (await e.server.close(), await e.upstreams.close()))]);
  }

  /** The audit middleware, or with no audit sink a counter of outcomes only (for the status). */
  private auditing(): Middleware {
    const onAudit = this.options.onAudit;
    if (onAudit === undefined) return countCalls((outcome) => this.calls.count(outcome));
    return audit({
      redactor: this.pool.redactor,
      sink: (event) => {
        this.calls.record(event);
        onAudit(event);
      },
    });
  }

  private newServer(upstreams: ClientUpstreams | undefined, extra: Partial<McpServerOptions>): McpServer {
    const provider = (manager: McpManager): ManagerProvider =>
      new ManagerProvider(manager, { forwarding: this.pool.forwardingOf(manager), namespaced: this.options.namespaced ?? true });
    const providers = [...(upstreams === undefined ? [] : [provider(upstreams.manager)]), provider(this.pool.shared)];
    const label = upstreams === undefined ? "" : ` (session ${upstreams.id})`;
    const server = new McpServer(this.options.info, {
      ...extra,
      providers,
      providerTimeoutMs: PROVIDER_TIMEOUT_MS,
      instructions: this.pool.shared.instructions(),
      middleware: [this.auditing()],
      onProviderError: (e) => this.options.log(`upstream list failed${label}: ${errorMessage(e)}`),
    });
    server.resource(STATUS_RESOURCE, () => {
      const own = upstreams === undefined ? undefined : { id: upstreams.id, statuses: upstreams.manager.status() };
      const status = gatewayStatus(this.pool, this.calls, this.startedAt, own);
      return { contents: [{ uri: STATUS_URI, mimeType: "application/json", text: JSON.stringify(status, null, 2) }] };
    });
    return server;
  }
}
