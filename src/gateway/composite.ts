/**
 * CompositeProvider: several providers served as one, each under a namespace, with the
 * bridge's naming rules (bridge/naming.ts): tools and prompts become `<namespace>__<name>`
 * (sanitised, capped, hashed where needed, stable across restarts), resource URIs
 * `mcp-bridge://<namespace>/<original>` (docs/decisions.md 126). Names are never split: the
 * way back is the namer's map, rebuilt from a listing when a name is not known yet.
 *
 * A member that fails or does not answer a list is left out of it (and reported); the others
 * are served. URIs in what a member returns (resource links and embedded resources in tool
 * results and prompt messages, the contents of a read) are put under its namespace, so a
 * client can read them back through the composite.
 */
import { ToolNamer, UriNamespaces } from "../bridge/naming.ts";
import { BridgeError, ErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import type { ServerProvider, ProviderListener, ServingContext } from "../mcp/provider-types.ts";
import type { ChangedList } from "../mcp/server-registry.ts";
import type {
  CallToolResult,
  CompleteRequestParams,
  CompleteResult,
  ContentBlock,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "../mcp/types.ts";
import { raceDeadline, TIMED_OUT } from "../util/deadline.ts";

/** One provider of a composite and the namespace its names go under. */
export interface CompositeMember {
  /** Unique within the composite; any string (an unusual one is sanitised and hashed in names). */
  namespace: string;
  provider: ServerProvider;
}

export interface CompositeProviderOptions {
  /** Cap on tool and prompt names, at least 20. Default 64. */
  maxNameLength?: number;
  /** Bound on each member's list, in ms; a member that takes longer is left out of it. Default 30 000. */
  listTimeoutMs?: number;
  /** Told when a member fails or does not answer a list (BridgeError `TIMEOUT` for a hang). */
  onMemberError?: (namespace: string, error: Error) => void;
}

const DEFAULT_LIST_TIMEOUT_MS = 30_000;

/**
 * ```ts
 * const both = new CompositeProvider([
 *   { namespace: "docs", provider: docsProvider },
 *   { namespace: "tickets", provider: ticketsProvider },
 * ]);
 * const server = new McpServer({ name: "gateway", version: "1.0.0" }, { providers: [both] });
 * // tools/list: docs__search, tickets__search, ...
 * ```
 */
export class CompositeProvider implements ServerProvider {
  private readonly members = new Map<string, ServerProvider>();
  private readonly tools: ToolNamer;
  private readonly prompts: ToolNamer;
  private readonly uris = new UriNamespaces();
  private readonly listTimeoutMs: number;
  private readonly onMemberError: ((namespace: string, error: Error) => void) | undefined;

  constructor(members: readonly CompositeMember[], options: CompositeProviderOptions = {}) {
    for (const m of members) {
      if (typeof m.namespace !== "string" || m.namespace === "") throw new RangeError("CompositeProvider: every member needs a namespace");
      if (this.members.has(m.namespace)) throw new RangeError(`CompositeProvider: namespace ${JSON.stringify(m.namespace)} is given twice`);
      this.members.set(m.namespace, m.provider);
      this.uris.segmentOf(m.namespace);
    }
    this.tools = new ToolNamer({ lead: "", maxLength: options.maxNameLength });
    this.prompts = new ToolNamer({ lead: "", maxLength: options.maxNameLength });
    this.listTimeoutMs = options.listTimeoutMs ?? DEFAULT_LIST_TIMEOUT_MS;
    this.onMemberError = options.onMemberError;
  }

  /** The member and its own name behind a composite tool name (after a listing named it). */
  resolveTool(name: string): { namespace: string; name: string } | undefined {
    const ref = this.tools.resolve(name);
    return ref === undefined ? undefined : { namespace: ref.server, name: ref.tool };
  }

  /** The member and its own name behind a composite prompt name. */
  resolvePrompt(name: string): { namespace: string; name: string } | undefined {
    const ref = this.prompts.resolve(name);
    return ref === undefined ? undefined : { namespace: ref.server, name: ref.tool };
  }

  /** The member and its own URI behind a composite URI. */
  resolveUri(uri: string): { namespace: string; uri: string } | undefined {
    return this.uris.unwrap(uri);
  }

  /** Whether some member offers `list` (or completions), so a server declares only what is there. */
  offers(list: ChangedList | "completions"): boolean {
    const method = list === "tools" ? "listTools" : list === "prompts" ? "listPrompts" : list === "completions" ? "complete" : "listResources";
    for (const p of this.members.values()) if (typeof p[method] === "function" && (p.offers?.(list) ?? true)) return true;
    return false;
  }

  listTools(ctx: ServingContext): Promise<Tool[]> {
    return this.listNamed("listTools", this.tools, ctx) as Promise<Tool[]>;
  }

  async callTool(name: string, args: Record<string, unknown>, ctx: ServingContext): Promise<CallToolResult> {
    const { namespace, member, own } = await this.owner(this.tools, name, "listTools", ctx);
    if (member.callTool === undefined) throw unknown("tool", name);
    const result = await member.callTool(own, args, ctx);
    return Array.isArray(result?.content) ? { ...result, content: result.content.map((b) => this.wrapBlock(namespace, b)) } : result;
  }

  listPrompts(ctx: ServingContext): Promise<Prompt[]> {
    return this.listNamed("listPrompts", this.prompts, ctx) as Promise<Prompt[]>;
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: ServingContext): Promise<GetPromptResult> {
    const { namespace, member, own } = await this.owner(this.prompts, name, "listPrompts", ctx);
    if (member.getPrompt === undefined) throw unknown("prompt", name);
    const result = await member.getPrompt(own, args, ctx);
    if (!Array.isArray(result?.messages)) return result;
    return { ...result, messages: result.messages.map((m) => ({ ...m, content: this.wrapBlock(namespace, m.content) })) };
  }

  async listResources(ctx: ServingContext): Promise<Resource[]> {
    const out: Resource[] = [];
    for (const [namespace, resources] of await this.listAll("listResources", ctx)) {
      for (const r of resources as Resource[]) out.push({ ...r, uri: this.uris.wrap(namespace, r.uri) });
    }
    return out;
  }

  async listResourceTemplates(ctx: ServingContext): Promise<ResourceTemplate[]> {
    const out: ResourceTemplate[] = [];
    for (const [namespace, templates] of await this.listAll("listResourceTemplates", ctx)) {
      for (const t of templates as ResourceTemplate[]) out.push({ ...t, uriTemplate: this.uris.wrap(namespace, t.uriTemplate) });
    }
    return out;
  }

  async readResource(uri: string, ctx: ServingContext): Promise<ReadResourceResult> {
    const ref = this.uris.unwrap(uri);
    const member = ref && this.members.get(ref.namespace);
    if (ref === undefined || member?.readResource === undefined) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    const result = await member.readResource(ref.uri, ctx);
    if (!Array.isArray(result?.contents)) return result;
    return { ...result, contents: result.contents.map((c) => ({ ...c, uri: this.uris.wrap(ref.namespace, c.uri) })) };
  }

  /** Completion of a member's prompt argument or template variable, asked of that member under its own names. */
  async complete(params: CompleteRequestParams, ctx: ServingContext): Promise<CompleteResult> {
    const ref = params.ref;
    if (ref.type === "ref/prompt") {
      const { member, own } = await this.owner(this.prompts, ref.name, "listPrompts", ctx);
      return member.complete === undefined ? { completion: { values: [] } } : member.complete({ ...params, ref: { ...ref, name: own } }, ctx);
    }
    const target = this.uris.unwrap(ref.uri);
    const member = target && this.members.get(target.namespace);
    if (target === undefined || member === undefined) throw new RpcError(ErrorCode.InvalidParams, `completion/complete: unknown reference ${JSON.stringify(ref)}`);
    return member.complete === undefined ? { completion: { values: [] } } : member.complete({ ...params, ref: { ...ref, uri: target.uri } }, ctx);
  }

  /** Subscribes to every member: list changes pass on, updated URIs under their namespace. */
  subscribe(listener: ProviderListener): () => void {
    const ends: Array<(() => void) | undefined> = [];
    for (const [namespace, p] of this.members) {
      ends.push(
        p.subscribe?.({
          listChanged: (list) => listener.listChanged(list),
          resourceUpdated: (uri) => listener.resourceUpdated?.(this.uris.wrap(namespace, uri)),
        }),
      );
    }
    return () => {
      for (const end of ends) end?.();
    };
  }

  /** Every member's tools (or prompts) under the names `namer` gives them. */
  private async listNamed(method: "listTools" | "listPrompts", namer: ToolNamer, ctx: ServingContext): Promise<Array<{ name: string }>> {
    const out: Array<{ name: string }> = [];
    for (const [namespace, items] of await this.listAll(method, ctx)) {
      const named = items as Array<{ name: string }>;
      const names = namer.assign(namespace, named);
      for (const item of named) out.push({ ...item, name: names.get(item.name)! });
    }
    return out;
  }

  /** The member behind a composite name and its own name there; lists once when the name is new. -32602 when none. */
  private async owner(namer: ToolNamer, name: string, method: "listTools" | "listPrompts", ctx: ServingContext): Promise<{ namespace: string; member: ServerProvider; own: string }> {
    const ref = namer.resolve(name) ?? (await this.listNamed(method, namer, ctx), namer.resolve(name));
    const member = ref && this.members.get(ref.server);
    if (ref === undefined || member === undefined) throw unknown(method === "listTools" ? "tool" : "prompt", name);
    return { namespace: ref.server, member, own: ref.tool };
  }

  /** Each member's list of one kind, in member order; a member that fails or hangs is left out. */
  private async listAll(
    method: "listTools" | "listPrompts" | "listResources" | "listResourceTemplates",
    ctx: ServingContext,
  ): Promise<Array<[string, readonly { name?: string; uri?: string }[]]>> {
    const entries = [...this.members].filter(([, p]) => typeof p[method] === "function");
    const lists = await Promise.all(
      entries.map(async ([namespace, p]) => {
        try {
          const items = await raceDeadline(Promise.resolve((p[method] as (ctx: ServingContext) => unknown).call(p, ctx)), this.listTimeoutMs);
          if (items === TIMED_OUT) throw new BridgeError("TIMEOUT", `member ${JSON.stringify(namespace)} did not answer ${method} within ${this.listTimeoutMs} ms`);
          if (!Array.isArray(items)) throw new BridgeError("INVALID_RESULT", `member ${JSON.stringify(namespace)}: ${method} returned no array`);
          return [namespace, items] as [string, readonly { name?: string; uri?: string }[]];
        } catch (err) {
          this.onMemberError?.(namespace, err instanceof Error ? err : new Error(errorMessage(err)));
          return undefined;
        }
      }),
    );
    return lists.filter((l) => l !== undefined);
  }

  /** A content block with its resource URI under `namespace` (other blocks as they are). */
  private wrapBlock(namespace: string, block: ContentBlock): ContentBlock {
    if (block?.type === "resource_link" && typeof block.uri === "string") return { ...block, uri: this.uris.wrap(namespace, block.uri) };
    if (block?.type === "resource" && typeof block.resource?.uri === "string") {
      return { ...block, resource: { ...block.resource, uri: this.uris.wrap(namespace, block.resource.uri) } };
    }
    return block;
  }
}

/** -32602, as for any unknown name (tools/call and prompts/get). */
function unknown(what: "tool" | "prompt", name: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Unknown ${what}: ${JSON.stringify(name)}`);
}
