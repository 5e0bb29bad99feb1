/**
 * One MCP server for the life of a session: connect under its timeout, follow its tool list,
 * watch its health, restart it after a crash with exponential backoff, and make sure its
 * process is gone when it is closed.
 *
 * Contract:
 * - Every state change is an event with a timestamp; `restarting` carries the backoff delay.
 * - A crash fails the calls in flight at once (the JSON-RPC peer rejects them with the exit
 *   reason) and, with `restartOnCrash`, schedules restart n after `backoffDelay(n)`, up to
 *   `maxRestarts` in a row. A server that stays ready for `stableAfterMs` earns a fresh budget.
 * - Configuration errors (secrets, policy, unsupported version, refused credentials) fail the
 *   server at once: restarting cannot fix them.
 * - Every string this class emits or reports has been through the redactor, the server's
 *   tool definitions and instructions included.
 */
import type { ResolvedServerConfig } from "../config/types.ts";
import { findPlaintextCredentials, SecretError } from "../config/secrets.ts";
import { BridgeError, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { McpClient, type CallOptions } from "../mcp/client.ts";
import type { CallToolResult, Implementation, LoggingMessageNotificationParams, ServerCapabilities, Tool } from "../mcp/types.ts";
import { PolicyError } from "../security/policy.ts";
import type { Transport } from "../transport/transport.ts";
import { raceDeadline, TIMED_OUT } from "../util/deadline.ts";
import { Emitter } from "../util/emitter.ts";
import { safeJson } from "../util/json.ts";
import { backoffDelay, checkBackoff, type BackoffOptions } from "./backoff.ts";
import { clientFeatureOptions, forwardElicitationComplete, type ClientFeatures } from "./client-features.ts";
import type { ConnectionEvents, ServerState, StateChange, WarningKind } from "./events.ts";
import { ChildTracker, HealthMonitor, type HealthOptions } from "./health.ts";
import { ToolList } from "./tool-list.ts";
import { createTransport, prepareServer, transportPid, type PrepareOptions, type TransportFactory } from "./transport-factory.ts";

export type { HealthOptions } from "./health.ts";

export interface ConnectionOptions extends PrepareOptions {
  /** Sent in `initialize`. Default mcp-bridge's own. */
  clientInfo?: Implementation;
  /** Restart delays. Defaults 1 s doubling to 30 s, with jitter. */
  backoff?: BackoffOptions;
  health?: HealthOptions;
  /** Lifetime of the cached tool list, ms. Default 5 minutes. */
  toolCacheTtlMs?: number;
  /** Wait after `tools/list_changed` before re-reading the list, ms. Default 100. */
  listChangedDebounceMs?: number;
  /** Ready this long, ms, and the restart budget and backoff start over. Default 60 000. */
  stableAfterMs?: number;
  /** stdio: each of the two shutdown waits, ms. Default 2000. */
  shutdownGraceMs?: number;
  /** Default {@link createTransport}. */
  transportFactory?: TransportFactory;
  /** Roots, sampling and elicitation offered to the server; each declared only when set. */
  clientFeatures?: ClientFeatures;
}

/** One connection attempt; `dead` once it was abandoned (timeout, close). */
interface Attempt {
  dead: boolean;
  client: McpClient | undefined;
  transport: Transport | undefined;
}

// LIMIT_EXCEEDED: a reply over our limits (a tools/list too long) would be as long after a restart.
const NOT_RETRYABLE = new Set(["UNSUPPORTED_VERSION", "INVALID_RESULT", "AUTH_FAILED", "LIMIT_EXCEEDED"]);

/**
 * ```ts
 * const conn = new ServerConnection(withDefaults(config), { redactor });
 * conn.on("state", (s) => console.log(s.server, s.to));
 * await conn.start(); // the first attempt has settled
 * if (conn.state === "ready") await conn.callTool("echo", { text: "hi" });
 * await conn.close();
 * ```
 */
export class ServerConnection extends Emitter<ConnectionEvents> {
  readonly name: string;
  readonly config: ResolvedServerConfig;
  private readonly options: ConnectionOptions;
  private readonly toolList: ToolList;
  private current: McpClient | undefined;
  private attemptNow: Attempt | undefined;
  private readonly children = new ChildTracker();
  private readonly health: HealthMonitor;
  /** The transport of the ready connection. */
  private currentTransport: Transport | undefined;
  /** The most recently created transport: its pid is the one reported. */
  private newestTransport: Transport | undefined;
  private stateNow: ServerState = "connecting";
  private changedAt = Date.now();
  private announced = false;
  private started = false;
  private closing: Promise<void> | undefined;
  private consecutive = 0;
  private restartTotal = 0;
  private readyAt: number | undefined;
  private lastErrorText: string | undefined;
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private settleWaiters: (() => void)[] = [];

  constructor(config: ResolvedServerConfig, options: ConnectionOptions) {
    super();
    this.name = config.name;
    this.config = config;
    this.options = options;
    checkBackoff(options.backoff ?? {});
    this.toolList = new ToolList({
      server: this.name,
      redactor: options.redactor,
      ttlMs: options.toolCacheTtlMs,
      debounceMs: options.listChangedDebounceMs,
      onChange: () => this.emit("toolsChanged", { server: this.name }),
      warn: (kind, message) => this.warn(kind, message),
    });
    this.health = new HealthMonitor(
      options.health ?? {},
      (count, limit, reason) => this.warn("health", `server ${JSON.stringify(this.name)}: health check ${count} of ${limit} failed: ${reason}`),
      (limit) => {
        this.dropCurrent();
        this.fail(new BridgeError("TIMEOUT", `server ${JSON.stringify(this.name)} failed ${limit} health checks in a row`), true);
      },
    );
  }

  get state(): ServerState {
    return this.stateNow;
  }
  /** When the state last changed, ms since the epoch. */
  get since(): number {
    return this.changedAt;
  }
  /** Restarts scheduled so far (in total, not only in a row). */
  get restarts(): number {
    return this.restartTotal;
  }
  /** Restarts in a row, which `maxRestarts` limits. */
  get restartsInARow(): number {
    return this.consecutive;
  }
  /** Why it last failed or crashed (redacted). Kept after a recovery. */
  get lastError(): string | undefined {
    return this.lastErrorText;
  }
  /** The process id of the current (or last) stdio child. */
  get pid(): number | undefined {
    return this.newestTransport === undefined ? undefined : transportPid(this.newestTransport);
  }
  get protocolVersion(): string | undefined {
    return this.current?.protocolVersion;
  }
  get serverInfo(): Implementation | undefined {
    return this.current?.serverInfo;
  }
  get capabilities(): ServerCapabilities | undefined {
    return this.current?.serverCapabilities;
  }
  /** The server's `instructions` from the handshake, redacted, while connected. */
  get instructions(): string | undefined {
    const text = this.current?.instructions;
    return text === undefined ? undefined : this.redact(text);
  }
  /** The last tool list the server gave (also while restarting), redacted; undefined before the first. */
  get tools(): readonly Tool[] | undefined {
    return this.toolList.current;
  }

  /**
   * Makes the first attempt. Resolves once it settled: `ready`, `failed`, or `restarting`
   * (a retry is scheduled). Never rejects; read `state` and `lastError`.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const problem of findPlaintextCredentials(this.config)) this.warn("plaintext_credential", problem.message);
    await this.attempt();
  }

  /** Resolves when the state is `ready`, `failed` or `closed` (not while restarting). */
  whenSettled(): Promise<void> {
    if (this.isSettled()) return Promise.resolve();
    return new Promise((resolve) => this.settleWaiters.push(resolve));
  }

  /**
   * Re-reads the tool list if the cached one expired (or was invalidated). A failure keeps the
   * previous list and is reported as a `tools_refresh` warning. No-op unless `ready`.
   */
  async refreshTools(): Promise<void> {
    const client = this.current;
    if (client === undefined || !hasTools(client)) return;
    await this.toolList.refresh(() => client.listTools(), () => client === this.current);
  }

  /** Calls a tool (the server's own name). Throws like `McpClient.callTool`; `NOT_CONNECTED` unless ready. */
  callTool(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    return this.use((client) => client.callTool(tool, args, { ...options, timeoutMs: options.timeoutMs ?? this.config.toolTimeout }));
  }

  /** Runs `fn` with the live client; rejects with `BridgeError NOT_CONNECTED` unless ready. */
  use<T>(fn: (client: McpClient) => Promise<T>): Promise<T> {
    const client = this.current;
    if (client === undefined) {
      return Promise.reject(new BridgeError("NOT_CONNECTED", `server ${JSON.stringify(this.name)} is ${this.stateNow}, not ready`));
    }
    return fn(client);
  }

  /** SIGKILLs every child process this connection still has (for the process guard). */
  killChildrenSync(): void {
    this.children.killAllSync();
  }

  /**
   * Stops everything: no more restarts, the current process (and any attempt in flight) is
   * shut down, and every spawned pid is checked to be gone. Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.stopTimers();
    clearTimeout(this.restartTimer);
    this.abandonAttempt();
    const client = this.current;
    this.current = undefined;
    if (client !== undefined) this.children.retire(client, this.currentTransport);
    this.setState("closed", {});
    await this.children.drain();
  }

  private async attempt(): Promise<void> {
    if (this.closing !== undefined) return;
    const ctx: Attempt = { dead: false, client: undefined, transport: undefined };
    this.attemptNow = ctx;
    this.setState("connecting", { attempt: this.consecutive });
    const timeoutMs = this.config.timeout;
    try {
      const tools = await raceDeadline(this.handshake(ctx), timeoutMs);
      if (tools === TIMED_OUT) {
        // A reply discarded as too long (its id unreadable) is the likely reason: say so.
        const discarded = ctx.client?.connection?.lastDiscardedLine;
        const meanwhile = discarded === undefined ? "" : `; meanwhile ${discarded}`;
        throw new BridgeError("TIMEOUT", `server ${JSON.stringify(this.name)} did not become ready within ${timeoutMs} ms (start, handshake and tools/list)${meanwhile}`, {
          details: { timeoutMs },
        });
      }
      if (ctx.dead || this.closing !== undefined) return;
      // Its close event, if it came meanwhile, was not ours to handle yet.
      if (ctx.client?.connection?.closed !== false) throw new BridgeError("CLOSED", `server ${JSON.stringify(this.name)} closed the connection right after the handshake`);
      this.becomeReady(ctx, tools);
    } catch (err) {
      const abandoned = ctx.dead;
      if (this.attemptNow === ctx) this.abandonAttempt();
      if (abandoned || this.closing !== undefined) return;
      this.fail(err, isRetryable(err));
    }
  }

  private async handshake(ctx: Attempt): Promise<Tool[]> {
    const prepared = await prepareServer(this.config, this.options);
    if (ctx.dead) throw abandonedError();
    const factory = this.options.transportFactory ?? createTransport;
    const transport = factory(prepared, {
      onStderr: (line) => this.log("stderr", "info", line),
      onLog: (message) => this.log("transport", "debug", message),
      shutdownGraceMs: this.options.shutdownGraceMs,
    });
    const client = new McpClient({
      ...clientFeatureOptions(this.name, this.options.clientFeatures, this.options.redactor),
      clientInfo: this.options.clientInfo,
      connectTimeoutMs: this.config.timeout,
      // Every other request (tools/list, resources, prompts, ping) gets the server's own limit.
      requestTimeoutMs: this.config.timeout,
      toolTimeoutMs: this.config.toolTimeout,
    });
    forwardElicitationComplete(client, this.name, this.options.clientFeatures);
    ctx.client = client;
    ctx.transport = transport;
    this.children.add(transport);
    this.newestTransport = transport;
    client.on("close", (reason) => this.onClientClose(client, reason));
    client.on("log", (params) => this.onServerLog(params));
    client.on("toolsListChanged", () => this.onListChanged(client));
    await client.connect(transport);
    if (ctx.dead) throw abandonedError();
    return hasTools(client) ? await client.listTools() : [];
  }

  private becomeReady(ctx: Attempt, tools: Tool[]): void {
    this.attemptNow = undefined;
    this.current = ctx.client;
    this.currentTransport = ctx.transport;
    this.readyAt = Date.now();
    this.toolList.set(tools);
    this.setState("ready", {});
    if (ctx.client !== undefined) this.health.start(ctx.client);
  }

  /** Abandons the attempt in flight: its process is shut down, its late results ignored. */
  private abandonAttempt(): void {
    const ctx = this.attemptNow;
    this.attemptNow = undefined;
    if (ctx === undefined) return;
    ctx.dead = true;
    if (ctx.client !== undefined) this.children.retire(ctx.client, ctx.transport);
  }

  private onClientClose(client: McpClient, reason: Error | undefined): void {
    if (client !== this.current || this.closing !== undefined) return;
    const error = reason ?? new BridgeError("CLOSED", `server ${JSON.stringify(this.name)}: the connection closed unexpectedly`);
    this.dropCurrent();
    this.fail(error, true);
  }

  /** The ready connection is lost: stop its timers, forget its cache, shut its process down. */
  private dropCurrent(): void {
    const client = this.current;
    this.current = undefined;
    this.stopTimers();
    this.toolList.invalidate();
    if (client !== undefined) this.children.retire(client, this.currentTransport);
  }

  private fail(err: unknown, retryable: boolean): void {
    this.lastErrorText = this.redact(errorMessage(err));
    if (this.readyAt !== undefined && Date.now() - this.readyAt >= (this.options.stableAfterMs ?? 60_000)) this.consecutive = 0;
    this.readyAt = undefined;
    if (!retryable || !this.config.restartOnCrash || this.consecutive >= this.config.maxRestarts) {
      this.setState("failed", { error: this.lastErrorText });
      return;
    }
    this.consecutive++;
    this.restartTotal++;
    const delayMs = backoffDelay(this.consecutive, this.options.backoff);
    this.setState("restarting", { attempt: this.consecutive, delayMs, error: this.lastErrorText });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.attempt();
    }, delayMs);
  }

  private onListChanged(client: McpClient): void {
    // Before ready, the list is read after the handshake anyway.
    if (client !== this.current) return;
    this.toolList.changed(() => void this.refreshTools());
  }

  private onServerLog(params: LoggingMessageNotificationParams): void {
    const data = typeof params.data === "string" ? params.data : safeJson(params.data);
    this.log("server", String(params.level), data, typeof params.logger === "string" ? params.logger : undefined);
  }

  private log(source: "stderr" | "server" | "transport", level: string, message: string, logger?: string): void {
    const entry = { server: this.name, source, level, message: this.redact(message), at: Date.now() };
    this.emit("log", logger === undefined ? entry : { ...entry, logger: this.redact(logger) });
  }

  private warn(kind: WarningKind, message: string): void {
    this.emit("warning", { kind, server: this.name, message: this.redact(message), at: Date.now() });
  }

  private setState(to: ServerState, extra: Pick<StateChange, "attempt" | "delayMs" | "error">): void {
    const from = this.stateNow;
    if (from === "closed") return;
    this.stateNow = to;
    this.changedAt = Date.now();
    const change: StateChange = { server: this.name, from: this.announced ? from : undefined, to, at: this.changedAt, ...extra };
    this.announced = true;
    this.emit("state", change);
    if (this.isSettled()) {
      const waiters = this.settleWaiters;
      this.settleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private isSettled(): boolean {
    return this.stateNow === "ready" || this.stateNow === "failed" || this.stateNow === "closed";
  }

  private stopTimers(): void {
    this.health.stop();
    this.toolList.stop();
  }

  private redact(text: string): string {
    return this.options.redactor.redact(text);
  }
}

function hasTools(client: McpClient): boolean {
  return client.serverCapabilities?.tools !== undefined;
}

/** Restarting cannot fix a configuration problem or a server that speaks another protocol. */
function isRetryable(err: unknown): boolean {
  if (err instanceof BridgeError) return !NOT_RETRYABLE.has(err.code);
  return !(err instanceof SecretError || err instanceof PolicyError || err instanceof RpcError);
}

function abandonedError(): BridgeError {
  return new BridgeError("CLOSED", "connection attempt abandoned");
}
