/**
 * McpManager: the MCP servers of one agent session behind one object. Give it server configs;
 * get back a live, namespaced, policy-filtered tool set that survives crashes, hangs and
 * misconfiguration, and never leaks a secret or a child process.
 *
 * ```ts
 * const manager = new McpManager({ approve: async (req) => (await askUser(req)) ? "allow_once" : "deny" });
 * manager.on("warning", (w) => console.warn(w.message));
 * await manager.connect(configs);           // every server's first attempt has settled
 * const tools = await manager.tools();      // BridgedTool[]: name, inputSchema, ...
 * const result = await manager.callTool("mcp__fs__read_file", { path: "README.md" });
 * await manager.close();                    // every child process is gone
 * ```
 *
 * Contract: `callTool` never throws; every event, status and error message has been through
 * the session's {@link Redactor}; `close()` stops every child, and so does the process guard
 * (on exit, SIGINT and SIGTERM) when the manager was made with `processGuard: true`.
 */
import { ToolNamer, type NamingFunction } from "../bridge/naming.ts";
import type { ResultLimits } from "../bridge/results.ts";
import type { BridgedResult, BridgedTool } from "../bridge/types.ts";
import type { UntrustedWrapper } from "../bridge/untrusted.ts";
import { withDefaults } from "../config/parse-common.ts";
import type { McpServerConfig, ResolvedServerConfig, TransportKind, TrustLevel } from "../config/types.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import type { CallOptions } from "../mcp/client.ts";
import type { CompleteRequestParams, CompleteResult, GetPromptResult, ReadResourceResult, Tool } from "../mcp/types.ts";
import { ApprovalGate, type Approver } from "../security/policy.ts";
import { RateLimiter, type RateLimiterOptions } from "../security/rate-limit.ts";
import { Redactor } from "../security/redact.ts";
import { Emitter } from "../util/emitter.ts";
import { describeType, isPlainObject, notNonEmptyString } from "../util/object.ts";
import { settlesWithin } from "../util/deadline.ts";
import { auditRecord, type AuditArgsMode } from "./audit.ts";
import { runToolCall, type CallDeps, type ToolCallOptions } from "./call.ts";
import { catalogWarnings, ToolCatalog } from "./catalog.ts";
import { ServerConnection, type ServerConnectionOptions } from "./connection.ts";
import type { McpManagerEvents, ServerState, WarningKind } from "./events.ts";
import { guardProcess } from "./process-guard.ts";
import { ListChanges } from "./list-changes.ts";
import * as res from "./resources.ts";
import { UntrustedText, type UntrustedOptions } from "./untrusted-text.ts";

export const DEFAULT_MAX_SERVERS = 10;
export const DEFAULT_MAX_TOOLS = 100;
export const DEFAULT_READY_TIMEOUT_MS = 30_000;

export interface McpManagerOptions extends Omit<ServerConnectionOptions, "redactor" | "now"> {
  /** The session's redactor; share it with everything else that logs. Default: a new one. */
  redactor?: Redactor;
  /** Servers per manager; configs beyond it are dropped with a warning. Default 10. */
  maxServers?: number;
  /** Tools exposed in total; the rest are dropped (config order, then tool order) with a warning. Default 100. */
  maxTools?: number;
  /** Asked before the first call to each tool of an `untrusted` server. Without it such calls are refused. */
  approve?: Approver;
  /** Per-server token bucket. Default 100 calls per minute; `false` turns it off. */
  rateLimit?: RateLimiterOptions | false;
  /** Globs on bridged names applied to every server, on top of each server's own `allow`/`deny`. */
  allow?: string[];
  deny?: string[];
  /** Replaces the `mcp__<server>__<tool>` naming scheme. */
  naming?: NamingFunction;
  /** Cap on bridged names. Default 64. */
  maxNameLength?: number;
  /** Size limits of one tool result (default 64 KiB of text, 5 MiB of binary). */
  resultLimits?: ResultLimits;
  /**
   * Untrusted content: wrap in markers (default true) and scan every channel for injection
   * (default true). `wrapServer` picks the servers whose text is untrusted content; default:
   * those whose `trust` is `untrusted`. (The ACP layer also picks the servers an editor sent,
   * which are trusted for command resolution only.)
   */
  untrusted?: UntrustedOptions;
  /** How arguments appear in audit events. Default `redacted`. */
  auditArgs?: AuditArgsMode;
  /** Replace known secrets in tool results too. Default true. (Everything else a server sends is always redacted.) */
  redactResults?: boolean;
  /**
   * Install process-wide exit/SIGINT/SIGTERM handlers that kill this manager's children (see
   * process-guard.ts). Default false: a library does not take over a process's signals unless
   * the program asks; a program that owns its process (a CLI, an agent) should.
   */
  processGuard?: boolean;
}

/** One server's state for a status display. Every string is redacted. */
export interface ServerStatus {
  name: string;
  state: ServerState;
  transport: TransportKind;
  trust: TrustLevel;
  /** The negotiated MCP version, while connected. */
  protocolVersion?: string;
  /** `serverInfo.name` from the handshake, while connected. */
  serverName?: string;
  /** Tools the server lists (last known). */
  tools: number;
  /** Of those, tools exposed (after policy and the tool limit). */
  exposed: number;
  restarts: number;
  /** The current (or last) stdio child. */
  pid?: number;
  lastError?: string;
  /** When `state` was entered, ms since the epoch. */
  since: number;
}

/** The outcome of {@link McpManager.ready}: server names by where they stand. */
export interface ReadyReport {
  ready: string[];
  failed: string[];
  /** Still connecting or restarting when the bound ran out. */
  pending: string[];
}

export type { ToolCallOptions } from "./call.ts";

const EMPTY: readonly Tool[] = Object.freeze([]);

export class McpManager extends Emitter<McpManagerEvents> {
  /** The session's redactor: every secret the manager resolves is added to it. */
  readonly redactor: Redactor;
  private readonly options: McpManagerOptions;
  private readonly connections = new Map<string, ServerConnection>();
  private readonly catalog: ToolCatalog;
  private readonly gate: ApprovalGate;
  private readonly limiter: RateLimiter | undefined;
  private readonly untrusted: UntrustedText;
  private readonly callDeps: CallDeps;
  private readonly maxServers: number;
  private readonly listChanges: ListChanges;
  private release: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: McpManagerOptions = {}) {
    super();
    this.options = options;
    this.redactor = options.redactor ?? new Redactor();
    this.maxServers = positive(options.maxServers ?? DEFAULT_MAX_SERVERS, "maxServers");
    this.listChanges = new ListChanges(options.listChangedDebounceMs, (change) => this.emit("listChanged", change));
    const namer = new ToolNamer({ maxLength: options.maxNameLength, naming: options.naming });
    const policy = { allow: options.allow, deny: options.deny };
    this.catalog = new ToolCatalog({ namer, maxTools: positive(options.maxTools ?? DEFAULT_MAX_TOOLS, "maxTools"), policy });
    this.gate = new ApprovalGate(options.approve);
    this.limiter = options.rateLimit === false ? undefined : new RateLimiter(options.rateLimit ?? {});
    this.untrusted = new UntrustedText(options.untrusted ?? {}, (warning) => this.report("warning", warning));
    this.callDeps = {
      catalog: this.catalog,
      connection: (server) => this.connections.get(server),
      limiter: this.limiter,
      gate: this.gate,
      redactor: this.redactor,
      wrapperFor: (server) => this.wrapperFor(server),
      limits: options.resultLimits ?? {},
      redactResults: options.redactResults ?? true,
      // The record (a JSON size, a redacted copy of the arguments) is built only when read.
      audit: (input) => {
        if (this.listenerCount("audit") > 0) this.emit("audit", auditRecord(input, this.redactor, options.auditArgs));
      },
    };
    if (options.processGuard === true) {
      this.release = guardProcess({ killChildrenSync: () => this.killChildrenSync(), close: () => this.close() });
    }
  }

  /** A paragraph for the system prompt explaining the untrusted-content markers. */
  instructions(): string {
    return this.untrusted.instructions();
  }

  /**
   * Sends an event the manager itself makes (warnings, tool changes) through the redactor: each
   * string in it, keys included, has every known secret replaced. A server connection's events
   * come redacted already and audit records are built redacted, so those go out as they are.
   */
  private report<K extends keyof McpManagerEvents>(event: K, payload: McpManagerEvents[K]): void {
    this.emit(event, this.redactor.redactJson(payload));
  }

  /**
   * Starts every new server in parallel, each under its own timeout, and resolves once each
   * one's first attempt has settled (ready, failed, or a restart scheduled). One server failing
   * or hanging never blocks or fails the others; this never rejects for a server's sake.
   * Disabled configs are skipped; a name already in use, and servers beyond `maxServers`, are
   * dropped with a warning. Returns the status of every server.
   */
  async connect(configs: readonly McpServerConfig[]): Promise<ServerStatus[]> {
    if (this.closing !== undefined) throw new BridgeError("CLOSED", "McpManager.connect: the manager is closed");
    checkConfigs(configs);
    const added: ServerConnection[] = [];
    const overLimit: string[] = [];
    for (const raw of configs) {
      const config = withDefaults(raw);
      if (!config.enabled) continue;
      if (this.connections.has(config.name)) {
        this.warn("duplicate_server", `server ${JSON.stringify(config.name)} is already in this session; the second config was ignored`, config.name);
        continue;
      }
      if (this.connections.size >= this.maxServers) {
        overLimit.push(config.name);
        continue;
      }
      const connection = this.createConnection(config);
      this.connections.set(config.name, connection);
      added.push(connection);
    }
    if (overLimit.length > 0) {
      this.report("warning", {
        kind: "server_limit",
        message: `the limit of ${this.maxServers} servers per session was reached; not started: ${overLimit.map((n) => JSON.stringify(n)).join(", ")}`,
        dropped: overLimit,
        at: Date.now(),
      });
    }
    await Promise.all(added.map((c) => c.start()));
    return this.status();
  }

  /**
   * Resolves when every server is `ready` or `failed` (or closed), or after `timeoutMs`
   * (default 30 s), whichever is first; never rejects. For a first prompt that may wait for
   * servers still starting.
   */
  async ready(timeoutMs: number = DEFAULT_READY_TIMEOUT_MS): Promise<ReadyReport> {
    await settlesWithin(Promise.all([...this.connections.values()].map((c) => c.whenSettled())), timeoutMs);
    const report: ReadyReport = { ready: [], failed: [], pending: [] };
    for (const c of this.connections.values()) {
      if (c.state === "ready") report.ready.push(c.name);
      else if (c.state === "failed" || c.state === "closed") report.failed.push(c.name);
      else report.pending.push(c.name);
    }
    return report;
  }

  /**
   * The exposed tools: every ready (or restarting) server's tools under bridged names, after
   * the allow/deny policy and the tool limit; the schemas are the servers' own objects (copies
   * only where a secret was redacted). Never waits on a server: a list older than the cache
   * TTL is served as it is while it is re-read in the background (bounded by the server's
   * `timeout`), and a list that changed is announced by a `toolsChanged` event.
   */
  async tools(): Promise<BridgedTool[]> {
    for (const c of this.connections.values()) void c.refreshTools();
    this.refreshCatalog();
    return this.catalog.list();
  }

  /**
   * Calls a tool by its bridged name. Never throws: unknown names, policy refusals, denied
   * approvals, rate limits, servers restarting or failed, timeouts, crashes and protocol
   * errors all come back as `isError` results with a readable message.
   */
  callTool(name: string, args: Record<string, unknown> = {}, options: ToolCallOptions = {}): Promise<BridgedResult> {
    return runToolCall(this.callDeps, name, args, options);
  }

  /** Every resource of the servers that expose them, each tagged with its server. */
  listResources(options: CallOptions = {}): Promise<res.ManagedResource[]> {
    return res.listResourcesAcross(this.resourceDeps(), options);
  }

  /** Reads a resource; throws {@link res.ManagerError} when refused or failed. */
  readResource(server: string, uri: string, options: CallOptions = {}): Promise<ReadResourceResult> {
    return res.readResourceFrom(this.resourceDeps(), server, uri, options);
  }

  /** Reads resources into one size-capped context block (untrusted text wrapped). */
  resourceContext(refs: readonly { server: string; uri: string }[], options: CallOptions & { maxBytes?: number } = {}): Promise<res.ManagedResourceContext> {
    return res.resourceContextFor(this.resourceDeps(), refs, { ...options, wrapper: this.untrusted.shared });
  }

  /** Every prompt of the ready servers, each tagged with its server. */
  listPrompts(options: CallOptions = {}): Promise<res.ManagedPrompt[]> {
    return res.listPromptsAcross(this.resourceDeps(), options);
  }

  /** Gets a prompt; throws {@link res.ManagerError} when refused or failed. */
  getPrompt(server: string, name: string, args: Record<string, string> = {}, options: CallOptions = {}): Promise<GetPromptResult> {
    return res.getPromptFrom(this.resourceDeps(), server, name, args, options);
  }

  /** Completion values for a prompt or resource-template argument; throws {@link res.ManagerError}. */
  complete(server: string, params: CompleteRequestParams, options: CallOptions = {}): Promise<CompleteResult> {
    return res.completeFrom(this.resourceDeps(), server, params, options);
  }

  /** The `instructions` of every ready server that gave some, for a system prompt (untrusted ones marked). */
  serverInstructions(): res.ServerInstructions[] {
    return res.instructionsOf(this.resourceDeps());
  }

  /** One entry per server, in config order. */
  status(): ServerStatus[] {
    const exposed = new Map<string, number>();
    for (const tool of this.catalog.list()) exposed.set(tool.server, (exposed.get(tool.server) ?? 0) + 1);
    return [...this.connections.values()].map((c) => {
      const s: ServerStatus = {
        name: c.name,
        state: c.state,
        transport: c.config.transport,
        trust: c.config.trust,
        tools: c.tools?.length ?? 0,
        exposed: exposed.get(c.name) ?? 0,
        restarts: c.restarts,
        since: c.since,
      };
      if (c.protocolVersion !== undefined) s.protocolVersion = c.protocolVersion;
      if (c.serverInfo?.name !== undefined) s.serverName = c.serverInfo.name;
      if (c.pid !== undefined) s.pid = c.pid;
      if (c.lastError !== undefined) s.lastError = c.lastError;
      return this.redactor.redactJson(s);
    });
  }

  /** Sends `notifications/roots/list_changed` to every ready server (given a `clientFeatures.roots` handler). */
  async rootsChanged(): Promise<void> {
    if (this.options.clientFeatures?.roots === undefined) return;
    await Promise.all([...this.connections.values()].map((c) => c.use((client) => client.notifyRootsChanged()).catch(() => undefined)));
  }

  /** Closes one server and removes it (and its tools) from the session. */
  async remove(name: string): Promise<void> {
    const connection = this.connections.get(name);
    if (connection === undefined) return;
    this.connections.delete(name);
    this.catalog.removeServer(name);
    this.limiter?.delete(name);
    this.refreshCatalog();
    await connection.close();
  }

  /** Closes every server in parallel; resolves when every child process is gone. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.listChanges.stop();
      await Promise.allSettled([...this.connections.values()].map((c) => c.close()));
      this.release?.();
      this.release = undefined;
    })();
    return this.closing;
  }

  /** SIGKILLs every child of every server now (used by the process guard on exit). */
  killChildrenSync(): void {
    for (const c of this.connections.values()) c.killChildrenSync();
  }

  private createConnection(config: ResolvedServerConfig): ServerConnection {
    const connection = new ServerConnection(config, { ...this.options, redactor: this.redactor });
    connection.on("state", (change) => {
      this.emit("state", change);
      if (change.to !== "connecting") this.refreshCatalog();
    });
    connection.on("toolsChanged", () => {
      this.untrusted.scanTools(connection.config, connection.tools ?? EMPTY);
      this.refreshCatalog();
    });
    connection.on("listChanged", (change) => this.listChanges.changed(change));
    connection.on("log", (entry) => this.emit("log", entry));
    connection.on("warning", (warning) => this.emit("warning", warning));
    return connection;
  }

  private refreshCatalog(): void {
    const servers = [...this.connections.values()].map((c) => ({
      config: c.config,
      tools: c.state === "failed" || c.state === "closed" ? EMPTY : (c.tools ?? EMPTY),
    }));
    const update = this.catalog.update(servers);
    for (const warning of catalogWarnings(update, this.catalog.size)) this.report("warning", warning);
    const { change } = update;
    if (change.added.length + change.removed.length + change.changed.length > 0) this.report("toolsChanged", change);
  }

  private wrapperFor(server: string): UntrustedWrapper | undefined {
    return this.untrusted.wrapperFor(this.connections.get(server)?.config);
  }

  private resourceDeps(): res.ResourceDeps {
    return {
      connections: () => [...this.connections.values()],
      connection: (server) => this.connections.get(server),
      redactor: this.redactor,
      wrapperFor: (server) => this.wrapperFor(server),
      warn: (kind, server, message) => this.warn(kind, message, server),
    };
  }

  private warn(kind: WarningKind, message: string, server?: string): void {
    this.report("warning", { kind, message, ...(server === undefined ? {} : { server }), at: Date.now() });
  }
}

/**
 * Refuses, before anything starts, what is not a list of server configs at all: a caller
 * without type checks passing a file name, a parsed file's whole object, or a list with a hole.
 * What a config says beyond its shape is checked where it is used (a bad one fails alone).
 */
function checkConfigs(configs: unknown): void {
  if (!Array.isArray(configs)) {
    throw new TypeError(`McpManager.connect takes an array of server configs, got ${describeType(configs)}; read config files with discoverConfigs (or parseMcpJsonFile) first`);
  }
  configs.forEach((config: unknown, i) => {
    if (!isPlainObject(config)) throw new TypeError(`McpManager.connect: config ${i} must be an object, got ${describeType(config)}`);
    const wrong = notNonEmptyString(config.name);
    if (wrong !== undefined) throw new TypeError(`McpManager.connect: config ${i} needs a non-empty string "name", got ${wrong}`);
  });
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`McpManager: ${name} must be a positive integer, got ${value}`);
  return value;
}
