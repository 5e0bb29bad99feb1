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
 *   is left (the managers' process guard covers exit and SIGINT/SIGTERM).
 * - `callTool` reports `tool_call` (pending) → `tool_call_update` in_progress → completed or
 *   failed, and asks the editor before the first call of a tool of an `untrusted` server.
 */
import type { BridgedResult, BridgedTool } from "../bridge/types.ts";
import { discoverConfigs } from "../config/discovery.ts";
import { parseAcpMcpServers } from "../config/parse-acp.ts";
import type { ConfigProblem, McpServerConfig, ResolvedServerConfig, TrustLevel } from "../config/types.ts";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { McpManager, type McpManagerOptions, type ServerStatus } from "../manager/manager.ts";
import type { StateChange } from "../manager/events.ts";
import type { TransportFactory } from "../manager/transport-factory.ts";
import type { ReadResourceResult } from "../mcp/types.ts";
import { invalidParams, sessionNotFound, type AcpAgentConnection } from "./connection.ts";
import { textBlock } from "./content.ts";
import { SessionToolCalls, type ToolCallSession } from "./tool-calls.ts";
import type { AgentCapabilities, SessionUpdate } from "./types.ts";

/** The hook an MCP-over-ACP binding fills in (see issue 5 section 4). */
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
  /** Mark the text of the servers an editor sends as untrusted content. Default true. */
  wrapClientServers?: boolean;
  /** Longest `open` waits for servers to start, ms. Default 10 000. */
  startupTimeoutMs?: number;
  /** Longest the first `ready` waits for servers still starting, ms. Default 10 000. */
  firstPromptWaitMs?: number;
  /** Options of every session's manager; `approve` and `redactor` are the session's own. */
  manager?: Omit<McpManagerOptions, "approve" | "redactor">;
  /** Diagnostics (one line each, secrets redacted); never protocol output. */
  log?: (line: string) => void;
  mcpOverAcp?: McpOverAcpHook;
}

/** One open session: its manager, its tool calls, and the updates held until the editor knows it. */
class OpenSession implements ToolCallSession {
  /** Aborted by `session/cancel` (then replaced): every call of the turn listens to it. */
  turn = new AbortController();
  /** Set once the first prompt waited for servers still starting. */
  waited = false;
  readonly calls: SessionToolCalls;
  private announced = false;
  private closed = false;
  private queued: SessionUpdate[] = [];

  constructor(
    readonly id: string,
    readonly manager: McpManager,
    readonly trust: ReadonlyMap<string, TrustLevel>,
    private readonly connection: AcpAgentConnection,
    readonly log: (line: string) => void,
  ) {
    this.calls = new SessionToolCalls(this, connection);
  }

  turnSignal(): AbortSignal {
    return this.turn.signal;
  }

  /** Sends an update, or holds it until {@link announce}. */
  send(update: SessionUpdate): void {
    if (this.closed) return;
    if (!this.announced) this.queued.push(update);
    else void this.connection.sessionUpdate(this.id, update);
  }

  /** The editor knows the session id now: send what was held. */
  announce(): void {
    if (this.announced) return;
    this.announced = true;
    const queued = this.queued;
    this.queued = [];
    for (const update of queued) this.send(update);
  }

  close(): Promise<void> {
    this.closed = true;
    this.turn.abort(new Error("the session was closed"));
    return this.manager.close();
  }
}

export class AcpMcpSessions {
  private readonly connection: AcpAgentConnection;
  private readonly options: AcpMcpSessionsOptions;
  private readonly sessions = new Map<string, OpenSession>();
  private readonly log: (line: string) => void;
  private readonly closing = new Set<Promise<unknown>>();
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
   * `mcpServers` merged with the agent's own. An open session of the same id is replaced.
   * Throws `-32602` for malformed entries; resolves within `startupTimeoutMs` whatever the
   * servers do.
   */
  async open(sessionId: string, request: { cwd: string; mcpServers?: readonly unknown[] }): Promise<void> {
    const hook = this.options.mcpOverAcp;
    const entries = request.mcpServers ?? [];
    const claimed = hook === undefined ? [] : entries.filter((e) => hook.claims(e));
    const plain = entries.map((e, i) => ({ e, i })).filter(({ e }) => !claimed.includes(e));
    const parsed = parseAcpMcpServers(plain.map(({ e }) => e));
    const problems = parsed.problems.map((p) => ({ ...p, path: `/mcpServers${reindex(p.path, plain.map(({ i }) => i))}` }));
    const errors = problems.filter((p) => p.severity === "error");
    if (errors.length > 0) {
      const list = errors.map((p) => `${p.path}: ${p.message}`).join("; ");
      throw invalidParams(`mcpServers: ${list}`, { problems: errors.map(({ path, message }) => ({ path, message })) });
    }
    const label = `session ${short(sessionId)}`;
    for (const p of problems) this.log(`${label}: ${p.path}: ${p.message}`);

    await this.close(sessionId);
    const trust = this.options.clientServersTrust ?? "trusted";
    const fromClient = parsed.servers.map((c): McpServerConfig => ({ ...c, trust, ...(c.transport === "stdio" ? { cwd: request.cwd } : {}) }));
    const bound = hook === undefined || claimed.length === 0 ? { servers: [] } : hook.open(sessionId, claimed);
    const tunnelled = bound.servers.map((c) => (c.trust === undefined ? { ...c, trust } : c));
    const merged = await discoverConfigs({
      agentServers: this.options.agentServers,
      sessionServers: [...fromClient, ...tunnelled],
      log: (line) => this.log(`${label}: ${line}`),
    });
    for (const p of merged.problems) this.log(`${label}: ${describe(p)}`);
    const clientNames = new Set(Object.keys(merged.sources).filter((name) => merged.sources[name] === "session"));
    const wrapClient = this.options.wrapClientServers ?? true;
    const base = this.options.manager ?? {};
    let session: OpenSession | undefined;
    const manager = new McpManager({
      ...base,
      ...(bound.transportFactory === undefined ? {} : { transportFactory: bound.transportFactory }),
      approve: (req) => session?.calls.approve(req) ?? "deny",
      untrusted: {
        ...base.untrusted,
        wrapServer: (c: ResolvedServerConfig) => c.trust === "untrusted" || (wrapClient && clientNames.has(c.name)),
      },
    });
    const trustOf = new Map(merged.servers.map((c) => [c.name, c.trust ?? "untrusted"] as const));
    session = new OpenSession(sessionId, manager, trustOf, this.connection, (line) => this.log(`${label}: ${line}`));
    this.sessions.set(sessionId, session);
    if (this.ended) {
      await this.close(sessionId);
      throw new BridgeError("CLOSED", "the ACP connection ended while the session was starting");
    }
    this.watch(session, label);
    const connecting = manager.connect(merged.servers).catch((err: unknown) => this.log(`${label}: connect failed: ${errorMessage(err)}`));
    await withTimeout(connecting, this.options.startupTimeoutMs ?? 10_000);
    // The answer to session/new is written before this runs: updates about a session must not
    // reach the editor before its id does.
    const opened = session;
    setImmediate(() => opened.announce());
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
        throw new Error(`cannot tell which server to read ${JSON.stringify(uri.slice(0, 200))} from: ${why}; name the server`);
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
    s.turn.abort(new Error("the turn was cancelled"));
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

  /** Something the user should see: a notice where the client takes them, else a message. */
  private report(s: OpenSession, title: string, detail: string): void {
    const notices = this.connection.clientCapabilities.session?.notices;
    s.send(
      notices !== undefined && notices !== null
        ? { sessionUpdate: "notice", severity: "warning", title, description: detail }
        : { sessionUpdate: "agent_message_chunk", content: textBlock(`${title}: ${detail}\n`) },
    );
  }

  private watch(s: OpenSession, label: string): void {
    s.manager.on("state", (change: StateChange) => {
      const server = JSON.stringify(change.server);
      const pid = s.manager.status().find((st) => st.name === change.server)?.pid;
      const why = change.error === undefined ? "" : `: ${change.error}`;
      this.log(`${label}: server ${server} ${change.to}${change.to === "ready" && pid !== undefined ? ` (pid ${pid})` : ""}${why}`);
      if (change.to === "failed") {
        this.report(s, `MCP server ${server} is unavailable`, `${change.error ?? "it failed"}. Its tools cannot be used in this session.`);
      } else if (change.to === "restarting" && change.attempt === 1) {
        this.report(s, `MCP server ${server} stopped`, `${change.error ?? "it failed"}. Restarting it.`);
      }
    });
    s.manager.on("warning", (w) => {
      this.log(`${label}: ${w.message}`);
      if (w.kind === "server_limit" || w.kind === "tool_limit") this.report(s, "Some MCP tools are not available", w.message);
    });
    s.manager.on("log", (entry) => this.log(`${label}: [${entry.server}] ${entry.message}`));
  }
}

/** `/3/name` of a filtered list back to the index in the original list. */
function reindex(path: string, indexes: readonly number[]): string {
  const m = /^\/(\d+)(.*)$/.exec(path);
  if (m === null) return path;
  const original = indexes[Number(m[1])];
  return original === undefined ? path : `/${original}${m[2]}`;
}

function describe(p: ConfigProblem): string {
  return `${p.severity} ${p.source ?? ""}${p.path}: ${p.message}`;
}

function short(sessionId: string): string {
  return sessionId.length <= 12 ? sessionId : sessionId.slice(0, 8);
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise.then(() => undefined), bound]).finally(() => clearTimeout(timer));
}
