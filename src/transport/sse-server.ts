/**
 * The legacy HTTP+SSE server (MCP 2024-11-05), for clients that predate Streamable HTTP.
 *
 * `GET <ssePath>` opens a session: the stream's first event is `endpoint`, whose data is the
 * URI to POST messages to (`<messagesPath>?sessionId=<id>`). Each POST answers 202 `Accepted`;
 * every server message, responses included, goes on the stream as an `event: message`. The
 * session ends when the stream closes (either side). The same Host/Origin/bearer checks and
 * body limits as the Streamable HTTP server apply.
 *
 * ```ts
 * const legacy = new SseServer({ onSession: (t) => mcp.connect(t) });
 * const { url } = await legacy.listen(3101); // http://127.0.0.1:3101/sse
 * ```
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../jsonrpc/message.ts";
import { formatSseEvent } from "../jsonrpc/sse.ts";
import {
  acceptsEventStream,
  HTTP_REFUSAL_CODE,
  HttpGuard,
  isJsonContentType,
  sendRpcError,
  SSE_KEEP_ALIVE,
  startEventStream,
  writeBounded,
} from "./http-guard.ts";
import type { Transport } from "./transport.ts";

export interface SseServerOptions {
  /** Called once per stream with its transport: `(t) => mcpServer.connect(t)`. A throw answers 500. */
  onSession: (transport: Transport, info: { sessionId: string | undefined }) => Promise<unknown> | unknown;
  /** Path of the GET stream. Default `"/sse"`. */
  ssePath?: string;
  /** Path messages are POSTed to. Default `"/messages"`. */
  messagesPath?: string;
  /** See `HttpGuardOptions.allowedOrigins`. */
  allowedOrigins?: readonly string[];
  /** See `HttpGuardOptions.allowedHosts`. */
  allowedHosts?: readonly string[];
  /** Largest POST body, bytes (413 beyond). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Time allowed for a whole POST body, ms (408 after). Default 30 000. */
  bodyTimeoutMs?: number;
  /** Streams at once; beyond gets 503. Default 1000. */
  maxSessions?: number;
  /** Static token every request must carry as `Authorization: Bearer <token>` (else 401). */
  bearerToken?: string;
  /** Interval of keep-alive comments, ms. Default 15 000. */
  keepAliveMs?: number;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** A client that stops reading is cut off once this much is queued. */
const MAX_BUFFERED = 8 * 1024 * 1024;

/** One legacy session: its messages go out as `message` events on the GET stream. */
export class SseSessionTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private started = false;
  private closing: Promise<void> | undefined;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  /** Events sent before the stream opened (the endpoint event must come first). */
  private early: string[] | undefined = [];

  constructor(
    readonly sessionId: string,
    private readonly res: ServerResponse,
    private readonly onEnd: () => void,
  ) {}

  /** True once `start()` was called (the MCP server connected). */
  get connected(): boolean {
    return this.started;
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error("SseSessionTransport: start() called twice"));
    this.started = true;
    return Promise.resolve();
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.closing) return Promise.reject(new BridgeError("CLOSED", `SSE session ${this.sessionId} is closed`));
    const event = formatSseEvent({ event: "message", data: JSON.stringify(message) });
    if (this.early) this.early.push(event);
    else this.write(event);
    return Promise.resolve();
  }

  /** Ends the stream; `onclose` fires once. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = Promise.resolve();
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    if (!this.res.writableEnded) this.res.end();
    this.onEnd();
    this.onclose?.();
    return this.closing;
  }

  /** Starts the stream with the `endpoint` event (called by the server once the MCP side is wired). */
  open(endpoint: string, keepAliveMs: number): void {
    startEventStream(this.res);
    this.write(formatSseEvent({ event: "endpoint", data: endpoint }));
    for (const event of this.early ?? []) this.write(event);
    this.early = undefined;
    this.res.once("close", () => void this.close());
    this.keepAlive = setInterval(() => this.write(SSE_KEEP_ALIVE), keepAliveMs);
    this.keepAlive.unref();
  }

  /** Hands a POSTed message to the MCP side (called by the server). */
  deliver(message: unknown): void {
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private write(text: string): void {
    writeBounded(this.res, text, MAX_BUFFERED);
  }
}

export class SseServer {
  private readonly onSession: SseServerOptions["onSession"];
  private readonly ssePath: string;
  private readonly messagesPath: string;
  private readonly guard: HttpGuard;
  private readonly maxSessions: number;
  private readonly keepAliveMs: number;
  private readonly sessions = new Map<string, SseSessionTransport>();
  private server: Server | undefined;
  private closed = false;

  constructor(options: SseServerOptions) {
    this.onSession = options.onSession;
    this.ssePath = options.ssePath ?? "/sse";
    this.messagesPath = options.messagesPath ?? "/messages";
    this.guard = new HttpGuard(options);
    this.maxSessions = options.maxSessions ?? 1000;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
  }

  /** Streams currently open. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** node:http request handler, mountable in an existing server. Never rejects. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = req.url ?? "/";
      const q = url.indexOf("?");
      const path = q === -1 ? url : url.slice(0, q);
      const expected = path === this.ssePath ? "GET" : path === this.messagesPath ? "POST" : undefined;
      if (expected === undefined) {
        sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found");
        return;
      }
      if (!this.guard.admit(req, res)) return;
      if (req.method !== expected) {
        sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed", { allow: expected });
        return;
      }
      if (expected === "GET") await this.open(req, res);
      else await this.post(req, res, q === -1 ? "" : url.slice(q + 1));
    } catch (err) {
      if (!res.headersSent) sendRpcError(res, 500, -32603, `Internal error: ${errorMessage(err)}`);
      else res.destroy();
    }
  }

  /** Listens (host default 127.0.0.1, port 0 = ephemeral) and returns the URL of the SSE stream. */
  async listen(port = 0, host = "127.0.0.1"): Promise<{ url: URL; port: number }> {
    if (this.server) throw new Error("SseServer: listen() called twice");
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 65_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const bound = (server.address() as AddressInfo).port;
    const hostPart = host.includes(":") ? `[${host}]` : host;
    return { url: new URL(`http://${hostPart}:${bound}${this.ssePath}`), port: bound };
  }

  /** Ends every stream and closes the listener (if `listen` was used). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.values()].map((t) => t.close()));
    const server = this.server;
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  }

  private async open(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const accept = req.headers.accept;
    if (accept !== undefined && !acceptsEventStream(accept)) {
      sendRpcError(res, 406, HTTP_REFUSAL_CODE, "Not Acceptable: Accept must allow text/event-stream");
      return;
    }
    if (this.closed || this.sessions.size >= this.maxSessions) {
      sendRpcError(res, 503, HTTP_REFUSAL_CODE, "Service Unavailable: no more sessions", { "retry-after": "5" });
      return;
    }
    const id = randomUUID();
    const transport = new SseSessionTransport(id, res, () => {
      if (this.sessions.get(id) === transport) this.sessions.delete(id);
    });
    this.sessions.set(id, transport);
    let problem: string | undefined;
    try {
      await this.onSession(transport, { sessionId: id });
      if (!transport.connected) problem = "onSession did not connect the transport";
    } catch (err) {
      problem = `could not start the session: ${errorMessage(err)}`;
    }
    if (problem !== undefined || transport.closed || res.destroyed) {
      await transport.close();
      if (!res.destroyed) sendRpcError(res, 500, -32603, `Internal error: ${problem ?? "the session closed at once"}`);
      return;
    }
    transport.open(`${this.messagesPath}?sessionId=${encodeURIComponent(id)}`, this.keepAliveMs);
  }

  private async post(req: IncomingMessage, res: ServerResponse, query: string): Promise<void> {
    const id = new URLSearchParams(query).get("sessionId");
    if (id === null || id === "") {
      sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: sessionId query parameter is required");
      return;
    }
    const transport = this.sessions.get(id);
    if (!transport) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: unknown or closed session");
      return;
    }
    if (!isJsonContentType(req.headers["content-type"])) {
      sendRpcError(res, 415, HTTP_REFUSAL_CODE, "Unsupported Media Type: Content-Type must be application/json");
      return;
    }
    const body = await this.guard.readBody(req, res);
    if (!body) return;
    let value: unknown;
    try {
      value = JSON.parse(utf8.decode(body));
    } catch (err) {
      sendRpcError(res, 400, -32700, `Parse error: ${errorMessage(err)}`);
      return;
    }
    if (transport.closed) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: unknown or closed session");
      return;
    }
    res.writeHead(202, { "content-type": "text/plain; charset=utf-8", "content-length": 8 }).end("Accepted");
    transport.deliver(value);
  }
}
