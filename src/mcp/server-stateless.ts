/**
 * The stateless era (2026-07-28) of a {@link ServerSession}: no handshake, every request
 * declares its version and client capabilities in `_meta`, every result says its
 * `resultType` and the server's identity. The methods the era removed (`initialize`, `ping`,
 * `logging/setLevel`, `resources/subscribe`, `resources/unsubscribe`) are simply not in its
 * table of methods, so they get -32601 like any unknown method.
 *
 * A Streamable HTTP server gives each stateless POST a transport and a session of its own,
 * so there one exchange serves one request; over stdio one exchange serves the connection,
 * so what a request declared is kept per request id (docs/decisions.md 106, 111).
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcPeer, RequestContext } from "../jsonrpc/peer.ts";
import { IdTable, type JsonRpcId } from "../jsonrpc/message.ts";
import { isPlainObject } from "../util/object.ts";
import { EraMeta, eraResult, missingCapability, readRequestMeta, type CacheHints, type StatelessRequestMeta } from "./era-meta.ts";
import { InputRequired, InputRound, type InputRequest } from "./input-round.ts";
import { paramHeaderMismatch, type HeaderBag } from "./param-headers.ts";
import type { RequestStateSeal } from "./request-state.ts";
import type { ChangedList, HandlerContext, ListKind } from "./server-registry.ts";
import type { ServedFeatures } from "./provider-types.ts";
import type { ServerSession } from "./server-session.ts";
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
  /** The context a handler gets (see `SessionCore`). */
  readonly contextOf: (session: ServerSession, ctx: RequestContext) => HandlerContext;
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

/**
 * The era's request methods, each with whether its result carries cache hints. One table
 * for every exchange of every server: a stateless POST builds no handlers of its own
 * (docs/decisions.md 142, 153). `subscriptions/listen` is served apart (it holds its stream).
 */
const SERVED: ReadonlyMap<string, boolean> = new Map([
  [McpMethod.ServerDiscover, true],
  ...LISTS.map(([method]): [string, boolean] => [method, true]),
  [McpMethod.ToolsCall, false],
  [McpMethod.PromptsGet, false],
  [McpMethod.ResourcesRead, true],
  [McpMethod.CompletionComplete, false],
]);

export class StatelessExchange {
  /** By request id; an IdTable, whose one-entry slot makes the usual single request allocate nothing. */
  private readonly scopes = new IdTable<Scope>();
  /** Open `subscriptions/listen` streams; made with the first (docs/decisions.md 171). */
  private listening: Map<JsonRpcId, Listening> | undefined;
  private readonly peer: JsonRpcPeer;
  private readonly core: StatelessCore;
  private readonly session: ServerSession;
  private readonly headers: HeaderBag | undefined;

  /**
   * `session`: whose handler context requests get; `headers`: the HTTP request's, whose
   * `Mcp-Param-*` are checked on `tools/call`.
   */
  constructor(peer: JsonRpcPeer, core: StatelessCore, session: ServerSession, headers?: HeaderBag) {
    this.peer = peer;
    this.core = core;
    this.session = session;
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
    return this.scopes.size === 1 ? this.scopes.values()[0] : undefined;
  }

  /**
   * Serves request `method` as the era does, -32601 for a method the era lacks: the peer's
   * fallback handler, so the session registers no handler of its own. An arrow, to be
   * handed to the peer as it is.
   */
  readonly dispatch = (method: string, params: unknown, ctx: RequestContext): unknown => {
    if (method === McpMethod.SubscriptionsListen) return this.listen(params, ctx);
    const cacheable = SERVED.get(method);
    if (cacheable === undefined) throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    return this.serve(method, params, ctx, cacheable);
  };

  /** Runs a request of {@link SERVED} behind the `_meta` check and the result decoration. */
  private async serve(method: string, params: unknown, ctx: RequestContext, cacheable: boolean): Promise<unknown> {
    const p = paramsObject(params, method);
    this.scopes.set(ctx.id, { meta: readRequestMeta(p, method, this.core.statelessVersions) });
    try {
      const result = await this.answer(method, p, ctx);
      const complete = !(isPlainObject(result) && result.resultType === "input_required");
      return eraResult(result, this.core.info, cacheable && complete ? this.core.cache : undefined);
    } finally {
      this.scopes.delete(ctx.id);
    }
  }

  /** The answer to a request of {@link SERVED}, before the era's decoration. */
  private answer(method: string, p: Record<string, unknown>, ctx: RequestContext): unknown {
    const reg = this.core.features;
    switch (method) {
      case McpMethod.ServerDiscover: {
        const out: Record<string, unknown> = { supportedVersions: [...this.core.statelessVersions], capabilities: this.core.capabilities() };
        if (this.core.instructions !== undefined) out.instructions = this.core.instructions;
        return out;
      }
      case McpMethod.ToolsCall:
        this.checkParamHeaders(p);
        return this.withInput(method, p, ctx);
      case McpMethod.PromptsGet:
      case McpMethod.ResourcesRead:
        return this.withInput(method, p, ctx);
      case McpMethod.CompletionComplete:
        return reg.complete(p, this.context(ctx));
      default: {
        // The rest of SERVED are the lists.
        const [, kind, capability] = LISTS.find(([list]) => list === method)!;
        this.requireServer(capability, method);
        return listResult(kind, reg.page(kind, p.cursor, this.core.pageSize, this.context(ctx)));
      }
    }
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
    for (const l of this.listening?.values() ?? []) {
      if (list === "tools" ? l.tools : list === "prompts" ? l.prompts : l.resources) await this.notifyListener(l.id, `notifications/${list}/list_changed`, {});
    }
  }

  /** Sends `notifications/resources/updated` on the listen stream, if it watches `uri`. */
  async notifyResourceUpdated(uri: string): Promise<void> {
    for (const l of this.listening?.values() ?? []) if (l.uris.has(uri)) await this.notifyListener(l.id, McpNotification.ResourcesUpdated, { uri });
  }

  private notifyListener(id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
    const tagged = { ...params, _meta: { [EraMeta.SubscriptionId]: id } };
    return this.peer.notify(method, tagged, { relatedRequestId: id }).catch(() => undefined);
  }

  /**
   * `tools/call`, `prompts/get` or `resources/read`, whose handler may ask for input: a
   * missing answer becomes the `input_required` result.
   */
  private async withInput(method: string, p: Record<string, unknown>, ctx: RequestContext): Promise<unknown> {
    const round = await InputRound.open(this.core.seal, method, p);
    this.scopes.get(ctx.id)!.round = round;
    const reg = this.core.features;
    const context = this.context(ctx);
    try {
      if (method === McpMethod.ToolsCall) return await reg.callTool(p, context);
      if (method === McpMethod.PromptsGet) return await reg.getPrompt(p, context);
      return await readResource(reg, p, context);
    } catch (err) {
      if (err instanceof InputRequired) return round.result(err);
      throw err;
    }
  }

  private context(ctx: RequestContext): HandlerContext {
    return this.core.contextOf(this.session, ctx);
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
    (this.listening ??= new Map()).set(ctx.id, granted);
    // Registered before the acknowledgement goes out, so no change after it is missed.
    await this.notifyListener(ctx.id, McpNotification.SubscriptionsAcknowledged, { notifications: filter });
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    this.listening?.delete(ctx.id);
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
