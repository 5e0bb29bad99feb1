/**
 * AcpMcpSessions: the piece an ACP agent plugs in so that the MCP servers an editor sends at
 * `session/new` work in that session, are reported to the editor as they run, and are gone
 * when it ends. One `McpManager` per session: sessions never share a connection, a process
 * or a credential.
 *
 * ```ts
 * const sessions = new AcpMcpSessions(connection, { agentServers });
 * // initialize:   return { agentCapabilities: { ...sessions.agentCapabilities(), loadSession: true } }
 * // session/new:  const sessionId = randomUUID(); await sessions.open(sessionId, params); return { sessionId };
 * // prompt:       await sessions.ready(sessionId); await sessions.callTool(sessionId, name, args);
 * // cancel:       sessions.cancel(sessionId);  close: await sessions.close(sessionId);
 * ```
 *
 * Contract:
 * - `open` rejects malformed `mcpServers` (duplicate names, unknown transports, bad fields)
 *   with `-32602` listing every problem, never a secret. It never fails because a server
 *   fails, and waits for servers at most `startupTimeoutMs`.
 * - Every server that fails is reported to the editor with a `session/update` (a `notice` when
 *   the client accepts notices, else an agent message), after the `session/new` answer.
 * - The end of the connection closes every session: no child process, HTTP session or socket
 *   is left (exit and SIGINT/SIGTERM are covered when `manager.processGuard` is set, as the
 *   reference agent does).
 * - `callTool` reports `tool_call` (pending) → `tool_call_update` in_progress → completed or
 *   failed, and asks the editor before the first call of a tool of an `untrusted` server.
 */
import type { BridgedResult, BridgedTool } from "../bridge/types.ts";
import type { McpServerConfig, TrustLevel } from "../config/types.ts";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { McpManager, McpManagerOptions, ServerStatus } from "../manager/manager.ts";
import type { AcpSessionAuth } from "./session-auth.ts";
import type { TransportFactory } from "../manager/transport-factory.ts";
import type { ReadResourceResult } from "../mcp/types.ts";
import { sessionNotFound, type AcpAgentConnection } from "./connection.ts";
import { OpenSession } from "./open-session.ts";
import { planServers, serverChanges, type AcpClientFeatures, type ServerPlan, type SessionServersRequest } from "./session-servers.ts";
import type { AgentCapabilities } from "./types.ts";
import { settlesWithin } from "../util/deadline.ts";

export type { AcpClientFeatures, SessionRequestContext, SessionServersRequest } from "./session-servers.ts";

/** The hook an MCP-over-ACP binding fills in (see src/acp/mcp-over-acp.ts). */
export interface McpOverAcpHook {
  /** Merged into {@link AcpMcpSessions.agentCapabilities}, e.g. `{ _meta: { mcp_acp_transport: true } }`. */
  capabilities: AgentCapabilities;
  /** True for an `mcpServers` entry this binding serves; such entries skip the ACP parser. */
  claims(entry: unknown): boolean;
  /**
   * Opens a session's claimed entries: the configs for its manager, and a transport factory
   * that reaches them (delegating every other server to `createTransport`). Throw an
   * `RpcError` (`-32602`) for a malformed entry.
   */
  open(sessionId: string, entries: unknown[]): { servers: McpServerConfig[]; transportFactory?: TransportFactory };
  /** The session ended: drop whatever `open` set up for it. */
  close(sessionId: string): void | Promise<void>;
}

export interface AcpMcpSessionsOptions {
  /** The agent's own servers, in every session; a session's server of the same name wins. */
  agentServers?: McpServerConfig[];
  /** Trust of the servers an editor sends (command lookup, approval). Default `trusted`. */
  clientServersTrust?: TrustLevel;
  /**
   * Directory of global config files (`*.json`, any format the config parsers take), which
   * may grant trust; `false` reads none. Default `$XDG_CONFIG_HOME/mcp-bridge`, else
   * `~/.config/mcp-bridge`.
   */
  globalConfigDir?: string | false;
  /**
   * Read `.mcp.json` and `.mcp-bridge.json` in the session's `cwd` (their servers stay
   * `untrusted`, docs/decisions.md 17). Default true.
   */
  workspaceConfig?: boolean;
  /** Mark the text of the servers an editor sends as untrusted content. Default true. */
  wrapClientServers?: boolean;
  /** Longest `open` waits for servers to start, ms. Default 10 000. */
  startupTimeoutMs?: number;
  /** Longest the first `ready` waits for servers still starting, ms. Default 10 000. */
  firstPromptWaitMs?: number;
  /** Options of every session's manager; `approve`, `redactor` and `clientFeatures` are the session's own. */
  manager?: Omit<McpManagerOptions, "approve" | "redactor" | "clientFeatures">;
  clientFeatures?: AcpClientFeatures;
  /**
   * OAuth for the sessions' HTTP servers: an `OAuthProvider` per server whose user step is
   * `auth.authorize` (the agent's UI). A `manager.auth` given too wins for the servers it
   * answers for.
   */
  auth?: AcpSessionAuth;
  /** Diagnostics (one line each, secrets redacted); never protocol output. */
  log?: (line: string) => void;
  mcpOverAcp?: McpOverAcpHook;
}

export class AcpMcpSessions {
  private readonly connection: AcpAgentConnection;
  private readonly options: AcpMcpSessionsOptions;
  private readonly sessions = new Map<string, OpenSession>();
  private readonly log: (line: string) => void;
  private readonly closing = new Set<Promise<unknown>>();
  /** The last `open` of each session id, settled or not: the next one waits for it. */
  private readonly opening = new Map<string, Promise<void>>();
  /** Set once the connection ended: no session may start after that. */
  private ended = false;

  /** When the connection ends, every session is closed (see {@link closeAll}). */
  constructor(connection: AcpAgentConnection, options: AcpMcpSessionsOptions = {}) {
    this.connection = connection;
    this.options = options;
    this.log = options.log ?? (() => {});
    void connection.closed.then(() => {
      this.ended = true;
      return this.closeAll();
    });
  }

  /** What to merge into `initialize`'s `agentCapabilities`: the MCP transports that connect. */
  agentCapabilities(): AgentCapabilities {
    const extra = this.options.mcpOverAcp?.capabilities ?? {};
    const caps: AgentCapabilities = { ...extra, mcpCapabilities: { ...extra.mcpCapabilities, http: true, sse: true } };
    return caps;
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** The session's manager, for what this class does not wrap (prompts, status, events). */
  manager(sessionId: string): McpManager {
    return this.get(sessionId).manager;
  }

  /** The status of every server of the session. */
  status(sessionId: string): ServerStatus[] {
    return this.get(sessionId).manager.status();
  }

  /**
   * Starts the servers of a session (`session/new`, `load` or `resume`): the editor's
   * `mcpServers` merged with the agent's own and with the config files of the global directory
   * and of `cwd`. For a session already open (a `load` or `resume`) only what changed moves:
   * servers whose config is the same keep running, changed and removed ones stop, new ones
   * start; without `mcpServers` the editor's previous list stays. Throws `-32602` for
   * malformed entries, before anything changes; resolves within `startupTimeoutMs` whatever
   * the servers do. Calls for one session id run one after the other.
   */
  open(sessionId: string, request: SessionServersRequest): Promise<void> {
    const run = (this.opening.get(sessionId) ?? Promise.resolve()).then(() => this.openNow(sessionId, request));
    const settled = run.catch(() => undefined);
    this.opening.set(sessionId, settled);
    void settled.then(() => this.opening.get(sessionId) === settled && this.opening.delete(sessionId));
    return run;
  }

  private async openNow(sessionId: string, request: SessionServersRequest): Promise<void> {
    const label = `session ${short(sessionId)}`;
    const log = (line: string) => this.log(`${label}: ${line}`);
    const running = this.sessions.get(sessionId);
    const entries = request.mcpServers ?? running?.plan.entries ?? [];
    const plan = await planServers(sessionId, request, entries, this.options, log);
    if (running !== undefined && this.sessions.get(sessionId) === running) return this.reload(running, plan, log);

    const session = new OpenSession(sessionId, plan, this.options, this.connection, log);
    this.sessions.set(sessionId, session);
    if (this.ended) {
      await this.close(sessionId);
      throw new BridgeError("CLOSED", "the ACP connection ended while the session was starting");
    }
    session.watch();
    await this.start(session, plan.servers);
    // The answer to session/new is written before this runs: updates about a session must not
    // reach the editor before its id does.
    setImmediate(() => session.announce());
  }

  /** A `load` or `resume` of an open session: stop what went or changed, start what is new. */
  private async reload(s: OpenSession, plan: ServerPlan, log: (line: string) => void): Promise<void> {
    const { stop, start, kept } = serverChanges(s.plan.servers, plan.servers);
    const rootsMoved = JSON.stringify(s.plan.roots) !== JSON.stringify(plan.roots);
    s.plan = plan;
    log(`reloaded: kept ${list(kept)}; stopped ${list(stop)}; starting ${list(start.map((c) => c.name))}`);
    await Promise.all(stop.map((name) => s.manager.remove(name)));
    if (rootsMoved) await s.manager.rootsChanged();
    if (start.length > 0) {
      s.waited = false;
      await this.start(s, start);
    }
  }

  /** Starts servers, waiting for them at most `startupTimeoutMs`. */
  private async start(s: OpenSession, servers: McpServerConfig[]): Promise<void> {
    const connecting = s.manager.connect(servers).catch((err: unknown) => s.log(`connect failed: ${errorMessage(err)}`));
    await settlesWithin(connecting, this.options.startupTimeoutMs ?? 10_000);
  }

  /**
   * Call at the start of each prompt turn: the first time, waits (at most `firstPromptWaitMs`)
   * for servers still starting. Returns the turn's signal, aborted by {@link cancel}.
   */
  async ready(sessionId: string): Promise<AbortSignal> {
    const s = this.get(sessionId);
    // A prompt means the editor knows the session: what is queued for it can go now.
    s.announce();
    if (!s.waited) {
      s.waited = true;
      const report = await s.manager.ready(this.options.firstPromptWaitMs ?? 10_000);
      if (report.pending.length > 0) this.log(`session ${short(sessionId)}: still starting after the wait: ${report.pending.join(", ")}`);
    }
    return s.turn.signal;
  }

  /** The session's bridged tools (`mcp__<server>__<tool>`), with their servers' schemas. */
  async tools(sessionId: string): Promise<BridgedTool[]> {
    return this.get(sessionId).manager.tools();
  }

  /**
   * Runs a tool and reports it to the editor. Never throws for the tool's sake: every failure
   * is an `isError` result (reported `failed`). Aborting `signal`, or `cancel`, cancels it.
   */
  async callTool(sessionId: string, name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal } = {}): Promise<BridgedResult> {
    const s = this.get(sessionId);
    const signal = options.signal === undefined ? s.turn.signal : AbortSignal.any([s.turn.signal, options.signal]);
    return s.calls.call(name, args, signal);
  }

  /**
   * Reads a resource. Without `server`, the server whose resource list holds `uri` is used.
   * Throws an Error with a readable (redacted) message when refused or failed.
   */
  async readResource(sessionId: string, uri: string, server?: string): Promise<{ server: string; result: ReadResourceResult }> {
    const s = this.get(sessionId);
    let target = server;
    if (target === undefined) {
      const owners = [...new Set((await s.manager.listResources()).filter((r) => r.uri === uri).map((r) => r.server))];
      if (owners.length !== 1) {
        const why = owners.length === 0 ? "no server of this session lists it" : `several servers list it (${owners.join(", ")})`;
        throw new BridgeError("INVALID_STATE", `cannot tell which server to read ${JSON.stringify(uri.slice(0, 200))} from: ${why}; name the server`);
      }
      target = owners[0]!;
    }
    return { server: target, result: await s.manager.readResource(target, uri, { signal: s.turn.signal }) };
  }

  /**
   * `session/cancel`: aborts the session's calls in flight (each server gets
   * `notifications/cancelled`) and its pending permission questions. Unknown ids are ignored.
   */
  cancel(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return;
    s.turn.abort(new BridgeError("CANCELLED", "the turn was cancelled"));
    s.turn = new AbortController();
  }

  /** Closes the session's servers; resolves when every process is gone. False if unknown. */
  async close(sessionId: string): Promise<boolean> {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return false;
    this.sessions.delete(sessionId);
    const done = (async () => {
      await s.close();
      await this.options.mcpOverAcp?.close(sessionId);
    })();
    this.closing.add(done);
    try {
      await done;
    } finally {
      this.closing.delete(done);
    }
    this.log(`session ${short(sessionId)}: closed`);
    return true;
  }

  /** Closes every session; resolves when every one of them (and any closing already) is gone. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...[...this.sessions.keys()].map((id) => this.close(id)), ...this.closing]);
  }

  private get(sessionId: string): OpenSession {
    const s = this.sessions.get(sessionId);
    if (s === undefined) throw sessionNotFound(sessionId);
    return s;
  }
}

function list(names: readonly string[]): string {
  return names.length === 0 ? "none" : names.map((n) => JSON.stringify(n)).join(", ");
}

function short(sessionId: string): string {
  return sessionId.length <= 12 ? sessionId : sessionId.slice(0, 8);
}
