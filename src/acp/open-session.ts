/**
 * One open ACP session of {@link AcpMcpSessions}: its manager (built so that a reload can
 * change what the session's servers see), its tool calls, the updates held until the editor
 * knows the session id, and the reports of its servers' failures to the editor.
 */
import type { ResolvedServerConfig, TrustLevel } from "../config/types.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import type { StateChange } from "../manager/events.ts";
import { McpManager } from "../manager/manager.ts";
import { createTransport } from "../manager/transport-factory.ts";
import type { AcpAgentConnection } from "./connection.ts";
import { textBlock } from "./content.ts";
import { authFor } from "./session-auth.ts";
import { sessionClientFeatures, type ServerPlan } from "./session-servers.ts";
import type { AcpMcpSessionsOptions } from "./sessions.ts";
import { SessionToolCalls, type ToolCallSession } from "./tool-calls.ts";
import type { SessionUpdate } from "./types.ts";

export class OpenSession implements ToolCallSession {
  /** Aborted by `session/cancel` (then replaced): every call of the turn listens to it. */
  turn = new AbortController();
  /** Set once the first prompt waited for servers still starting. */
  waited = false;
  readonly calls: SessionToolCalls;
  #announced = false;
  #closed = false;
  #queued: SessionUpdate[] = [];

  /** Set before the manager starts anything; a reload replaces it. */
  plan: ServerPlan;

  readonly id: string;
  readonly manager: McpManager;
  readonly #connection: AcpAgentConnection;
  /** Diagnostics, already prefixed with the session's label. */
  readonly log: (line: string) => void;

  /**
   * The session's manager takes `options.manager`, with the session's own approval (asked of
   * the editor), untrusted wrapping, client features and, through the current plan, the
   * transport factory of an MCP-over-ACP hook.
   */
  constructor(id: string, plan: ServerPlan, options: AcpMcpSessionsOptions, connection: AcpAgentConnection, log: (line: string) => void) {
    this.id = id;
    this.plan = plan;
    this.#connection = connection;
    this.log = log;
    this.calls = new SessionToolCalls(this, connection);
    const base = options.manager ?? {};
    const wrapClient = options.wrapClientServers ?? true;
    this.manager = new McpManager({
      ...base,
      // Through the plan, so that a reload can bring the factory of new tunnels.
      transportFactory: (prepared, hooks) => (this.plan.transportFactory ?? base.transportFactory ?? createTransport)(prepared, hooks),
      approve: (req) => this.calls.approve(req),
      untrusted: {
        ...base.untrusted,
        wrapServer: (c: ResolvedServerConfig) => c.trust === "untrusted" || (wrapClient && this.plan.fromClient.has(c.name)),
      },
      clientFeatures: sessionClientFeatures(id, options.clientFeatures, () => this.plan),
      auth: authFor(id, base.auth, options.auth),
    });
  }

  get trust(): ReadonlyMap<string, TrustLevel> {
    return this.plan.trust;
  }

  turnSignal(): AbortSignal {
    return this.turn.signal;
  }

  /** Sends an update, or holds it until {@link announce}. */
  send(update: SessionUpdate): void {
    if (this.#closed) return;
    if (!this.#announced) this.#queued.push(update);
    else void this.#connection.sessionUpdate(this.id, update);
  }

  /** The editor knows the session id now: send what was held. */
  announce(): void {
    if (this.#announced) return;
    this.#announced = true;
    const queued = this.#queued;
    this.#queued = [];
    for (const update of queued) this.send(update);
  }

  /** Logs the manager's events and reports failed servers and dropped tools to the editor. */
  watch(): void {
    this.manager.on("state", (change: StateChange) => {
      const server = JSON.stringify(change.server);
      const pid = this.manager.status().find((st) => st.name === change.server)?.pid;
      const why = change.error === undefined ? "" : `: ${change.error}`;
      this.log(`server ${server} ${change.to}${change.to === "ready" && pid !== undefined ? ` (pid ${pid})` : ""}${why}`);
      if (change.to === "failed") {
        this.#report(`MCP server ${server} is unavailable`, `${change.error ?? "it failed"}. Its tools cannot be used in this session.`);
      } else if (change.to === "restarting" && change.attempt === 1) {
        this.#report(`MCP server ${server} stopped`, `${change.error ?? "it failed"}. Restarting it.`);
      }
    });
    this.manager.on("warning", (w) => {
      this.log(w.message);
      if (w.kind === "server_limit" || w.kind === "tool_limit") this.#report("Some MCP tools are not available", w.message);
    });
    this.manager.on("log", (entry) => this.log(`[${entry.server}] ${entry.message}`));
  }

  close(): Promise<void> {
    this.#closed = true;
    this.turn.abort(new BridgeError("CANCELLED", "the session was closed"));
    return this.manager.close();
  }

  /** Something the user should see: a notice where the client takes them, else a message. */
  #report(title: string, detail: string): void {
    const notices = this.#connection.clientCapabilities.session?.notices;
    this.send(
      notices !== undefined && notices !== null
        ? { sessionUpdate: "notice", severity: "warning", title, description: detail }
        : { sessionUpdate: "agent_message_chunk", content: textBlock(`${title}: ${detail}\n`) },
    );
  }
}
