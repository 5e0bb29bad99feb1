/**
 * One client connection of an {@link McpServer}: the handshake, the gate before it, the
 * per-session state (log level, subscriptions, what the client declared) and the requests a
 * server sends to its client (sampling, elicitation, roots).
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import { JsonRpcPeer, type NotifyOptions, type PeerOptions, type RequestContext, type RequestOptions } from "../jsonrpc/peer.ts";
import type { Transport } from "../jsonrpc/transport.ts";
import {
  LOGGING_LEVELS,
  McpMethod,
  McpNotification,
  type ClientCapabilities,
  type CreateMessageRequestParams,
  type CreateMessageResult,
  type ElicitRequestParams,
  type ElicitResult,
  type Implementation,
  type InitializeResult,
  type ListRootsResult,
  type LoggingLevel,
  type ServerCapabilities,
  type ServerRequests,
} from "./types.ts";
import { allowsBatches, isModernVersion, negotiateVersion } from "./versions.ts";
import type { InputRequest } from "./input-round.ts";
import { StatelessExchange, type StatelessCore } from "./server-stateless.ts";
import { declaresEra } from "./era-meta.ts";
import type { HeaderBag } from "./param-headers.ts";
import type { ChangedList, HandlerContext, ListKind } from "./server-registry.ts";
import { checked, type InputOptions } from "./server-context.ts";
import { copyFields, isPlainObject } from "../util/object.ts";
import { listResult } from "./server-paging.ts";

/** What a session reads from the server that created it. */
export interface SessionCore extends StatelessCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly pageSize: number;
  readonly supportedVersions: readonly string[];
  readonly defaultLogLevel: LoggingLevel;
  /** The capabilities to declare to a client initializing now. */
  capabilities(): ServerCapabilities;
}

/**
 * A transport whose client already initialized elsewhere (stateless Streamable HTTP gives
 * every POST a fresh session). A session over it starts initialized at this version, with no
 * client capabilities declared; an unsupported version leaves it uninitialized. A version of
 * the stateless era (2026-07-28 on) makes it a stateless session: each request declares
 * itself in `_meta`.
 */
export interface PreinitializedTransport extends Transport {
  readonly initializedProtocolVersion?: string;
  /** Stateless era over HTTP: the request's headers, to check `Mcp-Param-*` against the arguments. */
  readonly requestHeaders?: HeaderBag;
}

/** Methods the stateless era removed: a connection that switches to it stops answering them. */
const REMOVED_METHODS = [McpMethod.Initialize, McpMethod.Ping, McpMethod.LoggingSetLevel, McpMethod.ResourcesSubscribe, McpMethod.ResourcesUnsubscribe];

/** Subscriptions one session may hold, so a client cannot grow server memory without bound. */
const MAX_SUBSCRIPTIONS = 10_000;

const LIST_METHODS: ReadonlyArray<[string, ListKind]> = [
  [McpMethod.ToolsList, "tools"],
  [McpMethod.ResourcesList, "resources"],
  [McpMethod.ResourcesTemplatesList, "resourceTemplates"],
  [McpMethod.PromptsList, "prompts"],
];

export class ServerSession {
  readonly peer: JsonRpcPeer;
  /** Called once when the session ends, whoever ended it. */
  onclose?: (reason?: Error) => void;
  /** Called when the client sends `notifications/initialized`. */
  oninitialized?: () => void;
  /** Called on `notifications/roots/list_changed`; call {@link listRoots} to read them. */
  onRootsChanged?: () => void;
  /** @internal Set by McpServer: takes this session off its roster once the session ends. */
  leave: (() => void) | undefined;

  private version: string | undefined;
  private client: Implementation | undefined;
  private clientCaps: ClientCapabilities | undefined;
  private declared: ServerCapabilities | undefined;
  private initializedSeen = false;
  private logLevel: LoggingLevel;
  /** Made with the first read or subscription: a stateless POST's session never needs it (docs/decisions.md 171). */
  private subscriptionSet: Set<string> | undefined;
  /** Set on a session of the stateless era (docs/decisions.md 106, 111). */
  private era: StatelessExchange | undefined;

  /** The connection (e.g. a Streamable HTTP session transport, for its stream controls). */
  readonly transport: Transport;
  private readonly core: SessionCore;

  constructor(transport: Transport, core: SessionCore, peerOptions: PeerOptions = {}) {
    this.transport = transport;
    this.core = core;
    this.logLevel = core.defaultLogLevel;
    // copyFields, not spread: a stateless POST makes a session each (docs/decisions.md 160).
    const options: PeerOptions = copyFields({}, peerOptions);
    options.batchesAllowed = () => allowsBatches(this.version);
    this.peer = new JsonRpcPeer(transport, options);
    this.peer.onclose = (reason) => {
      this.subscriptionSet?.clear();
      this.leave?.();
      this.onclose?.(reason);
    };
    const preset = (transport as PreinitializedTransport).initializedProtocolVersion;
    if (isModernVersion(preset)) {
      const headers = (transport as PreinitializedTransport).requestHeaders;
      // No handler of its own: the peer hands every request to the era's table.
      this.era = new StatelessExchange(this.peer, core, this, headers);
      this.peer.fallbackRequestHandler = this.era.dispatch;
      this.version = preset;
      this.initializedSeen = true;
      return;
    }
    this.wire();
    if (preset !== undefined && core.supportedVersions.includes(preset)) {
      // Stateless HTTP: the client initialized on an earlier request; no capabilities are known.
      this.version = preset;
      this.clientCaps = {};
      this.declared = core.capabilities();
      this.initializedSeen = true;
    }
  }

  /** The negotiated version; `undefined` until `initialize` was answered. */
  get protocolVersion(): string | undefined {
    return this.version;
  }

  /** `clientInfo` from `initialize` (stateless era: from the request's `_meta`). */
  get clientInfo(): Implementation | undefined {
    return this.era ? this.era.meta()?.clientInfo : this.client;
  }

  /**
   * `capabilities` the client declared in `initialize`. Stateless era: those in the `_meta` of
   * the one request in flight (always so over HTTP; over stdio `undefined` while several are).
   */
  get clientCapabilities(): ClientCapabilities | undefined {
    return this.era ? this.era.meta()?.clientCapabilities : this.clientCaps;
  }

  /**
   * The capabilities this session was told at `initialize`. Stateless era: what the server
   * declared when first asked (a stateless POST's session is seldom asked, so it is not
   * worked out for each).
   */
  get serverCapabilities(): ServerCapabilities | undefined {
    if (this.era) this.declared ??= this.core.capabilities();
    return this.declared;
  }

  /** True once the client sent `notifications/initialized`. */
  get initialized(): boolean {
    return this.initializedSeen;
  }

  /** The threshold set by `logging/setLevel` (or the server's default). */
  get loggingLevel(): LoggingLevel {
    return this.logLevel;
  }

  /** URIs the client subscribed to with `resources/subscribe`. */
  get subscribedUris(): ReadonlySet<string> {
    return this.subscriptions;
  }

  private get subscriptions(): Set<string> {
    return (this.subscriptionSet ??= new Set());
  }

  /** Starts the transport. Called by `McpServer.connect`. */
  start(): Promise<void> {
    return this.peer.start();
  }

  /**
   * Sends `notifications/message` when `level` is at or above the session's threshold and the
   * handshake has happened. Best-effort: a closed connection is not an error here.
   */
  async log(level: LoggingLevel, data: unknown, logger?: string, options: NotifyOptions = {}): Promise<void> {
    if (this.version === undefined || this.peer.closed) return;
    // Stateless era: only a request that set `_meta` logLevel gets log messages.
    const threshold = this.era ? this.era.meta(options.relatedRequestId)?.logLevel : this.logLevel;
    if (threshold === undefined || LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(threshold)) return;
    const params = logger === undefined ? { level, data } : { level, logger, data };
    await this.peer.notify(McpNotification.Message, params, options).catch(() => undefined);
  }

  /**
   * `sampling/createMessage`. Rejects with RpcError -32601 if the client did not declare
   * `sampling`. Stateless era: see {@link requestInputs}; `options.inputKey` names the input.
   */
  async createMessage(params: CreateMessageRequestParams, options?: InputOptions): Promise<CreateMessageResult> {
    if (this.era) return this.askOne(McpMethod.SamplingCreateMessage, params, options) as Promise<CreateMessageResult>;
    this.requireClient("sampling", McpMethod.SamplingCreateMessage);
    const r = await this.request(McpMethod.SamplingCreateMessage, params, options);
    return checked(r, McpMethod.SamplingCreateMessage, (v) => typeof v.model === "string" && typeof v.content === "object");
  }

  /**
   * `elicitation/create`. Rejects with RpcError -32601 unless the client declared the mode
   * asked for (`elicitation: {}` means form only). Stateless era: see {@link requestInputs}.
   */
  async elicit(params: ElicitRequestParams, options?: InputOptions): Promise<ElicitResult> {
    if (this.era) return this.askOne(McpMethod.ElicitationCreate, params, options) as Promise<ElicitResult>;
    const e = this.requireClient("elicitation", McpMethod.ElicitationCreate) as { form?: unknown; url?: unknown };
    const mode = params.mode ?? "form";
    const declared = mode === "url" ? e.url !== undefined : e.form !== undefined || e.url === undefined;
    if (!declared) {
      throw new RpcError(ErrorCode.MethodNotFound, `elicitation/create: the client did not declare ${mode} elicitation`);
    }
    const r = await this.request(McpMethod.ElicitationCreate, params, options);
    return checked(r, McpMethod.ElicitationCreate, (v) => ["accept", "decline", "cancel"].includes(v.action as string));
  }

  /** `roots/list`. Rejects with RpcError -32601 if the client did not declare `roots`. Stateless era: see {@link requestInputs}. */
  async listRoots(options?: InputOptions): Promise<ListRootsResult> {
    if (this.era) return this.askOne(McpMethod.RootsList, {}, options) as Promise<ListRootsResult>;
    this.requireClient("roots", McpMethod.RootsList);
    const r = await this.request(McpMethod.RootsList, {}, options);
    return checked(r, McpMethod.RootsList, (v) => Array.isArray(v.roots));
  }

  /**
   * Asks the client for several inputs at once, by key; resolves with every answer by key.
   * One API for both eras: a 2025 session sends each as its own request (together, on the
   * stream of `options.relatedRequestId`); a stateless one answers them from the retry's
   * `inputResponses` or stops the handler with `InputRequired`, which becomes the
   * `input_required` result (docs/decisions.md 109). Call it from a `tools/call`,
   * `prompts/get` or `resources/read` handler, with the same keys on every run.
   */
  async requestInputs(requests: Record<string, InputRequest>, options?: RequestOptions): Promise<Record<string, unknown>> {
    if (this.era) return this.era.ask(requests, options?.relatedRequestId);
    const asks = Object.entries(requests).map(async ([key, req]): Promise<[string, unknown]> => {
      if (req.method === McpMethod.ElicitationCreate) return [key, await this.elicit(req.params as ElicitRequestParams, options)];
      if (req.method === McpMethod.SamplingCreateMessage) return [key, await this.createMessage(req.params as CreateMessageRequestParams, options)];
      return [key, await this.listRoots(options)];
    });
    return Object.fromEntries(await Promise.all(asks));
  }

  /** Sends `notifications/resources/updated` if this session subscribed to exactly `uri`. */
  async notifyResourceUpdated(uri: string): Promise<void> {
    if (this.era) return this.era.notifyResourceUpdated(uri);
    if (this.subscriptionSet?.has(uri) !== true || this.peer.closed) return;
    await this.peer.notify(McpNotification.ResourcesUpdated, { uri }).catch(() => undefined);
  }

  /**
   * Sends `notifications/<list>/list_changed` if the session was told `listChanged` for that
   * list at `initialize`. Called by the server after registrations change.
   */
  async sendListChanged(list: ChangedList): Promise<void> {
    if (this.era) return this.era.sendListChanged(list);
    const cap = this.declared?.[list] as { listChanged?: boolean } | undefined;
    if (!cap?.listChanged || this.peer.closed) return;
    await this.peer.notify(`notifications/${list}/list_changed`).catch(() => undefined);
  }

  /** Closes the connection; running handlers see their signal abort. */
  close(): Promise<void> {
    return this.peer.close();
  }

  private requireClient(capability: string, method: string): object {
    if (this.version === undefined) throw new BridgeError("NOT_CONNECTED", `${method}: the session is not initialized yet`);
    const cap = this.clientCaps?.[capability];
    if (typeof cap !== "object" || cap === null) {
      throw new RpcError(ErrorCode.MethodNotFound, `${method}: the client did not declare the "${capability}" capability`);
    }
    return cap;
  }

  /** One input of the stateless era, under `options.inputKey` or a key stable across retries. */
  private async askOne(method: InputRequest["method"], params: object, options: InputOptions | undefined): Promise<unknown> {
    const key = options?.inputKey ?? this.era!.nextKey(method, options?.relatedRequestId);
    return (await this.requestInputs({ [key]: { method, params: params as Record<string, unknown> } }, options))[key];
  }

  /** A request of {@link ServerRequests}: `method` decides the type of params and result. */
  private request<M extends keyof ServerRequests>(method: M, params: ServerRequests[M]["params"], options: RequestOptions | undefined): Promise<ServerRequests[M]["result"]> {
    return this.peer.request<ServerRequests[M]["result"]>(method, params, options);
  }

  private wire(): void {
    const peer = this.peer;
    peer.setRequestHandler(McpMethod.Initialize, (params) => this.initialize(params));
    peer.setRequestHandler(McpMethod.Ping, () => ({}));
    for (const method of [McpMethod.ServerDiscover, McpMethod.SubscriptionsListen]) {
      peer.setRequestHandler(method, (params, ctx) => this.statelessFirst(method, params, ctx));
    }
    for (const [method, kind] of LIST_METHODS) {
      this.gate(method, (p, ctx) => listResult(kind, this.core.features.page(kind, p.cursor, this.core.pageSize, this.context(ctx))));
    }
    const reg = this.core.features;
    this.gate(McpMethod.ToolsCall, (p, ctx) => reg.callTool(p, this.context(ctx)));
    this.gate(McpMethod.ResourcesRead, (p, ctx) => reg.readResource(p, this.context(ctx)));
    this.gate(McpMethod.PromptsGet, (p, ctx) => reg.getPrompt(p, this.context(ctx)));
    this.gate(McpMethod.CompletionComplete, (p, ctx) => reg.complete(p, this.context(ctx)));
    this.gate(McpMethod.ResourcesSubscribe, (p) => this.subscribe(p.uri));
    this.gate(McpMethod.ResourcesUnsubscribe, (p) => {
      if (typeof p.uri !== "string") throw new RpcError(ErrorCode.InvalidParams, "resources/unsubscribe: uri must be a string");
      this.subscriptions.delete(p.uri);
      return {};
    });
    this.gate(McpMethod.LoggingSetLevel, (p) => {
      const level = p.level;
      if (!(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
        throw new RpcError(ErrorCode.InvalidParams, `logging/setLevel: level must be one of ${LOGGING_LEVELS.join(", ")}`);
      }
      this.logLevel = level as LoggingLevel;
      return {};
    });
    peer.setNotificationHandler(McpNotification.Initialized, () => {
      if (this.version === undefined || this.initializedSeen) return;
      this.initializedSeen = true;
      this.oninitialized?.();
    });
    peer.setNotificationHandler(McpNotification.RootsListChanged, () => {
      if (this.version !== undefined) this.onRootsChanged?.();
    });
  }

  /**
   * Registers a handler that runs only after `initialize` was answered. Requests arriving
   * between that answer and `notifications/initialized` are served: over HTTP they can race.
   */
  private gate(method: string, handler: (params: Record<string, unknown>, ctx: RequestContext) => unknown): void {
    this.peer.setRequestHandler(method, (params, ctx) => {
      if (this.era) return this.era.dispatch(method, params, ctx);
      if (this.version === undefined && declaresEra(params)) return this.statelessFirst(method, params, ctx);
      if (this.version === undefined) {
        throw new RpcError(ErrorCode.InvalidRequest, `server not initialized: send "initialize" before "${method}"`);
      }
      return handler(paramsObject(params, method), ctx);
    });
  }

  /**
   * A connection (stdio, in-memory) whose first request is of the stateless era (it declares
   * `_meta` protocolVersion) becomes a stateless session: that request and every later one declare themselves in `_meta`, and
   * `initialize`, `ping`, `logging/setLevel` and `resources/(un)subscribe` get -32601. After
   * `initialize` the connection is a 2025 session, where these methods do not exist.
   */
  private statelessFirst(method: string, params: unknown, ctx: RequestContext): unknown {
    // Without the era's `_meta` it is not the era's request: a 2025 server knows no such method.
    if (this.era === undefined && (this.version !== undefined || !declaresEra(params))) {
      throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
    if (this.era === undefined) {
      // The removed methods reach the era's table, which lacks them (-32601); the others
      // are gated (see gate) and reach it too.
      for (const m of REMOVED_METHODS) this.peer.removeRequestHandler(m);
      this.era = new StatelessExchange(this.peer, this.core, this);
      this.peer.fallbackRequestHandler = this.era.dispatch;
      this.version = this.core.statelessVersions[0];
      this.initializedSeen = true;
    }
    return this.era.dispatch(method, params, ctx);
  }

  private initialize(params: unknown): InitializeResult {
    if (this.version !== undefined) {
      throw new RpcError(ErrorCode.InvalidRequest, "initialize: this session is already initialized");
    }
    const p = paramsObject(params, McpMethod.Initialize);
    // A missing or malformed protocolVersion is not refused: negotiation answers our latest,
    // and the client decides whether it can speak that (lifecycle: version negotiation).
    for (const key of ["capabilities", "clientInfo"] as const) {
      if (p[key] !== undefined && !isPlainObject(p[key])) {
        throw new RpcError(ErrorCode.InvalidParams, `initialize: ${key} must be an object`);
      }
    }
    const version = negotiateVersion(p.protocolVersion, this.core.supportedVersions);
    this.version = version;
    this.clientCaps = (p.capabilities ?? {}) as ClientCapabilities;
    this.client = p.clientInfo as Implementation | undefined;
    this.declared = this.core.capabilities();
    this.transport.setProtocolVersion?.(version);
    const result: InitializeResult = { protocolVersion: version, capabilities: this.declared, serverInfo: this.core.info };
    if (this.core.instructions !== undefined) result.instructions = this.core.instructions;
    return result;
  }

  private subscribe(uri: unknown): object {
    if (typeof uri !== "string") throw new RpcError(ErrorCode.InvalidParams, "resources/subscribe: uri must be a string");
    if (!this.core.features.knows(uri)) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    if (!this.subscriptions.has(uri) && this.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new RpcError(ErrorCode.InvalidParams, `resources/subscribe: at most ${MAX_SUBSCRIPTIONS} subscriptions per session`);
    }
    this.subscriptions.add(uri);
    return {};
  }

  private context(ctx: RequestContext): HandlerContext {
    return this.core.contextOf(this, ctx);
  }
}

function paramsObject(params: unknown, method: string): Record<string, unknown> {
  if (params === undefined) return {};
  if (!isPlainObject(params)) throw new RpcError(ErrorCode.InvalidParams, `${method}: params must be an object`);
  return params;
}

