/**
 * McpManager as a provider: the manager's servers become the upstreams an McpServer serves.
 * Tools keep the manager's bridged names (`mcp__<server>__<tool>`) and go through everything
 * the manager applies (its policy, approval, rate limits, result limits, redaction, untrusted
 * marking, restarts); prompts get names by the same rules (`mcp__<server>__<prompt>`) and
 * resource URIs go under the server's name (`mcp-bridge://<server>/<uri>`,
 * docs/decisions.md 126). The manager is imported as a type only: serving from a manager
 * loads nothing a program that made one has not loaded already.
 */
import { ToolNamer, UriNamespaces } from "../bridge/naming.ts";
import type { BridgedContent, BridgedResult } from "../bridge/types.ts";
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { McpManager } from "../manager/manager.ts";
import type { CallForwarding } from "./forwarding.ts";
import type { ServerProvider, ProviderListener, ServingContext } from "../mcp/provider-types.ts";
import type { CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool } from "../mcp/types.ts";

/** Options of {@link ManagerProvider}. */
export interface ManagerProviderOptions {
  /**
   * Routes what an upstream asks during a call (sampling, elicitation, roots) to the
   * downstream client of that call; give the manager its `clientFeatures`. Without it such
   * requests get whatever the manager's own `clientFeatures` answer.
   */
  forwarding?: CallForwarding;
  /**
   * Default true. False serves a manager of exactly one server under that server's own names:
   * prompts and resource URIs as it gives them (give the manager a `naming` that keeps tool
   * names too), as a proxy in front of one server does (docs/decisions.md 141).
   */
  namespaced?: boolean;
}

/**
 * ```ts
 * const manager = new McpManager();
 * await manager.connect(configs);
 * const server = new McpServer({ name: "gateway", version: "1.0.0" }, { providers: [new ManagerProvider(manager)] });
 * ```
 */
export class ManagerProvider implements ServerProvider {
  private readonly manager: McpManager;
  private readonly prompts = new ToolNamer();
  private readonly uris = new UriNamespaces();
  /** Bridged tool name -> its server, as last listed: to put the URIs its results hold under that server. */
  private serverOfTool = new Map<string, string>();
  private readonly forwarding: CallForwarding | undefined;
  private readonly namespaced: boolean;

  constructor(manager: McpManager, options: ManagerProviderOptions = {}) {
    this.manager = manager;
    this.forwarding = options.forwarding;
    this.namespaced = options.namespaced ?? true;
  }

  /** A URI of `server` as the client sees it. */
  private wrapUri(server: string, uri: string): string {
    return this.namespaced ? this.uris.wrap(server, uri) : uri;
  }

  /** The server and its own URI behind a URI the client gave. */
  private unwrapUri(uri: string): { namespace: string; uri: string } | undefined {
    return this.namespaced ? this.uris.unwrap(uri) : { namespace: this.soleServer(), uri };
  }

  /** The server and its own name behind a prompt name the client gave. */
  private async promptRef(name: string): Promise<{ server: string; tool: string } | undefined> {
    if (!this.namespaced) return { server: this.soleServer(), tool: name };
    return this.prompts.resolve(name) ?? (await this.listPrompts(), this.prompts.resolve(name));
  }

  /** The one server of an unnamespaced provider; -32603 when the manager has another count. */
  private soleServer(): string {
    const servers = this.manager.status();
    if (servers.length !== 1) throw new RpcError(ErrorCode.InternalError, `a ManagerProvider with namespaced: false serves exactly one server; its manager has ${servers.length}`);
    return servers[0]!.name;
  }

  /** Runs `work` as `ctx`'s call on `server` (see {@link CallForwarding.during}), or as it is without forwarding. */
  private during<T>(server: string | undefined, ctx: ServingContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.forwarding === undefined || server === undefined) return work(ctx.signal);
    return this.forwarding.during(server, ctx, work);
  }

  async listTools(): Promise<Tool[]> {
    const tools = await this.manager.tools();
    this.serverOfTool = new Map(tools.map((t) => [t.name, t.server]));
    return tools.map((t) => {
      const tool: Tool = { name: t.name, title: t.title, inputSchema: t.inputSchema };
      if (t.description !== undefined) tool.description = t.description;
      if (t.outputSchema !== undefined) tool.outputSchema = t.outputSchema;
      if (t.annotations !== undefined) tool.annotations = t.annotations;
      return tool;
    });
  }

  /** The manager's call: never throws; refusals and upstream failures are `isError` results. */
  async callTool(name: string, args: Record<string, unknown>, ctx: ServingContext): Promise<CallToolResult> {
    const onProgress = ctx.progressToken === undefined ? undefined : (p: { progress: number; total?: number; message?: string }) => void ctx.sendProgress(p.progress, p.total, p.message);
    const server = this.serverOfTool.get(name) ?? (await this.listTools(), this.serverOfTool.get(name));
    const result = callToolResultOf(await this.during(server, ctx, (signal) => this.manager.callTool(name, args, { signal, onProgress })));
    // Resource links and embedded resources name the upstream's URIs: give the client the
    // gateway's, which it can read back (docs/decisions.md 126).
    if (server !== undefined) result.content = result.content.map((block) => this.wrapBlock(server, block));
    return result;
  }

  /** A content block with its resource URI under `server` (other blocks as they are). */
  private wrapBlock(server: string, block: ContentBlock): ContentBlock {
    if (!this.namespaced) return block;
    if (block.type === "resource_link") return { ...block, uri: this.uris.wrap(server, block.uri) };
    if (block.type === "resource") return { ...block, resource: { ...block.resource, uri: this.uris.wrap(server, block.resource.uri) } };
    return block;
  }

  async listPrompts(): Promise<Prompt[]> {
    const byServer = new Map<string, Prompt[]>();
    for (const { server, ...prompt } of await this.manager.listPrompts()) {
      byServer.set(server, [...(byServer.get(server) ?? []), prompt]);
    }
    const out: Prompt[] = [];
    if (!this.namespaced) return [...byServer.values()].flat();
    for (const [server, prompts] of byServer) {
      const names = this.prompts.assign(server, prompts);
      for (const p of prompts) out.push({ ...p, name: names.get(p.name)! });
    }
    return out;
  }

  async getPrompt(name: string, args: Record<string, string>, ctx: ServingContext): Promise<GetPromptResult> {
    const ref = await this.promptRef(name);
    if (ref === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${JSON.stringify(name)}`);
    return this.during(ref.server, ctx, (signal) => this.manager.getPrompt(ref.server, ref.tool, args, { signal }));
  }

  async listResources(): Promise<Resource[]> {
    return (await this.manager.listResources()).map(({ server, ...r }) => ({ ...r, uri: this.wrapUri(server, r.uri) }));
  }

  async readResource(uri: string, ctx: ServingContext): Promise<ReadResourceResult> {
    const ref = this.unwrapUri(uri);
    if (ref === undefined) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    const result = await this.during(ref.namespace, ctx, (signal) => this.manager.readResource(ref.namespace, ref.uri, { signal }));
    return { ...result, contents: result.contents.map((c) => ({ ...c, uri: this.wrapUri(ref.namespace, c.uri) })) };
  }

  /** Completion of an upstream's prompt argument (or resource template variable), asked of that server. */
  async complete(params: CompleteRequestParams, ctx: ServingContext): Promise<CompleteResult> {
    const ref = params.ref;
    if (ref.type === "ref/prompt") {
      const target = await this.promptRef(ref.name);
      if (target === undefined) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${JSON.stringify(ref.name)}`);
      return this.manager.complete(target.server, { ...params, ref: { ...ref, name: target.tool } }, { signal: ctx.signal });
    }
    const target = this.unwrapUri(ref.uri);
    if (target === undefined) throw new RpcError(ErrorCode.InvalidParams, `completion/complete: unknown reference ${JSON.stringify(ref)}`);
    return this.manager.complete(target.namespace, { ...params, ref: { ...ref, uri: target.uri } }, { signal: ctx.signal });
  }

  /**
   * Tool changes as the manager reports them (it lists the tools afresh first, and reports
   * only a real change); prompts and resources when an upstream says they changed, or
   * whenever one becomes ready or stops being so. The server then sends its own
   * `list_changed` to its clients, never the upstream's notification.
   */
  subscribe(listener: ProviderListener): () => void {
    const ends = [
      this.manager.on("toolsChanged", () => listener.listChanged("tools")),
      this.manager.on("listChanged", (change) => listener.listChanged(change.list)),
      // An upstream's log messages during a call go to that call's client (gateway/forwarding.ts).
      this.manager.on("log", (entry) => this.forwarding?.relayLog(entry)),
      this.manager.on("state", (change) => {
        if (change.to !== "ready" && change.from !== "ready") return;
        listener.listChanged("prompts");
        listener.listChanged("resources");
      }),
    ];
    return () => {
      for (const end of ends) end();
    };
  }
}

/** A bridged result back in MCP's shape: its parts as content blocks, `structured` as `structuredContent`. */
export function callToolResultOf(result: BridgedResult): CallToolResult {
  const out: CallToolResult = { content: result.content.map(contentBlockOf) };
  if (result.structured !== undefined) out.structuredContent = result.structured;
  if (result.isError) out.isError = true;
  return out;
}

function contentBlockOf(part: BridgedContent): ContentBlock {
  switch (part.type) {
    case "text": {
      const { origin: _origin, ...block } = part;
      return block;
    }
    case "resource_text": {
      const { type: _type, annotations, ...resource } = part;
      return annotations === undefined ? { type: "resource", resource } : { type: "resource", resource, annotations };
    }
    case "resource_blob": {
      const { type: _type, annotations, ...resource } = part;
      return annotations === undefined ? { type: "resource", resource } : { type: "resource", resource, annotations };
    }
    default:
      return part;
  }
}
