/**
 * What a server with providers or middleware serves from (docs/decisions.md 124): its own
 * registrations first, then each provider in order, merged (on a shared name or URI the
 * first wins), every list through the middleware's filters and every tool call through its
 * layers. Each provider's answer is bounded in time; a provider that fails a list is left out
 * of it, one that fails a call gives that call an error.
 *
 * The registry stays the fast path: a call to one of the server's own tools with no
 * middleware goes straight to it, as on a server without providers.
 */
import { BridgeError, ErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { withDeadline } from "../util/deadline.ts";
import { isPlainObject } from "../util/object.ts";
import { MiddlewarePipeline } from "./middleware-pipeline.ts";
import { ProviderCallContext, servingContext } from "./provider-context.ts";
import type { Listing, ListPage, ServerProvider, Middleware, ProviderListener, ServedFeatures, ServingContext, ToolCall } from "./provider-types.ts";
import { pageOf } from "./server-paging.ts";
import { errorResult, toolFailure, type ChangedList, type HandlerContext, type ListKind, type ServerRegistry } from "./server-registry.ts";
import type { CallToolResult, CompleteRequestParams, CompleteResult, GetPromptResult, ReadResourceResult, Tool } from "./types.ts";

/** The context its sessions hand out, loaded with this module (McpServer installs it). */
export { ProviderCallContext } from "./provider-context.ts";

export interface ProviderFeaturesOptions {
  providers: readonly ServerProvider[];
  middleware: readonly Middleware[];
  /** Bound on each provider answer, ms. */
  timeoutMs: number;
  /** Told when a provider fails a list and is left out of it. */
  onProviderError?: (error: Error) => void;
}

/** Which provider method lists each kind, and the key of its items. */
const LISTERS: Record<ListKind, { method: "listTools" | "listPrompts" | "listResources" | "listResourceTemplates"; key: string }> = {
  tools: { method: "listTools", key: "name" },
  prompts: { method: "listPrompts", key: "name" },
  resources: { method: "listResources", key: "uri" },
  resourceTemplates: { method: "listResourceTemplates", key: "uriTemplate" },
};

export class ProviderFeatures implements ServedFeatures {
  private readonly registry: ServerRegistry;
  private readonly providers: readonly ServerProvider[];
  private readonly pipeline: MiddlewarePipeline | undefined;
  private readonly timeoutMs: number;
  private readonly onProviderError: ((error: Error) => void) | undefined;
  /** Each list's items by key (name or URI) as last listed, and who serves each (undefined: the registry). */
  private readonly listed = new Map<ListKind, Map<string, Listed>>();

  constructor(registry: ServerRegistry, options: ProviderFeaturesOptions) {
    this.registry = registry;
    this.providers = [...options.providers];
    this.pipeline = options.middleware.length > 0 ? new MiddlewarePipeline(options.middleware) : undefined;
    this.timeoutMs = options.timeoutMs;
    this.onProviderError = options.onProviderError;
  }

  /** Subscribes to every provider's changes; returns the function that ends it. */
  subscribe(listener: ProviderListener): () => void {
    const ends = this.providers.map((p) => p.subscribe?.(listener));
    return () => {
      for (const end of ends) end?.();
    };
  }

  has(list: ChangedList): boolean {
    if (this.registry.has(list)) return true;
    const method = list === "tools" ? "listTools" : list === "prompts" ? "listPrompts" : "listResources";
    return this.providers.some((p) => typeof p[method] === "function" && (p.offers?.(list) ?? true));
  }

  get completes(): boolean {
    return this.registry.completes || this.providers.some((p) => typeof p.complete === "function" && (p.offers?.("completions") ?? true));
  }

  /** A provider's URIs are not all listed (templates), so any URI may be subscribed to once some provider reads. */
  knows(uri: string): boolean {
    return this.registry.knows(uri) || this.providers.some((p) => typeof p.readResource === "function");
  }

  toolDef(name: string): Tool | undefined {
    return this.registry.toolDef(name) ?? (this.listed.get("tools")?.get(name)?.item as Tool | undefined);
  }

  async page(kind: ListKind, cursor: unknown, pageSize: number, handler: HandlerContext): Promise<ListPage> {
    const ctx = servingContext(handler);
    let items = await this.collect(kind, ctx);
    if (this.pipeline !== undefined) items = (await this.pipeline.filter({ kind, items } as Listing, ctx)).items as unknown[];
    return pageOf(items, kind, cursor, pageSize);
  }

  callTool(params: Record<string, unknown>, handler: HandlerContext): CallToolResult | Promise<CallToolResult> {
    const name = params.name;
    if (typeof name !== "string") throw new RpcError(ErrorCode.InvalidParams, "tools/call: name must be a string");
    const local = this.registry.toolDef(name) !== undefined;
    if (local && this.pipeline === undefined) return this.registry.callTool(params, handler);
    return this.callRouted(name, params, servingContext(handler), local);
  }

  async readResource(params: Record<string, unknown>, handler: HandlerContext): Promise<ReadResourceResult> {
    const uri = params.uri;
    if (typeof uri !== "string") throw new RpcError(ErrorCode.InvalidParams, "resources/read: uri must be a string");
    const ctx = servingContext(handler);
    if (await this.hidden("resources", uri, ctx)) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    if (this.registry.knows(uri)) return this.registry.readResource(params, handler);
    // Templates make URIs impossible to enumerate: each provider that reads is asked in turn.
    for (const p of this.providers) {
      if (typeof p.readResource !== "function") continue;
      try {
        const result = await this.answer(ctx, `resources/read ${JSON.stringify(uri)}`, (c) => p.readResource!(uri, c));
        if (!isPlainObject(result) || !Array.isArray(result.contents)) {
          throw new RpcError(ErrorCode.InternalError, `reading ${uri} produced a malformed result (a provider bug)`);
        }
        return result;
      } catch (err) {
        if (err instanceof RpcError && err.code === ErrorCode.ResourceNotFound) continue;
        throw asRpcError(err, "resources/read");
      }
    }
    throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
  }

  async getPrompt(params: Record<string, unknown>, handler: HandlerContext): Promise<GetPromptResult> {
    const name = params.name;
    if (typeof name !== "string") throw new RpcError(ErrorCode.InvalidParams, "prompts/get: name must be a string");
    const ctx = servingContext(handler);
    const entry = localEntry(this.registry, "prompts", name) ?? (await this.find("prompts", name, ctx));
    if (entry === undefined || (await this.hidden("prompts", name, ctx, entry))) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${JSON.stringify(name)}`);
    const owner = entry.owner;
    if (owner === undefined) return this.registry.getPrompt(params, handler);
    if (owner.getPrompt === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${JSON.stringify(name)}`);
    const args = params.arguments ?? {};
    if (!isPlainObject(args) || Object.values(args).some((v) => typeof v !== "string")) {
      throw new RpcError(ErrorCode.InvalidParams, `prompts/get "${name}": arguments must be an object of strings`);
    }
    try {
      return await this.answer(ctx, `prompts/get ${JSON.stringify(name)}`, (c) => owner.getPrompt!(name, args as Record<string, string>, c));
    } catch (err) {
      throw asRpcError(err, "prompts/get");
    }
  }

  /** The registry completes its own prompts and templates; a provider's go to it. */
  async complete(params: Record<string, unknown>, handler: HandlerContext): Promise<CompleteResult> {
    const ref = params.ref;
    const prompt = isPlainObject(ref) && ref.type === "ref/prompt" && typeof ref.name === "string" ? ref.name : undefined;
    const uri = isPlainObject(ref) && ref.type === "ref/resource" && typeof ref.uri === "string" ? ref.uri : undefined;
    const ctx = servingContext(handler);
    let entry: Listed | undefined;
    if (prompt !== undefined && localEntry(this.registry, "prompts", prompt) === undefined) {
      entry = await this.find("prompts", prompt, ctx);
      if (entry !== undefined && (await this.hidden("prompts", prompt, ctx, entry))) entry = undefined;
    } else if (uri !== undefined && localEntry(this.registry, "resourceTemplates", uri) === undefined && !this.registry.knows(uri)) {
      entry = (await this.find("resourceTemplates", uri, ctx)) ?? (await this.find("resources", uri, ctx));
    }
    const owner = entry?.owner;
    if (owner?.complete !== undefined) {
      try {
        return await this.answer(ctx, "completion/complete", (c) => owner.complete!(params as CompleteRequestParams, c));
      } catch (err) {
        throw asRpcError(err, "completion/complete");
      }
    }
    if (entry !== undefined) return { completion: { values: [] } }; // a provider's, which offers none
    if (this.registry.completes) return this.registry.complete(params, handler);
    throw new RpcError(ErrorCode.InvalidParams, `completion/complete: unknown reference ${JSON.stringify(ref)}`);
  }

  /** A tool call routed to its owner, through the pipeline when there is one. */
  private async callRouted(name: string, params: Record<string, unknown>, ctx: ServingContext, local: boolean): Promise<CallToolResult> {
    // A tool hidden by a filter is the `before` hooks' to refuse, with a reason (toolPolicy does).
    const owner = local ? undefined : (await this.find("tools", name, ctx))?.owner;
    if (!local && owner === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(name)}`);
    const args = params.arguments ?? {};
    if (!isPlainObject(args)) return errorResult(`Invalid arguments for tool "${name}": arguments must be an object`);
    if (this.pipeline === undefined) return this.callProvider(owner!, name, args, ctx);
    const first: ToolCall = { name, arguments: args, startedAt: Date.now() };
    return this.pipeline.call(first, ctx, (call) => {
      if (owner !== undefined) return this.callProvider(owner, name, call.arguments, ctx);
      // The registry validates the arguments a middleware may have rewritten.
      return this.registry.callTool(call === first ? params : { name, arguments: call.arguments }, ctx);
    });
  }

  /** What a provider listed under `key`, listing again once when it is not known (it may be new). */
  private async find(kind: ListKind, key: string, ctx: ServingContext): Promise<Listed | undefined> {
    const known = this.listed.get(kind)?.get(key);
    if (known !== undefined && known.owner !== undefined) return known;
    await this.collect(kind, ctx);
    const found = this.listed.get(kind)?.get(key);
    return found?.owner === undefined ? undefined : found;
  }

  /**
   * True when a middleware's filter would hide this prompt or resource from this client's
   * list: what a client cannot see, it cannot get or read by guessing its name (tools have
   * `before` for that, docs/decisions.md 125). A URI no list holds (one a template matched)
   * is not checked.
   */
  private async hidden(kind: ListKind, key: string, ctx: ServingContext, entry?: Listed): Promise<boolean> {
    if (this.pipeline === undefined || !this.pipeline.filters) return false;
    const lookup = (): unknown => this.listed.get(kind)?.get(key)?.item ?? localEntry(this.registry, kind, key)?.item;
    let item = entry?.item ?? lookup();
    if (item === undefined) {
      await this.collect(kind, ctx);
      item = lookup();
      if (item === undefined) return false;
    }
    return (await this.pipeline.filter({ kind, items: [item] } as unknown as Listing, ctx)).items.length === 0;
  }

  private async callProvider(owner: ServerProvider, name: string, args: Record<string, unknown>, ctx: ServingContext): Promise<CallToolResult> {
    try {
      const result = await this.answer(ctx, `tools/call ${JSON.stringify(name)}`, (c) => owner.callTool!(name, args, c));
      if (!isPlainObject(result) || !Array.isArray(result.content)) {
        return errorResult(`Tool "${name}" returned a malformed result (a provider bug): it needs a content array`);
      }
      return result;
    } catch (err) {
      if (err instanceof RpcError && err.code === ErrorCode.InvalidParams) throw err;
      return toolFailure(name, err);
    }
  }

  /**
   * Every source's list of `kind`, merged in order (the server's own first); the first item
   * under a key wins. Remembers who owns each tool and prompt name, for routing.
   */
  private async collect(kind: ListKind, ctx: ServingContext): Promise<unknown[]> {
    const { method, key } = LISTERS[kind];
    const lists = await Promise.all(this.providers.map((p) => this.listOf(p, method, ctx)));
    const own = this.registry.definitions(kind);
    const merged = [...own];
    const index = new Map<string, Listed>();
    for (const item of own) index.set((item as Record<string, string>)[key]!, { item, owner: undefined });
    lists.forEach((items, i) => {
      for (const item of items) {
        const id = isPlainObject(item) ? item[key] : undefined;
        if (typeof id !== "string" || index.has(id)) continue;
        index.set(id, { item, owner: this.providers[i] });
        merged.push(item);
      }
    });
    this.listed.set(kind, index);
    return merged;
  }

  /** One provider's list, or none when it has no such list, fails or does not answer in time. */
  private async listOf(p: ServerProvider, method: (typeof LISTERS)[ListKind]["method"], ctx: ServingContext): Promise<readonly unknown[]> {
    const list = p[method] as ((ctx: ServingContext) => readonly unknown[] | Promise<readonly unknown[]>) | undefined;
    if (typeof list !== "function") return [];
    try {
      const items = await this.answer(ctx, method, (c) => list.call(p, c));
      if (!Array.isArray(items)) throw new BridgeError("INVALID_RESULT", `a provider's ${method} returned no array`);
      return items;
    } catch (err) {
      this.onProviderError?.(err instanceof Error ? err : new Error(errorMessage(err)));
      return [];
    }
  }

  /**
   * A provider's answer, or BridgeError `TIMEOUT` when it does not come in time. The provider
   * runs with a context whose signal aborts then too (with that error as its reason), so one
   * that listens stops (the request's own signal is read only if the provider reads its own).
   */
  private answer<T>(ctx: ServingContext, what: string, run: (ctx: ServingContext) => T | Promise<T>): Promise<T> | T {
    const scoped = ctx instanceof ProviderCallContext ? ctx.bounded() : undefined;
    const value = run(scoped ?? ctx);
    if (!(value instanceof Promise)) return value;
    return withDeadline(value, this.timeoutMs, () => {
      const err = new BridgeError("TIMEOUT", `a provider did not answer ${what} within ${this.timeoutMs} ms`, { details: { timeoutMs: this.timeoutMs } });
      scoped?.stopWith(err);
      return err;
    });
  }
}

/** One listed item and who serves it (undefined: the server's own registry). */
interface Listed {
  item: unknown;
  owner: ServerProvider | undefined;
}

/** The registry's own item of a list under `key` (its name, or a static resource's URI). */
function localEntry(registry: ServerRegistry, kind: ListKind, key: string): Listed | undefined {
  const field = LISTERS[kind].key;
  const item = registry.definitions(kind).find((d) => (d as Record<string, unknown>)[field] === key);
  return item === undefined ? undefined : { item, owner: undefined };
}

/** A provider's failure of a prompt or a read, as the JSON-RPC error the client gets. */
function asRpcError(err: unknown, method: string): RpcError {
  if (err instanceof RpcError) return err;
  return new RpcError(ErrorCode.InternalError, `${method} failed: ${errorMessage(err)}`);
}
