/**
 * The provider side of MCP over ACP: a component that owns an MCP server (our `McpServer`)
 * and offers it to an agent through the ACP connection instead of a process or a URL.
 *
 * For each ACP session it {@link McpProvider.declare declares} the server under a fresh,
 * unguessable key (the draft's `acp:<uuid>` url); a conductor adds that declaration to the
 * session's `mcpServers`. Envelopes whose key it owns are answered here; everything else is
 * the caller's to forward. The server's own callbacks (sampling, elicitation, roots, logging,
 * progress, list changes) leave as `server_to_client` envelopes through the link set with
 * {@link McpProvider.attach}.
 *
 * The provider talks to its host only in ACP envelopes (`handleRequest`, `handleNotification`
 * in; the {@link AcpMessageLink} out), so the same object can run in a conductor's process, or
 * in a process of its own behind a `JsonRpcPeer` whose handlers call these methods.
 */
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { McpServer, ServerSession } from "../mcp/server.ts";
import { McpMethod } from "../mcp/types.ts";
import { AcpTunnelRouter, type TunnelHandlerHost } from "./acp-tunnel-router.ts";
import type { AcpMessageLink, AcpTunnelTransport } from "./acp-tunnel-transport.ts";
import { draftBinding, unknownServerError, type McpOverAcpBinding } from "./mcp-over-acp.ts";

export interface McpProviderOptions {
  /** The server's name in `mcpServers` (and so in bridged tool names: `mcp__<name>__<tool>`). */
  name: string;
  /** The MCP server offered; each declaration gets its own session on it. */
  server: McpServer;
  /** Default {@link draftBinding}. */
  binding?: McpOverAcpBinding;
  /** Time cap of one outer request the server sends (sampling, ...), ms. */
  outerTimeoutMs?: number;
  /** Failures that do not stop the provider (a session that could not start, ...). */
  onerror?: (error: Error) => void;
}

/** What {@link McpProvider.declare} returns. */
export interface ProviderDeclaration {
  /** The routing key (draft: the `acp:` url). */
  key: string;
  /** The `mcpServers` element to add to `session/new`. */
  declaration: Record<string, unknown>;
}

interface Declared {
  tunnel: AcpTunnelTransport;
  session: ServerSession | undefined;
  /** An `initialize` went through: a second one starts a fresh MCP session. */
  initialized: boolean;
}

/**
 * ```ts
 * const provider = new McpProvider({ name: "tools", server: myMcpServer });
 * provider.attach(towardTheAgent);                       // where server_to_client envelopes go
 * const { key, declaration } = await provider.declare(); // add declaration to mcpServers
 * // for each _mcp/client_to_server/* envelope: provider.owns(keyOf(params)) ? provider.handle...(...) : forward
 * await provider.release(key);                           // at session end
 * ```
 */
export class McpProvider {
  readonly name: string;
  readonly binding: McpOverAcpBinding;
  private readonly server: McpServer;
  private readonly options: McpProviderOptions;
  private router: AcpTunnelRouter | undefined;
  private readonly declared = new Map<string, Declared>();
  private closed = false;

  constructor(options: McpProviderOptions) {
    this.name = options.name;
    this.server = options.server;
    this.binding = options.binding ?? draftBinding;
    this.options = options;
  }

  /** Sets the link `server_to_client` envelopes are sent on. Call once, before {@link declare}. */
  attach(link: AcpMessageLink): void {
    if (this.router) throw new BridgeError("INVALID_STATE", `provider "${this.name}": attach() called twice`);
    this.router = new AcpTunnelRouter({ link, side: "server", binding: this.binding, outerTimeoutMs: this.options.outerTimeoutMs });
  }

  /**
   * Answers this provider's envelopes on an ACP connection of its own (a provider running as a
   * separate process, or a test): sets the `client_to_server` handlers on `host`.
   */
  serve(host: TunnelHandlerHost): void {
    const { request, notification } = this.binding.methods("client_to_server");
    host.setRequestHandler(request, (params, ctx) => this.handleRequest(request, params, ctx.signal));
    host.setNotificationHandler(notification, (params) => this.handleNotification(notification, params));
  }

  /** Keys currently declared. */
  keys(): string[] {
    return [...this.declared.keys()];
  }

  /** Whether this provider answers envelopes for `key`. */
  owns(key: string): boolean {
    return this.declared.has(key);
  }

  /** Declares the server for one more session; its MCP session waits for `initialize`. */
  async declare(): Promise<ProviderDeclaration> {
    if (this.closed) throw new BridgeError("CLOSED", `provider "${this.name}" is closed`);
    const key = this.binding.newServerKey();
    await this.open(key);
    return { key, declaration: this.binding.declaration(this.name, key) };
  }

  /** Answers a `client_to_server` request envelope for a key this provider owns. */
  async handleRequest(method: string, params: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const env = this.binding.decode(method, params, { isRequest: true, direction: "client_to_server" });
    if (env.kind !== "request") throw unknownServerError(method, env.key);
    let entry = this.declared.get(env.key);
    if (!entry) throw unknownServerError(method, env.key);
    if (env.message.method === McpMethod.Initialize) {
      // The draft has no connect message: an agent that reconnects (a restarted client) simply
      // initializes again, which an MCP session refuses. Start it a fresh session instead.
      if (entry.initialized) entry = await this.reopen(env.key);
      entry.initialized = true;
    }
    return entry.tunnel.receiveRequest(env.message, signal);
  }

  /** Delivers a `client_to_server` notification envelope; throws the `RpcError` of a refusal. */
  handleNotification(method: string, params: unknown): void {
    const env = this.binding.decode(method, params, { isRequest: false, direction: "client_to_server" });
    const entry = this.declared.get(env.key);
    if (!entry || env.kind !== "notification") throw unknownServerError(method, env.key);
    entry.tunnel.receiveNotification(env.message);
  }

  /** Ends the MCP session behind `key` (the ACP session ended). Unknown keys are ignored. */
  async release(key: string): Promise<void> {
    const entry = this.declared.get(key);
    if (!entry) return;
    this.declared.delete(key);
    await this.closeEntry(entry);
  }

  /** Releases every key. The server itself belongs to the caller and stays open. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.declared.values()];
    this.declared.clear();
    await Promise.all(entries.map((e) => this.closeEntry(e)));
  }

  private async open(key: string): Promise<Declared> {
    const router = this.router;
    if (!router) throw new BridgeError("INVALID_STATE", `provider "${this.name}": attach() a link before declaring`);
    const tunnel = router.open(key);
    const entry: Declared = { tunnel, session: undefined, initialized: false };
    this.declared.set(key, entry);
    tunnel.onerror = (err) => this.report(err);
    try {
      entry.session = await this.server.connect(tunnel);
    } catch (err) {
      this.declared.delete(key);
      await tunnel.close();
      throw err;
    }
    return entry;
  }

  private async reopen(key: string): Promise<Declared> {
    const old = this.declared.get(key);
    this.declared.delete(key);
    if (old) await this.closeEntry(old);
    return this.open(key);
  }

  private async closeEntry(entry: Declared): Promise<void> {
    try {
      if (entry.session) await entry.session.close();
    } catch (err) {
      // Plain: a report for the log, the session's own error as the cause (it has the code).
      this.report(new Error(`provider "${this.name}": closing an MCP session failed: ${errorMessage(err)}`, { cause: err }));
    }
    await entry.tunnel.close();
  }

  private report(err: Error): void {
    this.options.onerror?.(err);
  }
}
