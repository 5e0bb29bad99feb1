/**
 * Who owns which upstream connection in `mcp-bridge serve`. A `shared` upstream runs once, in
 * one manager every downstream client uses; the `per-client` upstreams run in a manager of
 * each downstream session's own, started when the session opens and closed (every child
 * process gone) when it ends, so a stateful upstream's session belongs to the client that
 * opened it (docs/decisions.md 146). The caps on downstream sessions and on upstream
 * connections are checked here, before anything is started; a refusal is a BridgeError
 * `LIMIT_EXCEEDED` whose message names the cap, which the HTTP servers answer with 503.
 */
import type { McpServerConfig } from "../config/types.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import { McpManager, type McpManagerOptions, type ServerStatus } from "../manager/manager.ts";
import { Redactor } from "../security/redact.ts";
import { CallForwarding } from "./forwarding.ts";
import type { Isolation } from "./serve-config.ts";

export interface UpstreamPoolOptions {
  upstreams: readonly McpServerConfig[];
  isolation: (upstream: string) => Isolation;
  /** Downstream sessions open at once. */
  maxSessions: number;
  /** Upstream connections open at once: the shared ones plus each session's own. */
  maxUpstreamConnections: number;
  /**
   * Options of every manager (shared and per session); `redactor` is the pool's, and
   * `clientFeatures` each manager's own {@link CallForwarding} (see {@link UpstreamPool.forwardingOf}).
   */
  manager?: Omit<McpManagerOptions, "redactor" | "clientFeatures">;
  /** Told about each manager made, to subscribe to its events (`session` is undefined for the shared one). */
  onManager?: (manager: McpManager, session: number | undefined) => void;
}

/** The upstream connections of one downstream session. */
export interface ClientUpstreams {
  /** A number for logs and status, counting from 1. */
  readonly id: number;
  /** This session's per-client upstreams (empty when every upstream is shared). */
  readonly manager: McpManager;
  /** Stops this session's upstreams and gives its share of the caps back. Idempotent. */
  close(): Promise<void>;
}

/** Counters since the pool started. */
export interface PoolCounters {
  sessionsOpened: number;
  sessionsRefused: number;
}

export class UpstreamPool {
  /** One redactor for every manager: a secret resolved for any upstream is hidden everywhere. */
  readonly redactor = new Redactor();
  /** The shared upstreams, started by {@link start}. */
  readonly shared: McpManager;
  readonly maxSessions: number;
  readonly maxUpstreamConnections: number;
  readonly counters: PoolCounters = { sessionsOpened: 0, sessionsRefused: 0 };
  private readonly options: UpstreamPoolOptions;
  private readonly sharedConfigs: McpServerConfig[];
  private readonly perClientConfigs: McpServerConfig[];
  private readonly open = new Set<ClientUpstreams>();
  private nextId = 1;
  /**
   * Each manager's forwarding: one per manager, as it routes by upstream name, and a name is
   * the same in every session's manager while the connections behind it are not.
   */
  private readonly forwarding = new WeakMap<McpManager, CallForwarding>();
  private closed = false;

  constructor(options: UpstreamPoolOptions) {
    this.options = options;
    this.maxSessions = options.maxSessions;
    this.maxUpstreamConnections = options.maxUpstreamConnections;
    this.sharedConfigs = options.upstreams.filter((u) => options.isolation(u.name) === "shared");
    this.perClientConfigs = options.upstreams.filter((u) => options.isolation(u.name) === "per-client");
    this.shared = this.newManager(undefined);
  }

  /** Names of the upstreams each session gets its own connection to. */
  get perClientNames(): string[] {
    return this.perClientConfigs.map((c) => c.name);
  }

  get sharedNames(): string[] {
    return this.sharedConfigs.map((c) => c.name);
  }

  /** Downstream sessions open now. */
  get sessionCount(): number {
    return this.open.size;
  }

  /** Upstream connections open (or reserved by a session starting) now. */
  get upstreamConnections(): number {
    return this.sharedConfigs.length + this.open.size * this.perClientConfigs.length;
  }

  /** Starts the shared upstreams; resolves with their status once each first attempt settled. */
  start(): Promise<ServerStatus[]> {
    if (this.sharedConfigs.length > this.maxUpstreamConnections) {
      throw new BridgeError("LIMIT_EXCEEDED", `${this.sharedConfigs.length} shared upstreams exceed maxUpstreamConnections (${this.maxUpstreamConnections})`);
    }
    return this.shared.connect(this.sharedConfigs);
  }

  /**
   * Opens the per-client upstreams of a new downstream session and resolves once each first
   * attempt settled. Throws BridgeError `LIMIT_EXCEEDED` (nothing started) at either cap, and
   * `CLOSED` once the pool is closing.
   */
  async openSession(): Promise<ClientUpstreams> {
    if (this.closed) throw new BridgeError("CLOSED", "the gateway is shutting down");
    const refuse = (message: string): never => {
      this.counters.sessionsRefused++;
      throw new BridgeError("LIMIT_EXCEEDED", `${message}; try again when a session has ended`);
    };
    if (this.open.size >= this.maxSessions) refuse(`the gateway serves at most ${this.maxSessions} downstream sessions at once (maxSessions)`);
    if (this.upstreamConnections + this.perClientConfigs.length > this.maxUpstreamConnections) {
      refuse(`a new session needs ${this.perClientConfigs.length} upstream connection(s) and ${this.upstreamConnections} of at most ${this.maxUpstreamConnections} are open (maxUpstreamConnections)`);
    }
    const id = this.nextId++;
    const manager = this.newManager(id);
    let closing: Promise<void> | undefined;
    const session: ClientUpstreams = {
      id,
      manager,
      close: () =>
        (closing ??= manager.close().finally(() => {
          this.open.delete(session);
        })),
    };
    // Reserved before the upstreams start, so concurrent sessions cannot overshoot the caps.
    this.open.add(session);
    this.counters.sessionsOpened++;
    try {
      await manager.connect(this.perClientConfigs);
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  /** Closes every session's upstreams and the shared ones; resolves when every child is gone. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.open].map((s) => s.close()));
    await this.shared.close();
  }

  /** What `manager`'s upstreams ask during a call goes to that call's client through this (docs/decisions.md 138). */
  forwardingOf(manager: McpManager): CallForwarding {
    const forwarding = this.forwarding.get(manager);
    if (forwarding === undefined) throw new BridgeError("INVALID_STATE", "UpstreamPool.forwardingOf: not a manager of this pool");
    return forwarding;
  }

  private newManager(session: number | undefined): McpManager {
    const forwarding = new CallForwarding();
    const manager = new McpManager({ ...this.options.manager, clientFeatures: forwarding.clientFeatures, redactor: this.redactor });
    this.forwarding.set(manager, forwarding);
    this.options.onManager?.(manager, session);
    return manager;
  }
}
