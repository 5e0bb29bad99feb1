/**
 * A conductor: a process between an editor and an agent that speaks ACP to both, passes every
 * message through, and adds MCP servers of its own (providers) to each session over MCP over
 * ACP.
 *
 * - An agent whose `initialize` answer announces the binding's capability gets the `acp:`
 *   declarations as they are, and the `_mcp/*` envelopes are routed: `client_to_server` ones
 *   to the provider that owns the key (or to the editor, for keys the editor declared),
 *   `server_to_client` ones to the agent.
 * - An agent without it gets, for each `acp:` declaration, a stdio server that runs
 *   `mcp-bridge shim <port>`: before `session/new` goes on, the conductor binds a loopback
 *   listener with a one-time token (see `ShimListener`), and pipes the shim's connection into a
 *   client-side tunnel, so the provider cannot tell the two cases apart.
 * - Everything a session added is torn down when it closes (`session/close`, the agent or the
 *   editor going away). A shim or provider that fails is reported through `onEvent`; the
 *   session goes on without that server.
 */
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { JsonRpcParams } from "../jsonrpc/message.ts";
import { JsonRpcPeer, type RequestContext } from "../jsonrpc/peer.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import type { Transport } from "../transport/transport.ts";
import { AcpTunnelRouter } from "./acp-tunnel-router.ts";
import type { AcpMessageLink } from "./acp-tunnel-transport.ts";
import { forwardRequest, relayPeerOptions } from "./conductor-forward.ts";
import type { ConductorAgentCommand, ConductorEvent, ConductorOptions } from "./conductor-types.ts";
import { draftBinding, unknownServerError, type McpOverAcpBinding } from "./mcp-over-acp.ts";
import type { McpProvider } from "./mcp-provider.ts";
import { ShimBridge } from "./shim.ts";
import { ACP_METHODS } from "./types.ts";
import { isPlainObject as isObject } from "../util/object.ts";

export type { ConductorAgentCommand, ConductorEvent, ConductorOptions } from "./conductor-types.ts";

type Route = { kind: "provider"; provider: McpProvider } | { kind: "editor" };

/** What one session added: released together. */
interface SessionParts {
  routes: [string, Route][];
  bridges: ShimBridge[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * ```ts
 * const conductor = new Conductor({ agent: { command: "my-agent" }, providers: [provider] });
 * await conductor.start(new StdioServerTransport()); // the editor is on our stdin/stdout
 * await conductor.closed;
 * ```
 */
export class Conductor {
  /** Resolves once everything is torn down (after the editor or the agent went away, or `close()`). */
  readonly closed: Promise<void>;
  private readonly options: ConductorOptions;
  private readonly binding: McpOverAcpBinding;
  private readonly providers: McpProvider[];
  private editor: JsonRpcPeer | undefined;
  private agent: JsonRpcPeer | undefined;
  private agentTransport: Transport | undefined;
  private agentCapable = false;
  private readonly routes = new Map<string, Route>();
  private readonly bridges = new Map<string, ShimBridge>();
  private readonly bridgeRouter: AcpTunnelRouter;
  private readonly sessions = new Map<string, SessionParts>();
  private closing: Promise<void> | undefined;
  private markClosed!: () => void;

  constructor(options: ConductorOptions) {
    this.options = options;
    this.binding = options.binding ?? draftBinding;
    this.providers = options.providers ?? [];
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    // Shim connections act as the MCP client: what they send goes the client_to_server way.
    const towardServers: AcpMessageLink = {
      request: (method, params, o) => this.clientToServerRequest(method, params, o?.signal),
      notify: async (method, params) => this.clientToServerNotification(method, params),
    };
    this.bridgeRouter = new AcpTunnelRouter({ link: towardServers, side: "client", binding: this.binding });
    const towardClients: AcpMessageLink = {
      request: (method, params, o) => this.serverToClientRequest(method, params, o?.signal),
      notify: async (method, params) => this.serverToClientNotification(method, params),
    };
    for (const p of this.providers) p.attach(towardClients);
  }

  /** Process id of a spawned agent. */
  get agentPid(): number | undefined {
    return (this.agentTransport as { pid?: number } | undefined)?.pid;
  }

  /** Whether the agent announced the binding's capability in its `initialize` answer. */
  get agentSupportsMcpOverAcp(): boolean {
    return this.agentCapable;
  }

  /** Starts the agent, then serves the editor on `editor`. */
  async start(editor: Transport): Promise<void> {
    if (this.editor) throw new BridgeError("INVALID_STATE", "Conductor: start() called twice; make a new Conductor");
    const peerOptions = relayPeerOptions(this.options.requestTimeoutMs ?? DAY_MS);
    const a = this.options.agent;
    this.agentTransport = isTransport(a) ? a : new StdioClientTransport({
      command: a.command,
      args: a.args,
      cwd: a.cwd,
      env: a.env,
      inheritEnv: a.inheritEnv ?? true,
      name: "agent",
      onStderr: this.options.onAgentStderr,
      shutdownGraceMs: this.options.agentShutdownGraceMs,
    });
    const agent = new JsonRpcPeer(this.agentTransport, peerOptions);
    const ed = new JsonRpcPeer(editor, peerOptions);
    this.agent = agent;
    this.editor = ed;

    ed.fallbackRequestHandler = (method, params, ctx) => this.editorRequest(method, params, ctx);
    ed.fallbackNotificationHandler = (method, params) => this.editorNotification(method, params);
    // The peers act on `$/cancel_request` themselves (relayPeerOptions); it is never passed on
    // as it is, because the id it names is not the forwarded request's id on the other side.
    ed.setNotificationHandler(ACP_METHODS.cancelRequest, ignore);
    agent.fallbackRequestHandler = (method, params, ctx) => this.agentRequest(method, params, ctx);
    agent.fallbackNotificationHandler = (method, params) => this.agentNotification(method, params);
    agent.setNotificationHandler(ACP_METHODS.cancelRequest, ignore);
    agent.onclose = (reason) => {
      if (!this.closing) this.emit({ type: "agent-exited", reason: reason?.message });
      void this.close();
    };
    ed.onclose = () => void this.close();
    agent.onerror = (err) => this.emit({ type: "warning", message: `agent connection: ${errorMessage(err)}` });
    ed.onerror = (err) => this.emit({ type: "warning", message: `editor connection: ${errorMessage(err)}` });

    await agent.start();
    await ed.start();
  }

  /** Stops the agent, tears down every session's servers and ends the editor connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // The agent first: it closes its MCP servers (our shims among them) while we still listen.
      await this.agent?.close();
      await Promise.all([...this.sessions.keys()].map((id) => this.endSession(id)));
      await Promise.all([...this.bridges.values()].map((b) => b.close()));
      this.bridges.clear();
      await this.bridgeRouter.close();
      await Promise.all(this.providers.map((p) => p.close()));
      this.routes.clear();
      await this.editor?.close();
      this.markClosed();
    })();
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------
  // Editor -> conductor -> agent

  private async editorRequest(method: string, params: unknown, ctx: RequestContext): Promise<unknown> {
    switch (method) {
      case ACP_METHODS.initialize: {
        const result = await forwardRequest(this.agent!, method, params, ctx);
        const caps = (result as { agentCapabilities?: unknown } | null)?.agentCapabilities;
        this.agentCapable = this.binding.agentSupports(caps);
        this.emit({ type: "agent-capability", mcpOverAcp: this.agentCapable });
        // With the bridge, the pair of us serves an editor's acp: servers either way: say so.
        if (this.agentCapable || this.options.bridge === "never" || !isObject(result)) return result;
        return { ...result, agentCapabilities: this.binding.withCapability(caps) };
      }
      case ACP_METHODS.sessionNew:
      case ACP_METHODS.sessionLoad:
      case ACP_METHODS.sessionResume:
        return this.openSession(method, params, ctx);
      case ACP_METHODS.sessionClose: {
        const sessionId = (params as { sessionId?: unknown } | null | undefined)?.sessionId;
        try {
          return await forwardRequest(this.agent!, method, params, ctx);
        } finally {
          if (typeof sessionId === "string") await this.endSession(sessionId);
        }
      }
      default:
        // An editor may provide servers itself; its server_to_client envelopes go to the agent side.
        if (method === this.binding.methods("server_to_client").request) return this.serverToClientRequest(method, params, ctx.signal);
        return forwardRequest(this.agent!, method, params, ctx);
    }
  }

  private editorNotification(method: string, params: unknown): void {
    if (method === this.binding.methods("server_to_client").notification) return this.serverToClientNotification(method, params);
    this.agent?.notify(method, params as JsonRpcParams | undefined).catch(() => undefined);
  }

  /** `session/new`, `session/load`, `session/resume`: add our servers, bridge if needed, forward. */
  private async openSession(method: string, params: unknown, ctx: RequestContext): Promise<unknown> {
    const p = params as Record<string, unknown> | undefined;
    const listed = p?.mcpServers;
    // Nothing to add to (resume without servers keeps what the session had); the agent judges.
    if (!Array.isArray(listed)) return forwardRequest(this.agent!, method, params, ctx);
    const parts: SessionParts = { routes: [], bridges: [] };
    const useBridge = this.options.bridge === "always" || (this.options.bridge !== "never" && !this.agentCapable);
    try {
      const names = new Set(listed.map((s) => this.binding.serverName(s)));
      const servers: unknown[] = [];
      for (const entry of listed) {
        const key = this.binding.serverKey(entry);
        if (key === undefined) {
          servers.push(entry);
          continue;
        }
        this.addRoute(parts, key, { kind: "editor" });
        servers.push(useBridge ? await this.bridge(parts, key, this.binding.serverName(entry) ?? "acp") : entry);
      }
      for (const provider of this.providers) {
        if (names.has(provider.name)) {
          this.emit({ type: "warning", message: `provider "${provider.name}" not added: the session already has a server of that name` });
          continue;
        }
        const { key, declaration } = await provider.declare();
        this.addRoute(parts, key, { kind: "provider", provider });
        servers.push(useBridge ? await this.bridge(parts, key, provider.name) : declaration);
      }
      const result = await forwardRequest(this.agent!, method, { ...p, mcpServers: servers }, ctx);
      const sessionId = method === ACP_METHODS.sessionNew ? (result as { sessionId?: unknown } | null)?.sessionId : p?.sessionId;
      if (typeof sessionId !== "string") {
        await this.release(parts);
        return result;
      }
      const previous = this.sessions.get(sessionId);
      this.sessions.set(sessionId, parts);
      if (previous) await this.release(previous);
      return result;
    } catch (err) {
      await this.release(parts);
      throw err;
    }
  }

  private addRoute(parts: SessionParts, key: string, route: Route): void {
    this.routes.set(key, route);
    parts.routes.push([key, route]);
  }

  /** Binds a shim listener for `key`; returns the stdio declaration that replaces the `acp:` one. */
  private async bridge(parts: SessionParts, key: string, server: string): Promise<Record<string, unknown>> {
    // An editor that loads a session again may name the same acp: url: the new shim replaces the old.
    await this.bridges.get(key)?.close();
    const bridge = await ShimBridge.open({
      key,
      server,
      router: this.bridgeRouter,
      shimCommand: this.options.shimCommand,
      onEvent: (e) => this.emit(e),
    });
    this.bridges.set(key, bridge);
    parts.bridges.push(bridge);
    this.emit({ type: "bridge-listening", server, key, port: bridge.port });
    return bridge.declaration();
  }

  private async endSession(sessionId: string): Promise<void> {
    const parts = this.sessions.get(sessionId);
    if (!parts) return;
    this.sessions.delete(sessionId);
    await this.release(parts);
    this.emit({ type: "session-ended", sessionId });
  }

  private async release(parts: SessionParts): Promise<void> {
    await Promise.all(parts.bridges.map((b) => b.close()));
    for (const b of parts.bridges) if (this.bridges.get(b.key) === b) this.bridges.delete(b.key);
    for (const [key, route] of parts.routes) {
      // A later session (a load naming the same url) may have taken the key over.
      if (this.routes.get(key) === route) this.routes.delete(key);
      if (route.kind === "provider") await route.provider.release(key);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Agent -> conductor -> editor

  private agentRequest(method: string, params: unknown, ctx: RequestContext): Promise<unknown> {
    if (method === this.binding.methods("client_to_server").request) return this.clientToServerRequest(method, params, ctx.signal);
    return forwardRequest(this.editor!, method, params, ctx);
  }

  private agentNotification(method: string, params: unknown): void {
    if (method === this.binding.methods("client_to_server").notification) return this.clientToServerNotification(method, params);
    this.editor?.notify(method, params as JsonRpcParams | undefined).catch(() => undefined);
  }

  // -------------------------------------------------------------------------------------------
  // MCP over ACP routing

  private async clientToServerRequest(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    const { key } = this.binding.decode(method, params, { isRequest: true, direction: "client_to_server" });
    const route = this.routes.get(key);
    if (route?.kind === "provider") return route.provider.handleRequest(method, params, signal);
    if (route?.kind === "editor") return this.editor!.request(method, params as JsonRpcParams, { signal });
    throw unknownServerError(method, key);
  }

  private clientToServerNotification(method: string, params: unknown): void {
    try {
      const { key } = this.binding.decode(method, params, { isRequest: false, direction: "client_to_server" });
      const route = this.routes.get(key);
      if (route?.kind === "provider") return route.provider.handleNotification(method, params);
      if (route?.kind === "editor") return void this.editor!.notify(method, params as JsonRpcParams).catch(() => undefined);
      throw unknownServerError(method, key);
    } catch (err) {
      this.emit({ type: "warning", message: `dropped ${method}: ${errorMessage(err)}` });
    }
  }

  private async serverToClientRequest(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    const { key } = this.binding.decode(method, params, { isRequest: true, direction: "server_to_client" });
    if (this.bridges.has(key)) return this.bridgeRouter.handleRequest(method, params, signal);
    if (this.routes.has(key)) return this.agent!.request(method, params as JsonRpcParams, { signal });
    throw unknownServerError(method, key);
  }

  private serverToClientNotification(method: string, params: unknown): void {
    try {
      const { key } = this.binding.decode(method, params, { isRequest: false, direction: "server_to_client" });
      if (this.bridges.has(key)) return this.bridgeRouter.handleNotification(method, params);
      if (this.routes.has(key)) return void this.agent!.notify(method, params as JsonRpcParams).catch(() => undefined);
      throw unknownServerError(method, key);
    } catch (err) {
      this.emit({ type: "warning", message: `dropped ${method}: ${errorMessage(err)}` });
    }
  }

  // -------------------------------------------------------------------------------------------

  private emit(event: ConductorEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // A listener's failure is not the conductor's.
    }
  }
}

function ignore(): void {}

function isTransport(agent: ConductorAgentCommand | Transport): agent is Transport {
  return typeof (agent as Transport).send === "function";
}

