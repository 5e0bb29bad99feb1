/**
 * The stateless era (2026-07-28) of a {@link ServerSession}: no handshake, every request
 * declares its version and client capabilities in `_meta`, every result says its
 * `resultType` and the server's identity. The methods the era removed (`initialize`, `ping`,
 * `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) are simply not
 * registered, so they get -32601 like any unknown method.
 *
 * A Streamable HTTP server gives each stateless POST a transport and a session of its own,
 * so there one exchange serves one request; over stdio one exchange serves the connection,
 * so what a request declared is kept per request id (docs/decisions.md 106, 111).
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcPeer, RequestContext } from "../jsonrpc/peer.ts";
import type { JsonRpcId } from "../jsonrpc/message.ts";
import { isPlainObject } from "../util/object.ts";
import { EraMeta, eraResult, missingCapability, readRequestMeta, type CacheHints, type StatelessRequestMeta } from "./era-meta.ts";
import { InputRequired, InputRound, type InputRequest } from "./input-round.ts";
import { paramHeaderMismatch, type HeaderBag } from "./param-headers.ts";
import type { RequestStateSeal } from "./request-state.ts";
import type { ChangedList, HandlerContext, ListKind } from "./server-registry.ts";
import type { ServedFeatures } from "./provider-types.ts";
import { listResult } from "./server-paging.ts";
import { McpMethod, McpNotification, type Implementation, type ServerCapabilities } from "./types.ts";

/** What the stateless side reads from its server. */
export interface StatelessCore {
  readonly info: Implementation;
  readonly instructions: string | undefined;
  readonly pageSize: number;
  /** What the server serves: its registry, or its providers and middleware. */
  readonly features: ServedFeatures;
  /** Versions of the stateless era this server speaks (`server/discover`, -32022). */
  readonly statelessVersions: readonly string[];
  readonly seal: RequestStateSeal;
  readonly cache: CacheHints;
  capabilities(): ServerCapabilities;
}

/** What a `subscriptions/listen` stream asked for and was granted. */
interface Listening {
  readonly id: JsonRpcId;
  readonly tools: boolean;
  readonly prompts: boolean;
  readonly resources: boolean;
  readonly uris: ReadonlySet<string>;
}

/** What one request in flight declared, and its input round (tools, prompts, resources). */
interface Scope {
  readonly meta: StatelessRequestMeta;
  round?: InputRound;
}

/** Resource URIs one listen stream may watch, so a client cannot grow server memory without bound. */
const MAX_WATCHED_URIS = 10_000;

const LISTS: ReadonlyArray<[string, ListKind, keyof ServerCapabilities]> = [
  [McpMethod.ToolsList, "tools", "tools"],
  [McpMethod.ResourcesList, "resources", "resources"],
  [McpMethod.ResourcesTemplatesList, "resourceTemplates", "resources"],
  [McpMethod.PromptsList, "prompts", "prompts"],
];

export class StatelessExchange {
  private readonly scopes = new Map<JsonRpcId, Scope>();
  private readonly listening = new Map<JsonRpcId, Listening>();
  /** The era's handlers, so a connection switching to this era can hand over its first request. */
  private readonly handlers = new Map<string, (params: unknown, ctx: RequestContext) => unknown>();
  private readonly peer: JsonRpcPeer;
  private readonly core: StatelessCore;
  private readonly context: (ctx: RequestContext) => HandlerContext;
  private readonly headers: HeaderBag | undefined;

  /** `headers`: the HTTP request's, whose `Mcp-Param-*` are checked on `tools/call`. */
  constructor(peer: JsonRpcPeer, core: StatelessCore, context: (ctx: RequestContext) => HandlerContext, headers?: HeaderBag) {
    this.peer = peer;
    this.core = core;
    this.context = context;
    this.headers = headers;
  }

  /**
   * The `_meta` of request `id`, or, without an id, of the one request in flight (over HTTP
   * there is only ever one); `undefined` when that is not known.
   */
  meta(id?: JsonRpcId): StatelessRequestMeta | undefined {
    return this.scope(id)?.meta;
  }

  private scope(id: JsonRpcId | undefined): Scope | undefined {
    if (id !== undefined) return this.scopes.get(id);
    return this.scopes.size === 1 ? this.scopes.values().next().value : undefined;
  }

  /**
   * Serves `method` with this era's handler: how a connection that has just switched to
   * this era answers the request that switched it. -32601 for a method the era lacks.
   */
  dispatch(method: string, params: unknown, ctx: RequestContext): unknown {
    const handler = this.handlers.get(method);
    if (handler === undefined) throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    return handler(params, ctx);
  }

  private register(method: string, handler: (params: unknown, ctx: RequestContext) => unknown): void {
    this.handlers.set(method, handler);
    this.peer.setRequestHandler(method, handler);
  }

  /** Registers the era's methods on the peer. */
  wire(): void {
    const reg = this.core.features;
    this.serve(McpMethod.ServerDiscover, () => {
      const out: Record<string, unknown> = { supportedVersions: [...this.core.statelessVersions], capabilities: this.core.capabilities() };
      if (this.core.instructions !== undefined) out.instructions = this.core.instructions;
      return out;
    }, true);
    for (const [method, kind, capability] of LISTS) {
      this.serve(method, (p, ctx) => {
        this.requireServer(capability, method);
        return listResult(kind, reg.page(kind, p.cursor, this.core.pageSize, this.context(ctx)));
      }, true);
    }
    this.serve(McpMethod.ToolsCall, (p, ctx) => {
      this.checkParamHeaders(p);
      return this.withInput(McpMethod.ToolsCall, p, ctx, () => reg.callTool(p, this.context(ctx)));
    });
    this.serve(McpMethod.PromptsGet, (p, ctx) => this.withInput(McpMethod.PromptsGet, p, ctx, () => reg.getPrompt(p, this.context(ctx))));
    this.serve(McpMethod.ResourcesRead, (p, ctx) => this.withInput(McpMethod.ResourcesRead, p, ctx, () => readResource(reg, p, this.context(ctx))), true);
    this.serve(McpMethod.CompletionComplete, (p, ctx) => reg.complete(p, this.context(ctx)));
    this.register(McpMethod.SubscriptionsListen, (params, ctx) => this.listen(params, ctx));
  }

  /**
   * Asks the client for `requests` within request `id` (see {@link meta}): the answers when
   * this retry (or an earlier round) brought them, else {@link InputRequired} ends the
   * handler. Throws -32021 when the request did not declare the capability a request needs.
   */
  ask(requests: Record<string, InputRequest>, id?: JsonRpcId): Record<string, unknown> {
    const scope = this.scope(id);
    const round = scope?.round;
    if (round === undefined) {
      const method = Object.values(requests)[0]?.method ?? "input";
      throw new RpcError(ErrorCode.InvalidRequest, `${method}: only tools/call, prompts/get and resources/read may ask the client for input`);
    }
    for (const req of Object.values(requests)) {
      const capability = req.method === McpMethod.ElicitationCreate ? "elicitation" : req.method === McpMethod.SamplingCreateMessage ? "sampling" : "roots";
      if (!isPlainObject(scope?.meta.clientCapabilities[capability])) throw missingCapability(req.method, capability);
    }
    return round.collect(requests);
  }

  /** A key for an unnamed input request, stable across the rounds of one request. */
  nextKey(method: string, id?: JsonRpcId): string {
    return this.scope(id)?.round?.nextKey(method) ?? `${method}#1`;
  }

  /** Sends `notifications/<list>/list_changed` on the listen stream, if it asked for them. */
  async sendListChanged(list: ChangedList): Promise<void> {
    for (const l of this.listening.values()) {
      if (list === "tools" ? l.tools : list === "prompts" ? l.prompts : l.resources) await this.notifyListener(l.id, `notifications/${list}/list_changed`, {});
    }
  }

  /** Sends `notifications/resources/updated` on the listen stream, if it watches `uri`. */
  async notifyResourceUpdated(uri: string): Promise<void> {
    for (const l of this.listening.values()) if (l.uris.has(uri)) await this.notifyListener(l.id, McpNotification.ResourcesUpdated, { uri });
  }

  private notifyListener(id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
    const tagged = { ...params, _meta: { [EraMeta.SubscriptionId]: id } };
    return this.peer.notify(method, tagged, { relatedRequestId: id }).catch(() => undefined);
  }

  /** Registers `handler` behind the `_meta` check and the result decoration. */
  private serve(method: string, handler: (p: Record<string, unknown>, ctx: RequestContext) => unknown, cacheable = false): void {
    this.register(method, async (params, ctx) => {
      const p = paramsObject(params, method);
      this.scopes.set(ctx.id, { meta: readRequestMeta(p, method, this.core.statelessVersions) });
      try {
        const result = await handler(p, ctx);
        const complete = !(isPlainObject(result) && result.resultType === "input_required");
        return eraResult(result, this.core.info, cacheable && complete ? this.core.cache : undefined);
      } finally {
        this.scopes.delete(ctx.id);
      }
    });
  }

  /** Runs a handler that may ask for input; a missing answer becomes the `input_required` result. */
  private async withInput(method: string, p: Record<string, unknown>, ctx: RequestContext, run: () => unknown): Promise<unknown> {
    const round = await InputRound.open(this.core.seal, method, p);
    this.scopes.get(ctx.id)!.round = round;
    try {
      return await run();
    } catch (err) {
      if (err instanceof InputRequired) return round.result(err);
      throw err;
    }
  }

  /** Over HTTP, `Mcp-Param-*` headers must match the arguments they mirror (-32020). */
  private checkParamHeaders(p: Record<string, unknown>): void {
    if (this.headers === undefined || typeof p.name !== "string" || !isPlainObject(p.arguments ?? {})) return;
    const def = this.core.features.toolDef(p.name);
    const why = def && paramHeaderMismatch(def.inputSchema, (p.arguments ?? {}) as Record<string, unknown>, this.headers);
    if (why) throw new RpcError(ErrorCode.HeaderMismatch, `Header mismatch: ${why}`);
  }

  private requireServer(capability: keyof ServerCapabilities, method: string): void {
    if (this.core.capabilities()[capability] === undefined) throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method} (this server offers no ${String(capability)})`);
  }

  /**
   * `subscriptions/listen`: acknowledges what it grants (only what the server can send),
   * then holds the stream open until the client leaves or the server closes.
   */
  private async listen(params: unknown, ctx: RequestContext): Promise<unknown> {
    const p = paramsObject(params, McpMethod.SubscriptionsListen);
    readRequestMeta(p, McpMethod.SubscriptionsListen, this.core.statelessVersions);
    const asked = p.notifications;
    if (!isPlainObject(asked)) throw new RpcError(ErrorCode.InvalidParams, "subscriptions/listen: notifications must be an object");
    const uris = asked.resourceSubscriptions ?? [];
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === "string") || uris.length > MAX_WATCHED_URIS) {
      throw new RpcError(ErrorCode.InvalidParams, `subscriptions/listen: resourceSubscriptions must be at most ${MAX_WATCHED_URIS} URI strings`);
    }
    const caps = this.core.capabilities();
    const can = (c: unknown, key: string): boolean => isPlainObject(c) && c[key] === true;
    const granted: Listening = {
      id: ctx.id,
      tools: asked.toolsListChanged === true && can(caps.tools, "listChanged"),
      prompts: asked.promptsListChanged === true && can(caps.prompts, "listChanged"),
      resources: asked.resourcesListChanged === true && can(caps.resources, "listChanged"),
      uris: new Set(can(caps.resources, "subscribe") ? (uris as string[]) : []),
    };
    const filter: Record<string, unknown> = {};
    if (granted.tools) filter.toolsListChanged = true;
    if (granted.prompts) filter.promptsListChanged = true;
    if (granted.resources) filter.resourcesListChanged = true;
    if (granted.uris.size > 0) filter.resourceSubscriptions = [...granted.uris];
    this.listening.set(ctx.id, granted);
    // Registered before the acknowledgement goes out, so no change after it is missed.
    await this.notifyListener(ctx.id, McpNotification.SubscriptionsAcknowledged, { notifications: filter });
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.listening.delete(ctx.id);
    return eraResult({ _meta: { [EraMeta.SubscriptionId]: ctx.id } }, this.core.info);
  }
}

/** `resources/read`, with the era's not-found error: -32602 carrying the URI (was -32002). */
async function readResource(reg: ServedFeatures, p: Record<string, unknown>, ctx: HandlerContext): Promise<unknown> {
  try {
    return await reg.readResource(p, ctx);
  } catch (err) {
    if (err instanceof RpcError && err.code === ErrorCode.ResourceNotFound) throw new RpcError(ErrorCode.InvalidParams, err.message, err.data);
    throw err;
  }
}

function paramsObject(params: unknown, method: string): Record<string, unknown> {
  if (params === undefined) return {};
  if (!isPlainObject(params)) throw new RpcError(ErrorCode.InvalidParams, `${method}: params must be an object`);
  return params;
}
