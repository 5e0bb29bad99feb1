/**
 * McpClient: the client side of MCP (handshake era, 2024-11-05 .. 2025-11-25) over any
 * {@link Transport}.
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
import { resolveClientOptions, type ResolvedClientOptions } from "./client-options.ts";
import type { CallOptions, ElicitationContext, McpClientEvents, McpClientOptions } from "./client-types.ts";
import type { StructuredContentChecker } from "./output-check.ts";
import { collectPages } from "./paging.ts";
import type {
  CallToolResult,
  ClientCapabilities,
  ClientRequests,
  CompleteRequestParams,
  CompleteResult,
  CreateMessageRequestParams,
  ElicitRequestParams,
  ElicitRequestURLParams,
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
import { isCallToolResult, isInitializeResult, McpMethod, McpNotification } from "./types.ts";
import { allowsBatches } from "./versions.ts";

export type { CallOptions, ClientHandlers, ElicitationContext, McpClientEvents, McpClientOptions } from "./client-types.ts";

/**
 * A request the server refused with -32042 (URL elicitation required) until the user completes
 * the URL elicitations it lists. Retry the request once they are done (the client emits
 * `elicitationComplete` when the server says so).
 */
export class UrlElicitationRequiredError extends RpcError {
  /** The method of our request the server refused, e.g. `tools/call`. */
  readonly method: string;
  /** The URL elicitations the server listed (malformed ones left out, at most 8). */
  readonly elicitations: ElicitRequestURLParams[];
  /** The elicitation handler's answer to each, in order; undefined when no handler ran. */
  readonly outcomes: ElicitResult[] | undefined;

  constructor(method: string, cause: RpcError, elicitations: ElicitRequestURLParams[], outcomes?: ElicitResult[]) {
    const hosts = [...new Set(elicitations.map((e) => hostOf(e.url)))].join(", ");
    const asked =
      outcomes !== undefined ? `the user answered ${outcomes.map((o) => o.action).join(", ")}` : elicitations.length === 0 ? "none was listed" : "none was shown to the user (no elicitation handler with URL mode)";
    super(
      ErrorCode.UrlElicitationRequired,
      `${method}: the server requires ${elicitations.length} URL elicitation(s) first${hosts === "" ? "" : ` (${hosts})`}: ${cause.message}; ${asked}; retry once completed`,
      cause.data,
    );
    this.name = "UrlElicitationRequiredError";
    this.method = method;
    this.elicitations = elicitations;
    this.outcomes = outcomes;
  }
}


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
  /** Created (and its module loaded) by the first listing with an output schema. */
  private outputCheck: StructuredContentChecker | undefined;
  /** Ids of URL elicitations seen and not yet completed, oldest first. */
  private readonly openElicitations = new Set<string>();

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
  /** The negotiated protocol version. */
  get protocolVersion(): string | undefined {
    return this.init?.protocolVersion;
  }
  /** The underlying peer (for counters and custom methods). */
  get connection(): JsonRpcPeer | undefined {
    return this.peer;
  }

  /**
   * Starts the transport, sends `initialize`, checks the version, then sends
   * `notifications/initialized`. Rejects with `BridgeError` (`UNSUPPORTED_VERSION`,
   * `INVALID_RESULT`, `TIMEOUT`, `SPAWN_FAILED`, ...) after closing the transport.
   */
  async connect(transport: Transport, options: { signal?: AbortSignal } = {}): Promise<InitializeResult> {
    if (this.peer) throw new BridgeError("INVALID_STATE", "McpClient.connect: already connected; close() first, or make a new McpClient");
    const peer = new JsonRpcPeer(transport, {
      requestTimeoutMs: this.options.requestTimeoutMs,
      batchesAllowed: () => allowsBatches(this.init?.protocolVersion),
      ...this.options.peerOptions,
    });
    this.peer = peer;
    this.installHandlers(peer);
    peer.onclose = (reason) => this.emit("close", reason);
    peer.onerror = (e) => this.emit("error", e);
    try {
      await peer.start();
      const raw = await peer.request(McpMethod.Initialize, this.initializeParams(), {
        timeoutMs: this.options.connectTimeoutMs,
        signal: options.signal,
      });
      this.init = this.checkInitializeResult(raw);
      transport.setProtocolVersion?.(this.init.protocolVersion);
      await peer.notify(McpNotification.Initialized);
      return this.init;
    } catch (err) {
      await peer.close();
      throw err;
    }
  }

  /** Every tool, following `nextCursor` under the page limits. Remembers output schemas. */
  async listTools(options: CallOptions = {}): Promise<Tool[]> {
    const tools = await collectPages<Tool>(this.pageRequester(McpMethod.ToolsList, options), "tools", this.options.pageLimits);
    if (!this.outputCheck && tools.some((t) => t.outputSchema !== undefined)) {
      const { StructuredContentChecker } = await import("./output-check.ts");
      this.outputCheck ??= new StructuredContentChecker();
    }
    this.outputCheck?.remember(tools);
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
    // A promise only while the validator is loading (the first checked result).
    const loading = this.options.validateStructuredContent ? this.outputCheck?.check(name, result) : undefined;
    return loading === undefined ? result : loading.then(() => result);
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

  async subscribe(uri: string, options: CallOptions = {}): Promise<void> {
    await this.send(McpMethod.ResourcesSubscribe, { uri }, options);
  }

  async unsubscribe(uri: string, options: CallOptions = {}): Promise<void> {
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

  async setLoggingLevel(level: LoggingLevel, options: CallOptions = {}): Promise<void> {
    await this.send(McpMethod.LoggingSetLevel, { level }, options);
  }

  async ping(options: CallOptions = {}): Promise<void> {
    await this.send(McpMethod.Ping, undefined, options);
  }

  /** Tells the server the roots changed (needs `rootsListChanged`). */
  notifyRootsChanged(): Promise<void> {
    return this.live().notify(McpNotification.RootsListChanged);
  }

  /** Closes the connection (and, for stdio, stops the server process). Idempotent. */
  async close(): Promise<void> {
    await this.peer?.close();
  }

  /** A request of {@link ClientRequests}: `method` decides the type of params and result. */
  private send<M extends keyof ClientRequests>(method: M, params: ClientRequests[M]["params"] | undefined, options: CallOptions): Promise<ClientRequests[M]["result"]> {
    return this.live()
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
      capabilities: this.capabilities(),
      clientInfo: this.options.clientInfo,
    };
  }

  private capabilities(): ClientCapabilities {
    const h = this.options.handlers;
    const caps: ClientCapabilities = {};
    if (h.roots) caps.roots = this.options.rootsListChanged ? { listChanged: true } : {};
    if (h.sampling) caps.sampling = {};
    if (h.elicitation) {
      const modes = this.options.elicitationModes;
      caps.elicitation = {};
      if (modes.form) caps.elicitation.form = {};
      if (modes.url) caps.elicitation.url = {};
    }
    return caps;
  }

  private checkInitializeResult(raw: unknown): InitializeResult {
    if (!isInitializeResult(raw)) {
      throw new BridgeError("INVALID_RESULT", "initialize: the server's result lacks protocolVersion, capabilities or serverInfo");
    }
    const accepted = this.options.supportedVersions;
    if (!accepted.includes(raw.protocolVersion)) {
      throw new BridgeError(
        "UNSUPPORTED_VERSION",
        `initialize: server "${raw.serverInfo.name}" answered protocol version ${JSON.stringify(raw.protocolVersion)}, which this client does not speak (supported: ${accepted.join(", ")})`,
        { details: { received: raw.protocolVersion, supported: [...accepted] } },
      );
    }
    return raw;
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
        const params = p as ElicitRequestParams;
        // The spec: a mode the client did not declare is -32602; a missing mode means form.
        const mode = typeof params?.mode === "string" ? params.mode : "form";
        if ((mode !== "form" && mode !== "url") || !this.options.elicitationModes[mode]) {
          throw new RpcError(ErrorCode.InvalidParams, `elicitation/create: this client did not declare ${JSON.stringify(mode)} elicitation`);
        }
        if (mode === "url") {
          if (!isUrlElicitation(params)) throw new RpcError(ErrorCode.InvalidParams, "elicitation/create: URL mode needs message, elicitationId and url strings");
          this.rememberElicitation(params.elicitationId);
        }
        return elicit(params, { signal: ctx.signal, request: ctx });
      });
    }
    peer.setNotificationHandler(McpNotification.ElicitationComplete, (p) => {
      const id = (p as { elicitationId?: unknown } | undefined)?.elicitationId;
      if (typeof id !== "string" || !this.openElicitations.delete(id)) return;
      this.emit("elicitationComplete", { elicitationId: id });
    });
    peer.setNotificationHandler(McpNotification.ToolsListChanged, () => {
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

function isUrlElicitation(v: unknown): v is ElicitRequestURLParams {
  const e = v as Partial<ElicitRequestURLParams> | null;
  return typeof e === "object" && e !== null && e.mode === "url" && typeof e.elicitationId === "string" && typeof e.url === "string" && typeof e.message === "string";
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "an unparsable URL";
  }
}

function notConnected(): BridgeError {
  return new BridgeError("NOT_CONNECTED", "McpClient: not connected (call connect first)");
}
