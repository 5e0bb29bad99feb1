/**
 * McpServer: the server side of MCP, independent of the transport. One server holds the
 * registrations (tools, resources, templates, prompts, completion); every connection gets its
 * own {@link ServerSession} over a transport (stdio, HTTP, in-memory).
 *
 * ```ts
 * const server = new McpServer({ name: "demo", version: "1.0.0" });
 * server.tool(
 *   { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
 *   (args) => ({ content: [{ type: "text", text: String(args.text) }] }),
 * );
 * await server.connect(new StdioServerTransport());
 * ```
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { PeerOptions } from "../jsonrpc/peer.ts";
import type { Transport } from "../jsonrpc/transport.ts";
import {
  ServerRegistry,
  type ArgumentCompleters,
  type ChangedList,
  type CompletionHandler,
  type PromptGetter,
  type Registration,
  type ResourceReader,
  type TemplateReader,
  type ToolHandler,
} from "./server-registry.ts";
import { ServerSession, type SessionCore } from "./server-session.ts";
import { ToolCallContext } from "./server-context.ts";
import type { Implementation, LoggingLevel, Prompt, Resource, ResourceTemplate, ServerCapabilities, Tool } from "./types.ts";
import { MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from "./versions.ts";
import type { CacheHints } from "./era-meta.ts";
import { RequestStateSeal } from "./request-state.ts";
import type { ServerProvider, Middleware, ServedFeatures } from "./provider-types.ts";
import { Roster } from "../util/roster.ts";

export { ServerSession } from "./server-session.ts";
export type { InputOptions } from "./server-context.ts";
export type { AuthInfo } from "../jsonrpc/transport.ts";
export { InputRequired, InputResponseError, type InputRequest, type InputRequiredResult } from "./input-round.ts";
export type { CacheHints } from "./era-meta.ts";
export type {
  BeforeOutcome,
  ClientIdentity,
  Listing,
  ServerProvider,
  Middleware,
  PromptProvider,
  ProtocolEra,
  ProviderListener,
  ResourceProvider,
  ServingContext,
  ToolCall,
  ToolProvider,
} from "./provider-types.ts";
export type {
  ArgumentCompleter,
  ArgumentCompleters,
  ChangedList,
  CompletionHandler,
  HandlerContext,
  PromptGetter,
  Registration,
  ResourceReader,
  TemplateReader,
  ToolContext,
  ToolHandler,
} from "./server-registry.ts";

export interface McpServerOptions {
  /** Sent in the `initialize` result as a hint for the model. */
  instructions?: string;
  /** Items per page of every list. Default 100. */
  pageSize?: number;
  /** Versions this server speaks. Default: every version this library speaks. */
  supportedVersions?: readonly string[];
  /** Passed to each session's JsonRpcPeer (timeouts, limits). `batchesAllowed` is ignored. */
  peerOptions?: PeerOptions;
  /**
   * Added to (and overriding) the capabilities derived from the registrations, e.g.
   * `{ tools: { listChanged: true } }` for a server that starts with no tools but adds some
   * later, or `experimental`.
   */
  capabilities?: Partial<ServerCapabilities>;
  /**
   * Log threshold of a session until the client sends `logging/setLevel`. Default `"info"`:
   * debug chatter stays off the wire unless the client asks for it.
   */
  logLevel?: LoggingLevel;
  /**
   * Stateless era (2026-07-28): `ttlMs` and `cacheScope` sent on list, read and discover
   * results. Default `{ ttlMs: 0, cacheScope: "private" }`: registrations may change at any
   * time and a handler may answer per user, so nothing is cached unless you say so
   * (docs/decisions.md 107).
   */
  cache?: Partial<CacheHints>;
  /** Versions of the stateless era this server speaks. Default: every one this library speaks. */
  statelessVersions?: readonly string[];
  /**
   * Served after this server's own registrations (`tool()`, `prompt()`, `resource()`), in
   * order; on a name (or URI) two of them share, the first one listed wins. To serve several
   * under namespaces, give one `CompositeProvider`. Their change events become `list_changed`.
   */
  providers?: readonly ServerProvider[];
  /**
   * The pipeline around listing and calling, in declared order (see {@link Middleware}). It
   * applies to this server's own registrations too.
   */
  middleware?: readonly Middleware[];
  /**
   * Bound on each provider's answer, in ms (a list, a call, a read). A provider that takes
   * longer fails that request with BridgeError `TIMEOUT` (a tool call: an `isError` result)
   * and is left out of that list. Default 60 000.
   */
  providerTimeoutMs?: number;
  /** Told when a provider fails or does not answer a list; it is left out of that list. */
  onProviderError?: (error: Error) => void;
}

export class McpServer {
  readonly info: Implementation;
  private readonly options: McpServerOptions;
  private readonly registry: ServerRegistry;
  private readonly live = new Roster<ServerSession>();
  private readonly core: SessionCore & { features: ServedFeatures; contextOf: SessionCore["contextOf"] };
  /** Set when providers or middleware were given: the module serving them, loaded by the first connect. */
  private serving: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly providerTimeoutMs: number;
  private readonly changedLists = new Set<ChangedList>();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(info: Implementation, options: McpServerOptions = {}) {
    const pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`McpServer: pageSize must be a positive integer, got ${pageSize}`);
    const supportedVersions = options.supportedVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    if (supportedVersions.length === 0) throw new RangeError("McpServer: supportedVersions must not be empty");
    this.info = info;
    this.options = options;
    this.registry = new ServerRegistry((list) => this.listChanged(list));
    const registry = this.registry;
    this.core = {
      info,
      instructions: options.instructions,
      pageSize,
      supportedVersions,
      defaultLogLevel: options.logLevel ?? "info",
      features: registry,
      contextOf: (session, ctx) => new ToolCallContext(session, ctx),
      statelessVersions: options.statelessVersions ?? MODERN_PROTOCOL_VERSIONS,
      seal: new RequestStateSeal(),
      cache: cacheHints(options.cache),
      capabilities: () => this.capabilities(),
    };
    this.providerTimeoutMs = options.providerTimeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    if (!Number.isInteger(this.providerTimeoutMs) || this.providerTimeoutMs < 1) {
      throw new RangeError(`McpServer: providerTimeoutMs must be a positive integer, got ${this.providerTimeoutMs}`);
    }
  }

  /** Sessions currently connected: a snapshot, taken at each read. */
  get sessions(): ReadonlySet<ServerSession> {
    return new Set(this.live.toArray());
  }

  /**
   * Registers a tool. `def` is listed exactly as given (same object, schemas untouched); its
   * `inputSchema` (and `outputSchema`) are compiled now, so arguments are validated before
   * `handler` runs. Throws BridgeError `INVALID_STATE` if the name is taken or an
   * `x-mcp-header` annotation breaks its rules (see `xMcpHeaderProblem`).
   */
  tool(def: Tool, handler: ToolHandler): Registration {
    return this.registry.addTool(def, handler);
  }

  /** Registers a static resource, read by exact URI. Throws if the URI is taken. */
  resource(def: Resource, read: ResourceReader): Registration {
    return this.registry.addResource(def, read);
  }

  /**
   * Registers a resource template (`{name}` and `{+name}` expressions). URIs no static
   * resource claims are matched against templates in registration order. `complete` offers
   * values for the template's variables through `completion/complete`.
   */
  resourceTemplate(def: ResourceTemplate, read: TemplateReader, complete?: ArgumentCompleters): Registration {
    return this.registry.addTemplate(def, read, complete);
  }

  /**
   * Registers a prompt. Required arguments are checked before `get` runs. `complete` offers
   * values for its arguments through `completion/complete`.
   */
  prompt(def: Prompt, get: PromptGetter, complete?: ArgumentCompleters): Registration {
    return this.registry.addPrompt(def, get, complete);
  }

  /**
   * Sets the `completion/complete` handler for references that no per-argument completer
   * covers (`undefined` removes it). Sessions initialized later declare `completions`.
   */
  completion(handler: CompletionHandler | undefined): void {
    this.registry.setCompletionHandler(handler);
  }

  /** Sends `notifications/resources/updated` to every session subscribed to `uri`. */
  async notifyResourceUpdated(uri: string): Promise<void> {
    await Promise.all(this.live.toArray().map((s) => s.notifyResourceUpdated(uri)));
  }

  /**
   * Serves one connection. Resolves once the transport has started; the client then sends
   * `initialize`. Rejects with `BridgeError CLOSED` after {@link close}.
   */
  async connect(transport: Transport): Promise<ServerSession> {
    if (this.closed) throw new BridgeError("CLOSED", "McpServer is closed");
    if (this.options.providers?.length || this.options.middleware?.length) await (this.serving ??= this.loadServing());
    if (this.closed) throw new BridgeError("CLOSED", "McpServer is closed");
    const session = new ServerSession(transport, this.core, this.options.peerOptions);
    // A roster, not a Set: a stateless POST's session joins and leaves it per request (docs/decisions.md 164).
    session.leave = this.live.add(session);
    try {
      await session.start();
    } catch (err) {
      session.leave();
      await session.close();
      throw err;
    }
    return session;
  }

  /** Closes every session and refuses new connections. */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    await Promise.all(this.live.toArray().map((s) => s.close()));
  }

  /**
   * Loads the provider pipeline (a module a server without providers never loads: start-up,
   * docs/decisions.md 124) and serves from it from now on.
   */
  private async loadServing(): Promise<void> {
    const { ProviderFeatures, ProviderCallContext } = await import("./provider-serving.ts");
    const features = new ProviderFeatures(this.registry, {
      providers: this.options.providers ?? [],
      middleware: this.options.middleware ?? [],
      timeoutMs: this.providerTimeoutMs,
      onProviderError: this.options.onProviderError,
    });
    this.core.features = features;
    this.core.contextOf = (session, ctx) => new ProviderCallContext(session, ctx);
    if (this.closed) return;
    this.unsubscribe = features.subscribe({
      listChanged: (list) => this.listChanged(list),
      resourceUpdated: (uri) => void this.notifyResourceUpdated(uri),
    });
  }

  /** What a client initializing now is told. */
  private capabilities(): ServerCapabilities {
    const caps: ServerCapabilities = { logging: {} };
    const features = this.core.features;
    if (features.completes) caps.completions = {};
    if (features.has("prompts")) caps.prompts = { listChanged: true };
    if (features.has("resources")) caps.resources = { subscribe: true, listChanged: true };
    if (features.has("tools")) caps.tools = { listChanged: true };
    return { ...caps, ...this.options.capabilities };
  }

  /**
   * Coalesces changes: however many registrations change in one turn of the event loop,
   * each session gets at most one notification per list, after the current turn (so after
   * an `initialize` answer already on its way).
   */
  private listChanged(list: ChangedList): void {
    if (this.closed || this.live.size === 0) return;
    this.changedLists.add(list);
    if (this.flushTimer !== undefined) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      const lists = [...this.changedLists];
      this.changedLists.clear();
      // Sessions not yet initialized skip it: they were told no capabilities yet.
      for (const s of this.live.toArray()) for (const l of lists) void s.sendListChanged(l);
    }, 0);
  }
}

/** Default of {@link McpServerOptions.providerTimeoutMs}: the request default of docs/decisions.md 3. */
const DEFAULT_PROVIDER_TIMEOUT_MS = 60_000;

function cacheHints(given: Partial<CacheHints> = {}): CacheHints {
  const ttlMs = given.ttlMs ?? 0;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) throw new RangeError(`McpServer: cache.ttlMs must be a non-negative integer, got ${ttlMs}`);
  const cacheScope = given.cacheScope ?? "private";
  if (cacheScope !== "public" && cacheScope !== "private") throw new RangeError(`McpServer: cache.cacheScope must be "public" or "private"`);
  return { ttlMs, cacheScope };
}
