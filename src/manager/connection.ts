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
import { findPlaintextCredentials } from "../config/parse-common.ts";
import { SecretError } from "../config/secrets.ts";
import { BridgeError, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import type { McpClient, CallOptions } from "../mcp/client.ts";
import type { CallToolResult, Implementation, LoggingMessageNotificationParams, ServerCapabilities, Tool } from "../mcp/types.ts";
import { PolicyError } from "../security/policy.ts";
import type { Transport } from "../transport/transport.ts";
import { Emitter } from "../util/emitter.ts";
import { safeJson } from "../util/json.ts";
import type { BackoffOptions } from "./backoff.ts";
import type { ClientFeatures } from "./client-features.ts";
import { ConnectAttempt, hasTools, type AttemptDeps } from "./connect-attempt.ts";
import type { ConnectionEvents, ServerState, StateChange, WarningKind } from "./events.ts";
import { ChildTracker, HealthMonitor, type HealthOptions } from "./health.ts";
import { RestartBudget } from "./restart-budget.ts";
import { ToolList } from "./tool-list.ts";
import { redactingAuth, transportPid, type PrepareOptions, type TransportFactory } from "./transport-factory.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import { copyFields } from "../util/object.ts";

export type { HealthOptions } from "./health.ts";

/** Options of {@link ServerConnection}. */
export interface ServerConnectionOptions extends PrepareOptions {
  /** Sent in `initialize` (stateless era: in every request's `_meta`). Default mcp-bridge's own. */
  clientInfo?: Implementation;
  /**
   * The protocol era to speak (see `McpClientOptions.era`). Default `"auto"`: the server's
   * newest. `"legacy"` pins the handshake era (2025), e.g. for a test about its wire.
   */
  era?: "auto" | "legacy" | "modern";
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
  /**
   * The auth provider of an HTTP server (an `OAuthProvider` per server, or the host's own),
   * asked once per server and kept across its reconnections; undefined for none. Every token
   * it hands out is added to the redactor.
   *
   * ```ts
   * auth: (server) => new OAuthProvider({ serverUrl: server.url!, redirectUri, authorize: askUser })
   * ```
   */
  auth?: (server: ResolvedServerConfig) => HttpAuthProvider | undefined;
  /** Roots, sampling and elicitation offered to the server; each declared only when set. */
  clientFeatures?: ClientFeatures;
  /**
   * The clock, ms since the epoch: the tool cache's lifetime, the restart budget's stable time
   * and the times events carry. Default `Date.now`; a seam for tests (docs/decisions.md 104).
   */
  now?: () => number;
}

/** @deprecated Renamed {@link ServerConnectionOptions}; this alias goes in the next release. */
export type ConnectionOptions = ServerConnectionOptions;

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
  readonly #options: ServerConnectionOptions;
  readonly #toolList: ToolList;
  readonly #children = new ChildTracker();
  readonly #health: HealthMonitor;
  readonly #restarts: RestartBudget;
  readonly #attemptDeps: AttemptDeps;
  /** The client of the ready connection, and its transport. */
  #client: McpClient | undefined;
  #transport: Transport | undefined;
  #attempt: ConnectAttempt | undefined;
  /** The most recently created transport: its pid is the one reported. */
  #newestTransport: Transport | undefined;
  #state: ServerState = "connecting";
  readonly #now: () => number;
  #since: number;
  #announced = false;
  #started = false;
  #closing: Promise<void> | undefined;
  #lastError: string | undefined;
  #settleWaiters: (() => void)[] = [];

  constructor(config: ResolvedServerConfig, options: ServerConnectionOptions) {
    super();
    this.name = config.name;
    this.config = config;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#since = this.#now();
    this.#restarts = new RestartBudget({
      maxRestarts: config.restartOnCrash ? config.maxRestarts : 0,
      stableAfterMs: options.stableAfterMs ?? 60_000,
      backoff: options.backoff,
      now: this.#now,
    });
    this.#toolList = new ToolList({
      server: this.name,
      redactor: options.redactor,
      ttlMs: options.toolCacheTtlMs,
      debounceMs: options.listChangedDebounceMs,
      now: this.#now,
      onChange: () => this.emit("toolsChanged", { server: this.name }),
      warn: (kind, message) => this.#warn(kind, message),
    });
    this.#health = new HealthMonitor(
      options.health ?? {},
      (count, limit, reason) => this.#warn("health", `server ${JSON.stringify(this.name)}: health check ${count} of ${limit} failed: ${reason}`),
      (limit) => {
        this.#dropCurrent();
        this.#fail(new BridgeError("TIMEOUT", `server ${JSON.stringify(this.name)} failed ${limit} health checks in a row`), true);
      },
    );
    const auth = config.transport === "stdio" ? undefined : options.auth?.(config);
    this.#attemptDeps = {
      config,
      options,
      auth: auth === undefined ? undefined : redactingAuth(auth, options.redactor),
      onTransport: (transport) => {
        this.#children.add(transport);
        this.#newestTransport = transport;
      },
      onClient: (client) => {
        client.on("close", (reason) => this.#onClientClose(client, reason));
        client.on("log", (params) => this.#onServerLog(params));
        client.on("toolsListChanged", () => this.#onListChanged(client));
        client.on("promptsListChanged", () => void (client === this.#client && this.emit("listChanged", { server: this.name, list: "prompts" })));
        client.on("resourcesListChanged", () => void (client === this.#client && this.emit("listChanged", { server: this.name, list: "resources" })));
      },
      log: (source, level, message) => this.#log(source, level, message),
    };
  }

  get state(): ServerState {
    return this.#state;
  }
  /** When the state last changed, ms since the epoch. */
  get since(): number {
    return this.#since;
  }
  /** Restarts scheduled so far (in total, not only in a row). */
  get restarts(): number {
    return this.#restarts.total;
  }
  /** Restarts in a row, which `maxRestarts` limits. */
  get restartsInARow(): number {
    return this.#restarts.inARow;
  }
  /** Why it last failed or crashed (redacted). Kept after a recovery. */
  get lastError(): string | undefined {
    return this.#lastError;
  }
  /** The process id of the current (or last) stdio child. */
  get pid(): number | undefined {
    return this.#newestTransport === undefined ? undefined : transportPid(this.#newestTransport);
  }
  get protocolVersion(): string | undefined {
    return this.#client?.protocolVersion;
  }
  get serverInfo(): Implementation | undefined {
    return this.#client?.serverInfo;
  }
  get capabilities(): ServerCapabilities | undefined {
    return this.#client?.serverCapabilities;
  }
  /** The server's `instructions` from the handshake, redacted, while connected. */
  get instructions(): string | undefined {
    const text = this.#client?.instructions;
    return text === undefined ? undefined : this.#redact(text);
  }
  /** The last tool list the server gave (also while restarting), redacted; undefined before the first. */
  get tools(): readonly Tool[] | undefined {
    return this.#toolList.current;
  }

  /**
   * Makes the first attempt. Resolves once it settled: `ready`, `failed`, or `restarting`
   * (a retry is scheduled). Never rejects; read `state` and `lastError`.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    for (const problem of findPlaintextCredentials(this.config)) this.#warn("plaintext_credential", problem.message);
    await this.#connect();
  }

  /** Resolves when the state is `ready`, `failed` or `closed` (not while restarting). */
  whenSettled(): Promise<void> {
    if (this.#isSettled()) return Promise.resolve();
    return new Promise((resolve) => this.#settleWaiters.push(resolve));
  }

  /**
   * Re-reads the tool list if the cached one expired (or was invalidated). A failure keeps the
   * previous list and is reported as a `tools_refresh` warning. No-op unless `ready`.
   */
  async refreshTools(): Promise<void> {
    const client = this.#client;
    if (client === undefined || !hasTools(client)) return;
    await this.#toolList.refresh(() => client.listTools(), () => client === this.#client, () => client.toolsCacheHints?.ttlMs);
  }

  /** Calls a tool (the server's own name). Throws like `McpClient.callTool`; `NOT_CONNECTED` unless ready. */
  callTool(tool: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<CallToolResult> {
    // copyFields, not spread: `timeoutMs` may be new to the copy (docs/decisions.md 160).
    const withTimeout: CallOptions = copyFields({}, options);
    withTimeout.timeoutMs = options.timeoutMs ?? this.config.toolTimeout;
    return this.use((client) => client.callTool(tool, args, withTimeout));
  }

  /** Runs `fn` with the live client; rejects with `BridgeError NOT_CONNECTED` unless ready. */
  use<T>(fn: (client: McpClient) => Promise<T>): Promise<T> {
    const client = this.#client;
    if (client === undefined) {
      return Promise.reject(new BridgeError("NOT_CONNECTED", `server ${JSON.stringify(this.name)} is ${this.#state}, not ready`));
    }
    return fn(client);
  }

  /** SIGKILLs every child process this connection still has (for the process guard). */
  killChildrenSync(): void {
    this.#children.killAllSync();
  }

  /**
   * Stops everything: no more restarts, the current process (and any attempt in flight) is
   * shut down, and every spawned pid is checked to be gone. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    this.#stopTimers();
    this.#restarts.cancel();
    this.#abandonAttempt();
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) this.#children.retire(client, this.#transport);
    this.#setState("closed", {});
    await this.#children.drain();
  }

  async #connect(): Promise<void> {
    if (this.#closing !== undefined) return;
    const attempt = new ConnectAttempt(this.#attemptDeps);
    this.#attempt = attempt;
    this.#setState("connecting", { attempt: this.#restarts.inARow });
    try {
      const tools = await attempt.run();
      if (attempt.dead || this.#closing !== undefined) return;
      // Its close event, if it came meanwhile, was not ours to handle yet.
      if (attempt.client?.connection?.closed !== false) throw new BridgeError("CLOSED", `server ${JSON.stringify(this.name)} closed the connection right after the handshake`);
      this.#becomeReady(attempt, tools);
    } catch (err) {
      const abandoned = attempt.dead;
      if (this.#attempt === attempt) this.#abandonAttempt();
      if (abandoned || this.#closing !== undefined) return;
      this.#fail(err, isRetryable(err));
    }
  }

  #becomeReady(attempt: ConnectAttempt, tools: Tool[]): void {
    this.#attempt = undefined;
    this.#client = attempt.client;
    this.#transport = attempt.transport;
    this.#restarts.ready();
    this.#toolList.set(tools, attempt.client?.toolsCacheHints?.ttlMs);
    this.#setState("ready", {});
    if (attempt.client !== undefined) this.#health.start(attempt.client);
  }

  /** Abandons the attempt in flight: its process is shut down, its late results ignored. */
  #abandonAttempt(): void {
    const attempt = this.#attempt;
    this.#attempt = undefined;
    if (attempt === undefined) return;
    attempt.dead = true;
    if (attempt.client !== undefined) this.#children.retire(attempt.client, attempt.transport);
  }

  #onClientClose(client: McpClient, reason: Error | undefined): void {
    if (client !== this.#client || this.#closing !== undefined) return;
    const error = reason ?? new BridgeError("CLOSED", `server ${JSON.stringify(this.name)}: the connection closed unexpectedly`);
    this.#dropCurrent();
    this.#fail(error, true);
  }

  /** The ready connection is lost: stop its timers, forget its cache, shut its process down. */
  #dropCurrent(): void {
    const client = this.#client;
    this.#client = undefined;
    this.#stopTimers();
    this.#toolList.invalidate();
    if (client !== undefined) this.#children.retire(client, this.#transport);
  }

  #fail(err: unknown, retryable: boolean): void {
    this.#lastError = this.#redact(errorMessage(err));
    const delayMs = this.#restarts.afterFailure(retryable, () => void this.#connect());
    if (delayMs === undefined) this.#setState("failed", { error: this.#lastError });
    else this.#setState("restarting", { attempt: this.#restarts.inARow, delayMs, error: this.#lastError });
  }

  #onListChanged(client: McpClient): void {
    // Before ready, the list is read after the handshake anyway.
    if (client !== this.#client) return;
    this.#toolList.changed(() => void this.refreshTools());
  }

  #onServerLog(params: LoggingMessageNotificationParams): void {
    const data = typeof params.data === "string" ? params.data : safeJson(params.data);
    this.#log("server", String(params.level), data, typeof params.logger === "string" ? params.logger : undefined);
  }

  #log(source: "stderr" | "server" | "transport", level: string, message: string, logger?: string): void {
    const entry = { server: this.name, source, level, message: this.#redact(message), at: this.#now() };
    this.emit("log", logger === undefined ? entry : { ...entry, logger: this.#redact(logger) });
  }

  #warn(kind: WarningKind, message: string): void {
    this.emit("warning", { kind, server: this.name, message: this.#redact(message), at: this.#now() });
  }

  #setState(to: ServerState, extra: Pick<StateChange, "attempt" | "delayMs" | "error">): void {
    const from = this.#state;
    if (from === "closed") return;
    this.#state = to;
    this.#since = this.#now();
    const change: StateChange = { server: this.name, from: this.#announced ? from : undefined, to, at: this.#since, ...extra };
    this.#announced = true;
    this.emit("state", change);
    if (this.#isSettled()) {
      const waiters = this.#settleWaiters;
      this.#settleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  #isSettled(): boolean {
    return this.#state === "ready" || this.#state === "failed" || this.#state === "closed";
  }

  #stopTimers(): void {
    this.#health.stop();
    this.#toolList.stop();
  }

  #redact(text: string): string {
    return this.#options.redactor.redact(text);
  }
}

/** Restarting cannot fix a configuration problem or a server that speaks another protocol. */
function isRetryable(err: unknown): boolean {
  if (err instanceof SecretError || err instanceof PolicyError || err instanceof RpcError) return false;
  if (err instanceof BridgeError) return !NOT_RETRYABLE.has(err.code);
  return true;
}
