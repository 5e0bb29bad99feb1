/**
 * {@link AcpTunnelRouter}: the MCP-over-ACP tunnels of one ACP connection. It opens an
 * {@link AcpTunnelTransport} per server key (the draft's `acp:` url) and dispatches the incoming
 * envelopes to them by key.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import { AcpTunnelTransport, type AcpMessageLink, type TunnelSide } from "./acp-tunnel-transport.ts";
import { draftBinding, unknownServerError, type McpOverAcpBinding, type TunnelDirection } from "./mcp-over-acp.ts";

const incomingDirection = (side: TunnelSide): TunnelDirection => (side === "client" ? "server_to_client" : "client_to_server");

/** Where {@link AcpTunnelRouter.serve} registers its handlers. */
export interface TunnelHandlerHost {
  setRequestHandler(method: string, handler: (params: unknown, ctx: { signal: AbortSignal }) => unknown): void;
  setNotificationHandler(method: string, handler: (params: unknown) => unknown): void;
}

export interface AcpTunnelRouterOptions {
  link: AcpMessageLink;
  /** Default `client` (an agent). */
  side?: TunnelSide;
  binding?: McpOverAcpBinding;
  /** Passed to every tunnel. */
  outerTimeoutMs?: number;
}

/**
 * The tunnels of one ACP connection. Wire its two handlers to the connection for the binding's
 * methods (see {@link AcpTunnelRouter.accepts}); messages for a key with no open tunnel are
 * refused with `-32002` and `data.url`.
 */
export class AcpTunnelRouter {
  readonly side: TunnelSide;
  readonly binding: McpOverAcpBinding;
  private readonly link: AcpMessageLink;
  private readonly outerTimeoutMs: number | undefined;
  private readonly tunnels = new Map<string, AcpTunnelTransport>();
  private closed = false;

  constructor(options: AcpTunnelRouterOptions) {
    this.link = options.link;
    this.side = options.side ?? "client";
    this.binding = options.binding ?? draftBinding;
    this.outerTimeoutMs = options.outerTimeoutMs;
  }

  /** Opens the tunnel for a declared server key. Throws if one is open for it already. */
  open(key: string): AcpTunnelTransport {
    if (this.closed) throw new BridgeError("CLOSED", "MCP over ACP: the ACP connection is closed");
    if (this.tunnels.has(key)) throw new BridgeError("INVALID_STATE", `MCP over ACP: a tunnel for ${key} is already open; close it first`);
    const tunnel = new AcpTunnelTransport({
      key,
      link: this.link,
      side: this.side,
      binding: this.binding,
      outerTimeoutMs: this.outerTimeoutMs,
      onDetach: () => {
        if (this.tunnels.get(key) === tunnel) this.tunnels.delete(key);
      },
    });
    this.tunnels.set(key, tunnel);
    return tunnel;
  }

  get(key: string): AcpTunnelTransport | undefined {
    return this.tunnels.get(key);
  }

  /** Keys with an open tunnel. */
  keys(): string[] {
    return [...this.tunnels.keys()];
  }

  /** The incoming outer methods this router serves (the binding's, in its direction). */
  incomingMethods(): { request: string; notification: string } {
    return this.binding.methods(incomingDirection(this.side));
  }

  /**
   * Sets this router's handlers on an ACP connection (an `AcpAgentConnection` or a
   * `JsonRpcPeer`). A notification it refuses (unknown key, malformed) throws, which the
   * connection logs; there is nobody to answer.
   */
  serve(host: TunnelHandlerHost): void {
    const { request, notification } = this.incomingMethods();
    host.setRequestHandler(request, (params, ctx) => this.handleRequest(request, params, ctx.signal));
    host.setNotificationHandler(notification, (params) => this.handleNotification(notification, params));
  }

  /** Handles an incoming outer request; rejects with the `RpcError` to answer. */
  async handleRequest(method: string, params: unknown, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const env = this.binding.decode(method, params, { isRequest: true, direction: incomingDirection(this.side) });
    const tunnel = this.tunnels.get(env.key);
    if (!tunnel || env.kind !== "request") throw unknownServerError(method, env.key);
    return tunnel.receiveRequest(env.message, signal);
  }

  /** Handles an incoming outer notification; throws the `RpcError` that explains a refusal (to log). */
  handleNotification(method: string, params: unknown): void {
    const env = this.binding.decode(method, params, { isRequest: false, direction: incomingDirection(this.side) });
    const tunnel = this.tunnels.get(env.key);
    if (!tunnel || env.kind !== "notification") throw unknownServerError(method, env.key);
    tunnel.receiveNotification(env.message);
  }

  /** Closes every tunnel (the ACP connection ended); each `onclose` gets `reason`. */
  async close(reason?: Error): Promise<void> {
    this.closed = true;
    await Promise.all([...this.tunnels.values()].map((t) => t.shutdown(reason)));
    this.tunnels.clear();
  }
}
