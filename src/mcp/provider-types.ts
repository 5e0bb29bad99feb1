/**
 * What an {@link McpServer} serves from, and the pipeline around it: the provider contracts
 * (tools, prompts, resources), the context every provider and middleware is given for one
 * downstream request, and the middleware contract. Types only, erased at run time; what
 * serves them (provider-serving.ts) is loaded only by a server given providers or middleware
 * (docs/decisions.md 124).
 */
import type { ChangedList, HandlerContext, ListKind } from "./server-registry.ts";
import type { InputRequest } from "./input-round.ts";
import type {
  CallToolResult,
  CompleteRequestParams,
  CompleteResult,
  ElicitRequestParams,
  ElicitResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "./types.ts";

/** The two protocol eras: `initialize` and sessions (2024-11-05 to 2025-11-25), or per-request `_meta` (2026-07-28 on). */
export type ProtocolEra = "handshake" | "stateless";

/**
 * Who the downstream client is. `principal` is set only by a transport that verified the
 * client's token (`protectedResource`: the token's subject, else `client:<client id>`); `name` and `version` are what the client
 * declared about itself (`clientInfo`) and prove nothing, so a security decision should read
 * `principal`.
 */
export interface ClientIdentity {
  readonly principal?: string;
  readonly name?: string;
  readonly version?: string;
}

/**
 * One downstream request as a provider or middleware sees it: who asked, in which era, and
 * the request's own channels (cancellation, progress, log, asking the client for input).
 */
export interface ServingContext extends HandlerContext {
  readonly client: ClientIdentity;
  readonly era: ProtocolEra;
  /** The version of the session (handshake era) or of the stateless era. */
  readonly protocolVersion: string;
  /**
   * Asks this client for input within this request, in either era (see
   * `ServerSession.requestInputs`): a handshake session sends requests, a stateless request
   * ends in `input_required` and the handler runs again with the answers. Use the same keys
   * on every run. `options.signal` withdraws the questions (a handshake session cancels its
   * requests; a stateless round is over anyway once the handler ends).
   */
  requestInputs(requests: Record<string, InputRequest>, options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
  /** `elicitation/create` within this request, in either era; `key` names it across stateless retries. */
  elicit(params: ElicitRequestParams, key?: string): Promise<ElicitResult>;
}

/** Told when a provider's lists or resources change. */
export interface ProviderListener {
  listChanged(list: ChangedList): void;
  resourceUpdated?(uri: string): void;
}

/** Serves tools. `listTools` returns the whole list (a provider pages its own upstream). */
export interface ToolProvider {
  listTools(ctx: ServingContext): readonly Tool[] | Promise<readonly Tool[]>;
  /**
   * Runs a tool. Throw `RpcError` -32602 for a name it does not have; any other throw becomes
   * an `isError` result the model can read (docs/decisions.md 8).
   */
  callTool(name: string, args: Record<string, unknown>, ctx: ServingContext): CallToolResult | Promise<CallToolResult>;
}

/** Serves prompts. */
export interface PromptProvider {
  listPrompts(ctx: ServingContext): readonly Prompt[] | Promise<readonly Prompt[]>;
  /** Throw `RpcError` -32602 for a name it does not have. */
  getPrompt(name: string, args: Record<string, string>, ctx: ServingContext): GetPromptResult | Promise<GetPromptResult>;
}

/** Serves resources (and, optionally, resource templates). */
export interface ResourceProvider {
  listResources(ctx: ServingContext): readonly Resource[] | Promise<readonly Resource[]>;
  listResourceTemplates?(ctx: ServingContext): readonly ResourceTemplate[] | Promise<readonly ResourceTemplate[]>;
  /** Throw `RpcError` -32002 (resource not found) for a URI it does not have. */
  readResource(uri: string, ctx: ServingContext): ReadResourceResult | Promise<ReadResourceResult>;
}

/**
 * What an McpServer (or a CompositeProvider) serves from: any of the three contracts, each
 * whole or absent, plus change events. A server declares a capability for every feature some
 * provider implements.
 *
 * ```ts
 * const clock: ServerProvider = {
 *   listTools: () => [{ name: "now", inputSchema: { type: "object" } }],
 *   callTool: () => ({ content: [{ type: "text", text: new Date().toISOString() }] }),
 * };
 * ```
 */
export interface ServerProvider extends Partial<ToolProvider>, Partial<PromptProvider>, Partial<ResourceProvider> {
  /**
   * Whether it offers `list` (templates count as resources) or completions; asked for the
   * capabilities a session is told. Default: whether it has the list's (or `complete`) method. For a provider that has the
   * methods whatever it serves (a composite).
   */
  offers?(list: ChangedList | "completions"): boolean;
  /**
   * `completion/complete` for one of its prompts (`ref/prompt`, under its name here) or
   * resource templates (`ref/resource`, under its URI template here).
   */
  complete?(params: CompleteRequestParams, ctx: ServingContext): CompleteResult | Promise<CompleteResult>;
  /** Subscribes to changes; returns the unsubscribe function. */
  subscribe?(listener: ProviderListener): () => void;
}

/** One list on its way to the client, for a middleware's `filter`. */
export type Listing =
  | { readonly kind: "tools"; readonly items: readonly Tool[] }
  | { readonly kind: "prompts"; readonly items: readonly Prompt[] }
  | { readonly kind: "resources"; readonly items: readonly Resource[] }
  | { readonly kind: "resourceTemplates"; readonly items: readonly ResourceTemplate[] };

/** One `tools/call` going through the pipeline. A `before` may give it new arguments. */
export interface ToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  /** When the pipeline received it, ms since the epoch. */
  readonly startedAt: number;
}

/** What a `before` decides: nothing (go on), new arguments, or a refusal with a message for the model. */
export type BeforeOutcome = void | { readonly arguments: Record<string, unknown> } | { readonly refuse: string };

/**
 * One step of the pipeline around listing and calling. Each hook is optional. Order is the
 * declared order, as layers: `filter` and `before` run first to last, `after` last to first,
 * so the first middleware sees a call first and its result last (docs/decisions.md 125).
 *
 * - `filter(list, ctx)`: the list a client will see; return it, or a new listing of the same kind.
 * - `before(call, ctx)`: may refuse the call (the client gets an `isError` result, the
 *   provider is not called) or rewrite its arguments.
 * - `after(result, call, ctx)`: may change the result; runs for refused calls too, in the
 *   middleware before the one that refused.
 */
export interface Middleware {
  /** Names the middleware in errors. */
  readonly name: string;
  filter?(list: Listing, ctx: ServingContext): Listing | Promise<Listing>;
  before?(call: ToolCall, ctx: ServingContext): BeforeOutcome | Promise<BeforeOutcome>;
  after?(result: CallToolResult, call: ToolCall, ctx: ServingContext): CallToolResult | Promise<CallToolResult>;
}

/** One page of a list: its items and, when more follow, the cursor of the next page. */
export interface ListPage {
  items: unknown[];
  nextCursor?: string;
}

/**
 * What a session serves from: the registry itself (a server with no providers and no
 * middleware, the fast path), or the providers and pipeline around it (provider-serving.ts).
 * Internal: the seam between sessions and what they serve.
 */
export interface ServedFeatures {
  /** Which feature lists this server offers (templates count as resources). */
  has(list: ChangedList): boolean;
  /** True when `completion/complete` can be answered. */
  readonly completes: boolean;
  /** True when `uri` may be subscribed to. */
  knows(uri: string): boolean;
  page(kind: ListKind, cursor: unknown, pageSize: number, ctx: HandlerContext): ListPage | Promise<ListPage>;
  /** A tool's definition if it is known now (the stateless era's `Mcp-Param-*` check). */
  toolDef(name: string): Tool | undefined;
  callTool(params: Record<string, unknown>, ctx: HandlerContext): CallToolResult | Promise<CallToolResult>;
  readResource(params: Record<string, unknown>, ctx: HandlerContext): Promise<ReadResourceResult>;
  getPrompt(params: Record<string, unknown>, ctx: HandlerContext): Promise<GetPromptResult>;
  complete(params: Record<string, unknown>, ctx: HandlerContext): Promise<CompleteResult>;
}
