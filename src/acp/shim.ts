/**
 * The stdio-to-TCP shim of MCP over ACP, both ends.
 *
 * An agent without MCP-over-ACP support only knows stdio (and HTTP) servers. For such an agent
 * the conductor rewrites an `acp:` declaration into a stdio server that runs
 * `mcp-bridge shim <port>`: {@link runShim} pipes the agent's ndjson to a loopback TCP socket,
 * and the conductor's {@link ShimListener} takes it from there.
 *
 * Any local process can connect to a loopback port, so the connection is authenticated: the
 * conductor makes a one-time token per listener, passes it to the shim in the environment
 * ({@link SHIM_TOKEN_ENV}; never on the command line, which `ps` shows), and the shim sends it
 * as its first line, `{"token": "<hex>"}`. The listener compares it in constant time, accepts
 * exactly one connection that carries it, answers it with one line, {@link SHIM_ACCEPTED}, and
 * then stops listening. A connection without the right token is closed without an answer, so
 * a shim tells a refusal (closed before the acknowledgement) from a normal end.
 *
 * {@link ShimBridge} is the conductor's whole end of one shim: listener, declaration, and the
 * pipe from the accepted connection into an MCP-over-ACP tunnel.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../jsonrpc/message.ts";
import { StdioServerTransport } from "../transport/stdio-server.ts";
import { readFirstLine, TcpClientTransport, TcpTransport } from "../transport/tcp.ts";
import { nodeCommand } from "../util/node-command.ts";
import type { AcpTunnelRouter } from "./acp-tunnel-router.ts";
import type { AcpTunnelTransport } from "./acp-tunnel-transport.ts";

/** The environment variable that carries the shim's one-time token. */
export const SHIM_TOKEN_ENV = "MCP_BRIDGE_SHIM_TOKEN";

/** The listener's first line to a shim whose token it accepted; nothing else comes before it. */
export const SHIM_ACCEPTED = { accepted: true } as const;

/** Largest greeting line accepted before authentication, bytes. */
const MAX_GREETING_BYTES = 512;

export interface ShimOptions {
  port: number;
  /** Default `127.0.0.1`. */
  host?: string;
  token: string;
  /** Default `process.stdin` / `process.stdout`. */
  stdin?: Readable;
  stdout?: Writable;
  /** Connect attempts in total. Default 8 (about 3 s of backoff). */
  connectAttempts?: number;
  /** Diagnostics (the CLI writes them to stderr). */
  log?: (line: string) => void;
}

/**
 * Runs the shim until either side ends; resolves with an exit code: 0 for a normal end (stdin
 * closed, or the conductor closed the connection after accepting the token), 1 when the
 * connection could not be made, was refused (wrong or used token) or failed.
 */
export async function runShim(options: ShimOptions): Promise<number> {
  const log = options.log ?? (() => undefined);
  const tcp = new TcpClientTransport({
    host: options.host ?? "127.0.0.1",
    port: options.port,
    connectAttempts: options.connectAttempts,
    greeting: { token: options.token },
  });
  const stdio = new StdioServerTransport({ stdin: options.stdin, stdout: options.stdout });
  let failure: Error | undefined;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });

  let accepted = false;
  let stdinEnded = false;
  tcp.onmessage = (m) => {
    if (!accepted) {
      accepted = isAcceptance(m);
      if (!accepted) {
        failure = new BridgeError("INVALID_MESSAGE", `the other end of port ${options.port} did not accept the token the way a conductor does; is it a conductor's port?`);
        void tcp.close();
      }
      return;
    }
    stdio.send(m as JsonRpcMessage).catch((err: unknown) => log(`writing to stdout failed: ${errorMessage(err)}`));
  };
  tcp.onerror = (err) => log(`dropped a line from the conductor: ${err.message}`);
  tcp.onclose = (reason) => {
    if (!accepted && !stdinEnded) {
      // Any end before the acceptance line is a refusal, a reset included: a listener that
      // drops the socket while lines we sent after the greeting are still unread resets it.
      const how = reason ? ` (${reason.message})` : "";
      failure ??= new BridgeError("CLOSED", `the conductor refused this shim's token (wrong, or already used): it closed the connection without accepting it${how}`);
    }
    if (reason) failure ??= reason;
    log(failure ? `connection to the conductor failed: ${failure.message}` : "the conductor closed the connection");
    void stdio.close().then(finish);
  };
  stdio.onmessage = (m) => {
    tcp.send(m as JsonRpcMessage).catch((err: unknown) => log(`forwarding to the conductor failed: ${errorMessage(err)}`));
  };
  stdio.onerror = (err) => log(`dropped a line from stdin: ${err.message}`);
  stdio.onclose = () => {
    stdinEnded = true;
    void tcp.close().then(finish);
  };

  try {
    await tcp.start();
  } catch (err) {
    log(`cannot reach the conductor: ${errorMessage(err)}`);
    return 1;
  }
  await stdio.start();
  await done;
  await Promise.all([tcp.close(), stdio.close()]);
  return failure ? 1 : 0;
}

export interface ShimListenerOptions {
  /** Time a new connection has to send its greeting, ms. Default 5000. */
  greetingTimeoutMs?: number;
  /** Unauthenticated connections held at once; more are closed at once. Default 4. */
  maxPendingConnections?: number;
  /** Passed to the accepted connection's transport. Default 32 MiB. */
  maxLineBytes?: number;
  /** A connection was refused (wrong or missing token, too slow, token already used). */
  onRefused?: (reason: string) => void;
}

/**
 * Listens on `127.0.0.1:<ephemeral>` for the one shim that holds its token.
 *
 * ```ts
 * const listener = await ShimListener.open();
 * listener.onconnection = (transport) => pipe(transport);
 * // declare: command `mcp-bridge shim ${listener.port}`, env { [SHIM_TOKEN_ENV]: listener.token }
 * ```
 */
export class ShimListener {
  /** Called once, with the authenticated connection (not yet started). */
  onconnection?: (transport: TcpTransport) => void;
  readonly port: number;
  /** The one-time token (64 hex characters). Give it to the shim only. */
  readonly token: string;
  private readonly server: Server;
  private readonly options: ShimListenerOptions;
  private readonly expected: Buffer;
  private readonly pending = new Set<Socket>();
  private used = false;
  private closing: Promise<void> | undefined;

  private constructor(server: Server, port: number, token: string, options: ShimListenerOptions) {
    this.server = server;
    this.port = port;
    this.token = token;
    this.options = options;
    this.expected = digest(token);
  }

  /** Binds a fresh listener on loopback, port 0. */
  static async open(options: ShimListenerOptions = {}): Promise<ShimListener> {
    const server = createServer({ pauseOnConnect: false });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: "127.0.0.1", port: 0, exclusive: true }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === "string") {
      server.close();
      // Plain: Node gives a TCP listener an address object; this is not a state a caller can cause.
      throw new Error("shim listener: no TCP address after listen");
    }
    const listener = new ShimListener(server, address.port, randomBytes(32).toString("hex"), options);
    server.on("connection", (socket) => listener.accept(socket));
    server.on("error", (err) => listener.refuse(`listener error: ${errorMessage(err)}`));
    return listener;
  }

  /** True once the shim connected with the token. */
  get accepted(): boolean {
    return this.used;
  }

  /** The environment entry the shim needs. */
  env(): Record<string, string> {
    return { [SHIM_TOKEN_ENV]: this.token };
  }

  /** Stops listening and drops connections still authenticating. The accepted one is the caller's. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const socket of this.pending) socket.destroy();
      this.pending.clear();
      // Stops listening at once. Its callback would wait for the accepted connection too,
      // which is the caller's to close, so it is not awaited.
      this.server.close(() => undefined);
    })();
    return this.closing;
  }

  private accept(socket: Socket): void {
    const max = this.options.maxPendingConnections ?? 4;
    if (this.used || this.closing || this.pending.size >= max) {
      socket.destroy();
      this.refuse(this.used ? "the token was already used" : "too many connections waiting to authenticate");
      return;
    }
    socket.on("error", () => undefined);
    this.pending.add(socket);
    readFirstLine(socket, { maxBytes: MAX_GREETING_BYTES, timeoutMs: this.options.greetingTimeoutMs ?? 5000 }).then(
      ({ line, rest }) => {
        this.pending.delete(socket);
        const problem = this.used ? "the token was already used" : this.closing ? "listener closed" : this.check(line);
        if (problem !== undefined) {
          socket.destroy();
          this.refuse(problem);
          return;
        }
        this.used = true;
        void this.close();
        // Before the transport exists, so it is the first line the shim reads.
        socket.write(`${JSON.stringify(SHIM_ACCEPTED)}\n`);
        const transport = new TcpTransport(socket, { initialData: rest, maxLineBytes: this.options.maxLineBytes, name: `shim on port ${this.port}` });
        if (this.onconnection) this.onconnection(transport);
        else socket.destroy();
      },
      (err: unknown) => {
        this.pending.delete(socket);
        socket.destroy();
        this.refuse(errorMessage(err));
      },
    );
  }

  /** Undefined when the greeting carries the token; else why not (never echoing what was sent). */
  private check(line: string): string | undefined {
    let token: unknown;
    try {
      token = (JSON.parse(line) as { token?: unknown } | null)?.token;
    } catch {
      return "the greeting is not JSON";
    }
    if (typeof token !== "string") return "the greeting has no token";
    // Hashing first makes the comparison constant-time whatever the lengths.
    return timingSafeEqual(digest(token), this.expected) ? undefined : "wrong token";
  }

  private refuse(reason: string): void {
    this.options.onRefused?.(reason);
  }
}

function isAcceptance(message: unknown): boolean {
  return typeof message === "object" && message !== null && (message as { accepted?: unknown }).accepted === true;
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * The command line that runs `mcp-bridge shim <port>` with this very Node: from a source
 * checkout, `node src/cli/main.ts` (with `--import tsx` on a Node that cannot strip types);
 * from a build, `node dist/src/cli/main.js`.
 */
export function defaultShimCommand(port: number): { command: string; args: string[] } {
  return nodeCommand(import.meta.url, "../cli/main", ["shim", String(port)]);
}

/** A shim's command line for a port. */
export type ShimCommand = (port: number) => { command: string; args: string[] };

/** What a {@link ShimBridge} reports. */
export type ShimBridgeEvent =
  | { type: "shim-connected"; server: string; key: string; port: number }
  | { type: "shim-refused"; server: string; port: number; reason: string }
  | { type: "shim-closed"; server: string; key: string; reason?: string }
  | { type: "warning"; message: string };

export interface ShimBridgeOptions {
  /** The server key (the `acp:` url) the shim stands for. */
  key: string;
  /** The server name, for the declaration and for reports. */
  server: string;
  /** The conductor's client-side router: the shim's messages enter the tunnel it opens for `key`. */
  router: AcpTunnelRouter;
  /** Default {@link defaultShimCommand}. */
  shimCommand?: ShimCommand;
  onEvent?: (event: ShimBridgeEvent) => void;
  listener?: Omit<ShimListenerOptions, "onRefused">;
}

/**
 * The conductor's end of one shim: a {@link ShimListener}, and once the shim is in, a pipe
 * between its TCP connection and a client-side tunnel. The shim's process belongs to the
 * agent; closing the connection here is what makes a shim whose agent is gone exit.
 */
export class ShimBridge {
  readonly key: string;
  readonly server: string;
  private readonly listener: ShimListener;
  private readonly options: ShimBridgeOptions;
  private tcp: TcpTransport | undefined;
  private tunnel: AcpTunnelTransport | undefined;
  private closing: Promise<void> | undefined;

  private constructor(listener: ShimListener, options: ShimBridgeOptions) {
    this.listener = listener;
    this.options = options;
    this.key = options.key;
    this.server = options.server;
    listener.onconnection = (tcp) => void this.connected(tcp);
  }

  /** Binds the listener. */
  static async open(options: ShimBridgeOptions): Promise<ShimBridge> {
    let bridge: ShimBridge | undefined;
    const listener = await ShimListener.open({
      ...options.listener,
      onRefused: (reason) => bridge?.emit({ type: "shim-refused", server: options.server, port: listener.port, reason }),
    });
    bridge = new ShimBridge(listener, options);
    return bridge;
  }

  get port(): number {
    return this.listener.port;
  }

  /** The stdio `mcpServers` element (ACP v1 shape) that runs the shim with its token. */
  declaration(): Record<string, unknown> {
    const { command, args } = (this.options.shimCommand ?? defaultShimCommand)(this.port);
    return { name: this.server, command, args, env: [{ name: SHIM_TOKEN_ENV, value: this.listener.token }] };
  }

  /** Stops listening and closes the shim's connection (the shim then exits). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.listener.close();
      await Promise.all([this.tcp?.close(), this.tunnel?.close()]);
    })();
    return this.closing;
  }

  private async connected(tcp: TcpTransport): Promise<void> {
    if (this.closing) {
      await tcp.close();
      return;
    }
    let tunnel: AcpTunnelTransport;
    try {
      tunnel = this.options.router.open(this.key);
    } catch (err) {
      // The conductor is shutting down (its router is closed).
      this.emit({ type: "warning", message: `shim for "${this.server}" arrived too late: ${errorMessage(err)}` });
      await tcp.close();
      return;
    }
    this.tcp = tcp;
    this.tunnel = tunnel;
    tcp.onmessage = (m) => {
      tunnel.send(m as JsonRpcMessage).catch((err: unknown) => this.emit({ type: "warning", message: `shim for "${this.server}": ${errorMessage(err)}` }));
    };
    tcp.onerror = (err) => this.emit({ type: "warning", message: `shim for "${this.server}" sent a bad line: ${err.message}` });
    tcp.onclose = (reason) => {
      if (!this.closing) this.emit({ type: "shim-closed", server: this.server, key: this.key, reason: reason?.message });
      void tunnel.close();
    };
    tunnel.onmessage = (m) => {
      tcp.send(m as JsonRpcMessage).catch(() => undefined);
    };
    tunnel.onclose = () => void tcp.close();
    await tunnel.start();
    await tcp.start();
    this.emit({ type: "shim-connected", server: this.server, key: this.key, port: this.port });
  }

  private emit(event: ShimBridgeEvent): void {
    this.options.onEvent?.(event);
  }
}
