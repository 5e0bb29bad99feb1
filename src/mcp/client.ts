/**
 * McpClient: the client side of MCP over any {@link Transport}, in both eras: the handshake
 * era (2024-11-05 .. 2025-11-25, `initialize` and a session) and the stateless era
 * (2026-07-28, per-request `_meta`). `connect` finds out which one the server speaks (option
 * `era`; docs/decisions.md 129); every method works the same in both, with results of
 * one shape (docs/decisions.md 130).
 *
 * ```ts
 * const client = new McpClient({ clientInfo: { name: "my-agent", version: "1.0.0" } });
 * await client.connect(new StdioClientTransport({ command: "npx", args: ["-y", "some-server"] }));
 * const tools = await client.listTools();
 * const result = await client.callTool("echo", { text: "hi" });
 * await client.close();
 * ```
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcParams } from "../jsonrpc/message.ts";
import { JsonRpcPeer } from "../jsonrpc/peer.ts";
import type { Transport } from "../jsonrpc/transport.ts";
import { Emitter } from "../util/emitter.ts";
import { checkInitializeResult, declaredCapabilities, resolveClientOptions, type ResolvedClientOptions } from "./client-options.ts";
import { answerInput, checkElicitation, isUrlElicitation, UrlElicitationRequiredError } from "./client-elicitation.ts";
import type { ListenStream } from "./client-listen.ts";
import type { StatelessClient } from "./client-stateless.ts";
import type { CallOptions, ElicitationContext, McpClientEvents, McpClientOptions } from "./client-types.ts";
import type { StructuredContentChecker } from "./output-check.ts";
import { collectPages } from "./paging.ts";
import type {
  CallToolResult,
  ClientRequests,
  CompleteRequestParams,
  CompleteResult,
  CreateMessageRequestParams,
  ElicitResult,
  GetPromptResult,
  Implementation,
  InitializeResult,
  LoggingLevel,
  LoggingMessageNotificationParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from "./types.ts";
import { isCallToolResult, McpMethod, McpNotification } from "./types.ts";
import { allowsBatches } from "./versions.ts";

export type { CallOptions, ClientHandlers, ElicitationContext, McpClientEvents, McpClientOptions } from "./client-types.ts";

export { UrlElicitationRequiredError } from "./client-elicitation.ts";

/** URL elicitation ids remembered for their completion notice; the oldest are forgotten first. */
const MAX_OPEN_ELICITATIONS = 256;
/** URL elicitations taken from one -32042 error; a server listing more gets the first ones shown. */
const MAX_REQUIRED_ELICITATIONS = 8;

/** The list requests that page with a cursor. */
type PagedMethod = typeof McpMethod.ToolsList | typeof McpMethod.ResourcesList | typeof McpMethod.ResourcesTemplatesList | typeof McpMethod.PromptsList;

export class McpClient extends Emitter<McpClientEvents> {
  private readonly options: ResolvedClientOptions;
  private peer: JsonRpcPeer | undefined;
  private init: InitializeResult | undefined;
  /** The output schemas of the last `tools/list`, by tool name. */
  private outputSchemas: ReadonlyMap<string, unknown> = new Map();
  /** Created (and its module loaded) by the first result that has an output schema to meet. */
  private outputCheck: StructuredContentChecker | undefined;
  /** Ids of URL elicitations seen and not yet completed, oldest first. */
  private readonly openElicitations = new Set<string>();
  /** Set when the server speaks the stateless era (its module is loaded only then). */
  private stateless: StatelessClient | undefined;
  private listen: ListenStream | undefined;

  constructor(options: McpClientOptions = {}) {
    super();
    this.options = resolveClientOptions(options);
  }

  /** The result of `initialize`, once connected. */
  get initializeResult(): InitializeResult | undefined {
    return this.init;
  }
  get serverInfo(): Implementation | undefined {
    return this.init?.serverInfo;
  }
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.init?.capabilities;
  }
  get instructions(): string | undefined {
    return this.init?.instructions;
  }
  /** The negotiated protocol version (stateless era: the version every request declares). */
  get protocolVersion(): string | undefined {
    return this.stateless?.version ?? this.init?.protocolVersion;
  }
  /** The era of the connection: `"legacy"` (handshake, 2025) or `"modern"` (stateless, 2026-07-28). */
  get era(): "legacy" | "modern" | undefined {
    return this.init === undefined ? undefined : this.stateless !== undefined ? "modern" : "legacy";
  }
  /**
   * The cache hints (`ttlMs`, `cacheScope`) of the last `tools/list` page (stateless era
   * only; see docs/decisions.md 132 for how the manager uses them).
   */
  get toolsCacheHints(): { ttlMs: number; cacheScope: "public" | "private" } | undefined {
    return this.stateless?.cacheHints(McpMethod.ToolsList);
  }
  /** The underlying peer (for counters and custom methods). */
  get connection(): JsonRpcPeer | undefined {
    return this.peer;
  }

  /**
   * Starts the transport and finds the server's era (option `era`): `server/discover` first,
   * and on a handshake-era answer (or a timeout) `initialize`, the version check and
   * `notifications/initialized`. On the stateless era the discover result stands in for
   * `initialize`'s, and a `subscriptions/listen` stream is opened when the server declares
   * list changes. Rejects with `BridgeError` (`UNSUPPORTED_VERSION`, `INVALID_RESULT`,
   * `TIMEOUT`, `SPAWN_FAILED`, ...) after closing the transport.
   */
  async connect(transport: Transport, options: { signal?: AbortSignal } = {}): Promise<InitializeResult> {
    if (this.peer) throw new BridgeError("INVALID_STATE", "McpClient.connect: already connected; close() first, or make a new McpClient");
    if (!isTransport(transport)) {
      throw new TypeError("McpClient.connect needs a Transport (an object with start, send and close), for example new StdioClientTransport({ command })");
    }
    const peer = new JsonRpcPeer(transport, {
      requestTimeoutMs: this.options.requestTimeoutMs,
      batchesAllowed: () => allowsBatches(this.init?.protocolVersion),
      ...this.options.peerOptions,
    });
    this.peer = peer;
    this.installHandlers(peer);
    peer.onclose = (reason) => this.emit("close", reason);
    peer.onerror = (e) => this.emit("error", e);
    // Every request of the connect draws on one authorization budget (docs/decisions.md 144).
    transport.setConnecting?.(true);
    try {
      await peer.start();
      const probe = this.options.era === "legacy" ? undefined : await this.connectStateless(peer, transport, options.signal);
      if (probe === true) return this.init!;
      const raw = await peer
        .request(McpMethod.Initialize, this.initializeParams(), { timeoutMs: this.options.connectTimeoutMs, signal: options.signal })
        .catch((err: unknown) => {
          // A stateless-only server slower to start than the probe's limit: say what would help.
          const timedOut = probe?.legacy instanceof BridgeError && probe.legacy.code === "TIMEOUT";
          if (!timedOut || !(err instanceof RpcError) || err.code !== ErrorCode.MethodNotFound) throw err;
          throw new BridgeError(
            "UNSUPPORTED_VERSION",
            `initialize: refused (${err.message}) after server/discover found no answer within ${this.options.discoverTimeoutMs} ms; the server may speak only the stateless era and start slower than that: raise discoverTimeoutMs`,
            { cause: err },
          );
        });
      this.init = checkInitializeResult(raw, this.options.supportedVersions);
      transport.setProtocolVersion?.(this.init.protocolVersion);
      await peer.notify(McpNotification.Initialized);
      return this.init;
    } catch (err) {
      await peer.close();
      throw err;
    } finally {
      transport.setConnecting?.(false);
    }
  }

  /**
   * The stateless era, when the server speaks it; else `legacy` with the probe's error, if any
   * (and the transport as before).
   */
  private async connectStateless(peer: JsonRpcPeer, transport: Transport, signal: AbortSignal | undefined): Promise<true | { legacy: Error | undefined }> {
    const capabilities = declaredCapabilities(this.options);
    const probe = await (await import("./client-discover.ts")).discoverEra(peer, transport, this.options, capabilities, signal);
    if ("legacy" in probe) return probe;
    // Only now: a client of a handshake-era server never loads the stateless client.
    const { connectStateless } = await import("./client-stateless.ts");
    const h = this.options.handlers;
    const modes = this.options.elicitationModes;
    const found = connectStateless(peer, transport, this.options, probe, {
      capabilities,
      answer: (method, params, sig) => answerInput(h, modes, method, params, sig),
      onToolRejected: (name, reason) => this.emit("toolRejected", { name, reason }),
      relistTools: () => this.listTools(),
      onError: (err) => this.emit("error", err),
    });
    this.init = found.init;
    this.stateless = found.client;
    this.listen = found.listen;
    // A server that cannot stream changes still serves requests: its refusal is only reported.
    if (found.listen.useful) await found.listen.open().catch((err: Error) => void this.emit("error", err));
    return true;
  }

  /** Every tool, following `nextCursor` under the page limits. Remembers output schemas. */
  async listTools(options: CallOptions = {}): Promise<Tool[]> {
    const listed = await collectPages<Tool>(this.pageRequester(McpMethod.ToolsList, options), "tools", this.options.pageLimits);
    // SEP-2243: a tool with invalid x-mcp-header annotations is left out (stateless era).
    const tools = this.stateless ? this.stateless.keepTools(listed) : listed;
    const schemas = new Map<string, unknown>();
    for (const t of tools) if (t.outputSchema !== undefined) schemas.set(t.name, t.outputSchema);
    this.outputSchemas = schemas;
    this.outputCheck?.remember(schemas);
    return tools;
  }

  /**
   * Calls a tool. A tool failure is a result with `isError: true`, not a throw; protocol
   * errors throw `RpcError`, and a `structuredContent` that does not match the tool's
   * `outputSchema` throws `BridgeError OUTPUT_SCHEMA_MISMATCH` (when validation is on), and one
   * the validator could not decide within its step budget `OUTPUT_SCHEMA_UNDECIDED`.
   */
  callTool(name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> {
    // Not `async`: this is the hot path, and one promise fewer per call is measurable.
    if (!this.peer || !this.init) return Promise.reject(notConnected());
    if (this.stateless) {
      return this.stateless
        .request(McpMethod.ToolsCall, { name, arguments: args }, { signal: options.signal, timeoutMs: options.timeoutMs ?? this.options.toolTimeoutMs, onProgress: options.onProgress })
        .then((result) => this.checkToolResult(name, result), (err: unknown) => this.refused(err, McpMethod.ToolsCall, options.signal));
    }
    return this.peer
      .request(McpMethod.ToolsCall, { name, arguments: args }, {
        signal: options.signal,
        timeoutMs: options.timeoutMs ?? this.options.toolTimeoutMs,
        onProgress: options.onProgress,
      })
      .then((result) => this.checkToolResult(name, result), (err: unknown) => this.refused(err, McpMethod.ToolsCall, options.signal));
  }

  private checkToolResult(name: string, result: unknown): CallToolResult | Promise<CallToolResult> {
    if (!isCallToolResult(result)) {
      throw new BridgeError("INVALID_RESULT", `tools/call "${name}": result has no content array`, { details: { tool: name } });
    }
    if (!this.options.validateStructuredContent || !this.outputSchemas.has(name)) return result;
    // A promise only while the checker and the validator load (the first checked result).
    const loading = this.outputCheck ? this.outputCheck.check(name, result) : this.loadOutputCheck().then((check) => check.check(name, result));
    return loading === undefined ? result : loading.then(() => result);
  }

  /** The checker's module, loaded with the first result to check: `inspect` only lists. */
  private async loadOutputCheck(): Promise<StructuredContentChecker> {
    const { StructuredContentChecker } = await import("./output-check.ts");
    return (this.outputCheck ??= new StructuredContentChecker(this.outputSchemas));
  }

  listResources(options: CallOptions = {}): Promise<Resource[]> {
    return collectPages<Resource>(this.pageRequester(McpMethod.ResourcesList, options), "resources", this.options.pageLimits);
  }

  listResourceTemplates(options: CallOptions = {}): Promise<ResourceTemplate[]> {
    return collectPages<ResourceTemplate>(
      this.pageRequester(McpMethod.ResourcesTemplatesList, options),
      "resourceTemplates",
      this.options.pageLimits,
    );
  }

  readResource(uri: string, options: CallOptions = {}): Promise<ReadResourceResult> {
    return this.send(McpMethod.ResourcesRead, { uri }, options);
  }

  /** Resource updates for `uri` (stateless era: the URI joins the `subscriptions/listen` filter). */
  async subscribe(uri: string, options: CallOptions = {}): Promise<void> {
    if (this.listen) return this.live() && this.listen.subscribe(uri);
    await this.send(McpMethod.ResourcesSubscribe, { uri }, options);
  }

  async unsubscribe(uri: string, options: CallOptions = {}): Promise<void> {
    if (this.listen) return this.live() && this.listen.unsubscribe(uri);
    await this.send(McpMethod.ResourcesUnsubscribe, { uri }, options);
  }

  listPrompts(options: CallOptions = {}): Promise<Prompt[]> {
    return collectPages<Prompt>(this.pageRequester(McpMethod.PromptsList, options), "prompts", this.options.pageLimits);
  }

  getPrompt(name: string, args: Record<string, string> = {}, options: CallOptions = {}): Promise<GetPromptResult> {
    return this.send(McpMethod.PromptsGet, { name, arguments: args }, options);
  }

  complete(params: CompleteRequestParams, options: CallOptions = {}): Promise<CompleteResult> {
    return this.send(McpMethod.CompletionComplete, params, options);
  }

  /** Stateless era: no `logging/setLevel`; later requests declare the level in `_meta`. */
  async setLoggingLevel(level: LoggingLevel, options: CallOptions = {}): Promise<void> {
    if (this.stateless) return this.live() && this.stateless.setLogLevel(level);
    await this.send(McpMethod.LoggingSetLevel, { level }, options);
  }

  /** A round trip to the server. Stateless era (no `ping`): a `server/discover`. */
  async ping(options: CallOptions = {}): Promise<void> {
    if (!this.stateless) return void (await this.send(McpMethod.Ping, undefined, options));
    this.live();
    await this.stateless.request(McpMethod.ServerDiscover, undefined, { signal: options.signal, timeoutMs: options.timeoutMs });
  }

  /** Tells the server the roots changed (needs `rootsListChanged`; the stateless era has no such notice). */
  notifyRootsChanged(): Promise<void> {
    const peer = this.live();
    return this.stateless ? Promise.resolve() : peer.notify(McpNotification.RootsListChanged);
  }

  /** Closes the connection (and, for stdio, stops the server process). Idempotent. */
  async close(): Promise<void> {
    this.listen?.close();
    await this.peer?.close();
  }

  /** A request of {@link ClientRequests}: `method` decides the type of params and result. */
  private send<M extends keyof ClientRequests>(method: M, params: ClientRequests[M]["params"] | undefined, options: CallOptions): Promise<ClientRequests[M]["result"]> {
    const peer = this.live();
    if (this.stateless) {
      const p = params as Record<string, unknown> | undefined;
      return this.stateless
        .request(method, p, { signal: options.signal, timeoutMs: options.timeoutMs, onProgress: options.onProgress })
        .catch((err: unknown) => this.refused(err, method, options.signal)) as Promise<ClientRequests[M]["result"]>;
    }
    return peer
      .request<ClientRequests[M]["result"]>(method, params, { signal: options.signal, timeoutMs: options.timeoutMs, onProgress: options.onProgress })
      .catch((err: unknown) => this.refused(err, method, options.signal));
  }

  /**
   * Rethrows a failure; a -32042 (URL elicitation required) becomes an
   * {@link UrlElicitationRequiredError} after each elicitation it lists went through the
   * elicitation handler (when one is set and URL mode is declared). Nothing is retried here:
   * completion happens out of band and may never be announced, so the caller decides.
   */
  private async refused(err: unknown, method: string, signal: AbortSignal | undefined): Promise<never> {
    if (!(err instanceof RpcError) || err.code !== ErrorCode.UrlElicitationRequired) throw err;
    const listed = (err.data as { elicitations?: unknown } | undefined)?.elicitations;
    // Bounded: each one may become a question to the user.
    const elicitations = (Array.isArray(listed) ? listed : []).filter(isUrlElicitation).slice(0, MAX_REQUIRED_ELICITATIONS);
    for (const e of elicitations) this.rememberElicitation(e.elicitationId);
    const handler = this.options.handlers.elicitation;
    if (handler === undefined || !this.options.elicitationModes.url || elicitations.length === 0) throw new UrlElicitationRequiredError(method, err, elicitations);
    const outcomes: ElicitResult[] = [];
    const ctx: ElicitationContext = { signal: signal ?? new AbortController().signal, requiredBy: method };
    for (const e of elicitations) outcomes.push(await handler(e, ctx));
    throw new UrlElicitationRequiredError(method, err, elicitations, outcomes);
  }

  private rememberElicitation(id: string): void {
    this.openElicitations.delete(id);
    this.openElicitations.add(id);
    if (this.openElicitations.size > MAX_OPEN_ELICITATIONS) this.openElicitations.delete(this.openElicitations.values().next().value!);
  }

  private pageRequester(method: PagedMethod, options: CallOptions) {
    return (cursor: string | undefined): Promise<Record<string, unknown>> => this.send(method, cursor === undefined ? {} : { cursor }, options);
  }


  private live(): JsonRpcPeer {
    if (!this.peer || !this.init) throw notConnected();
    return this.peer;
  }

  private initializeParams(): JsonRpcParams {
    return {
      protocolVersion: this.options.protocolVersion,
      capabilities: declaredCapabilities(this.options),
      clientInfo: this.options.clientInfo,
    };
  }

  private installHandlers(peer: JsonRpcPeer): void {
    const h = this.options.handlers;
    peer.setRequestHandler(McpMethod.Ping, () => ({}));
    if (h.roots) {
      const roots = h.roots;
      peer.setRequestHandler(McpMethod.RootsList, async (_p, ctx) => ({ roots: await roots(ctx) }));
    }
    if (h.sampling) {
      const sampling = h.sampling;
      peer.setRequestHandler(McpMethod.SamplingCreateMessage, (p, ctx) => sampling(p as CreateMessageRequestParams, ctx));
    }
    if (h.elicitation) {
      const elicit = h.elicitation;
      peer.setRequestHandler(McpMethod.ElicitationCreate, (p, ctx) => {
        const params = checkElicitation(p, this.options.elicitationModes);
        if (params.mode === "url") this.rememberElicitation(params.elicitationId);
        return elicit(params, { signal: ctx.signal, request: ctx });
      });
    }
    peer.setNotificationHandler(McpNotification.SubscriptionsAcknowledged, () => this.listen?.acknowledged());
    peer.setNotificationHandler(McpNotification.ElicitationComplete, (p) => {
      const id = (p as { elicitationId?: unknown } | undefined)?.elicitationId;
      if (typeof id !== "string" || !this.openElicitations.delete(id)) return;
      this.emit("elicitationComplete", { elicitationId: id });
    });
    peer.setNotificationHandler(McpNotification.ToolsListChanged, () => {
      this.outputSchemas = new Map();
      this.outputCheck?.forget();
      this.emit("toolsListChanged", undefined);
    });
    peer.setNotificationHandler(McpNotification.ResourcesListChanged, () => void this.emit("resourcesListChanged", undefined));
    peer.setNotificationHandler(McpNotification.PromptsListChanged, () => void this.emit("promptsListChanged", undefined));
    peer.setNotificationHandler(McpNotification.ResourcesUpdated, (p) => {
      const uri = (p as { uri?: unknown } | undefined)?.uri;
      if (typeof uri === "string") this.emit("resourceUpdated", { uri });
    });
    peer.setNotificationHandler(McpNotification.Message, (p) => {
      if (p && typeof p === "object") this.emit("log", p as LoggingMessageNotificationParams);
    });
  }
}

function isTransport(t: unknown): t is Transport {
  const o = t as Partial<Record<"start" | "send" | "close", unknown>> | null | undefined;
  return typeof o === "object" && o !== null && typeof o.start === "function" && typeof o.send === "function" && typeof o.close === "function";
}

function notConnected(): BridgeError {
  return new BridgeError("NOT_CONNECTED", "McpClient: not connected (call connect first)");
}
