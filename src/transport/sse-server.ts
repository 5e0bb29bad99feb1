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
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { BridgeError, ErrorCode } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { formatSseEvent } from "../jsonrpc/sse.ts";
import {
  acceptsEventStream,
  failRequest,
  HTTP_REFUSAL_CODE,
  HttpGuard,
  isJsonContentType,
  type HttpGuardOptions,
  sendRpcError,
  splitTarget,
  SSE_KEEP_ALIVE,
  startEventStream,
  writeBounded,
} from "./http-guard.ts";
import { closeHttpServer, createHttpServer, listenAt, startSession, type OnSession } from "./http-serve.ts";
import type { Transport } from "./transport.ts";
import { TransportLifecycle } from "./lifecycle.ts";

/** The Host/Origin allow-lists, bearer token and body limits are those of {@link HttpGuardOptions}. */
export interface SseServerOptions extends HttpGuardOptions {
  /**
   * Called once per stream with its transport: `(t) => mcpServer.connect(t)`. A throw answers
   * 500; a BridgeError `LIMIT_EXCEEDED` answers 503 with its message.
   */
  onSession: OnSession;
  /** Path of the GET stream. Default `"/sse"`. */
  ssePath?: string;
  /** Path messages are POSTed to. Default `"/messages"`. */
  messagesPath?: string;
  /** Streams at once; beyond gets 503. Default 1000. */
  maxSessions?: number;
  /** Interval of keep-alive comments, ms. Default 15 000. */
  keepAliveMs?: number;
}

/** A client that stops reading is cut off once this much is queued. */
const MAX_BUFFERED = 8 * 1024 * 1024;

/** One legacy session: its messages go out as `message` events on the GET stream. */
export class SseSessionTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private readonly life: TransportLifecycle;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  /** Events sent before the stream opened (the endpoint event must come first). */
  private early: string[] | undefined = [];

  readonly sessionId: string;
  private readonly res: ServerResponse;
  private readonly onEnd: () => void;

  constructor(sessionId: string, res: ServerResponse, onEnd: () => void) {
    this.sessionId = sessionId;
    this.life = new TransportLifecycle(this, `SSE session ${sessionId}`);
    this.res = res;
    this.onEnd = onEnd;
  }

  /** True once `start()` was called (the MCP server connected). */
  get connected(): boolean {
    return this.life.state !== "new";
  }

  get closed(): boolean {
    return this.life.ending;
  }

  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") return Promise.reject(this.life.notOpen());
    const data = encodeMessage(message);
    if (typeof data !== "string") return Promise.reject(data);
    const event = formatSseEvent({ event: "message", data });
    if (this.early) this.early.push(event);
    else this.write(event);
    return Promise.resolve();
  }

  /** Ends the stream; `onclose` fires once. */
  close(): Promise<void> {
    return this.life.close(async () => {
      if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
      if (!this.res.writableEnded) this.res.end();
      this.onEnd();
      // Before close() returns, as the server's bookkeeping expects.
      this.life.ended();
    });
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
      // Plain: the value was thrown by the caller's onmessage; it is passed on, not classified.
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
    if (typeof options?.onSession !== "function") {
      throw new TypeError("SseServer: onSession must be a function (transport) => server.connect(transport)");
    }
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
      const { path, query } = splitTarget(req.url);
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
      else await this.post(req, res, query);
    } catch (err) {
      failRequest(res, err);
    }
  }

  /** Listens (host default 127.0.0.1, port 0 = ephemeral) and returns the URL of the SSE stream. */
  async listen(port = 0, host = "127.0.0.1"): Promise<{ url: URL; port: number }> {
    if (this.server) throw new BridgeError("INVALID_STATE", "SseServer: listen() called twice; make a new SseServer");
    this.server = createHttpServer((req, res) => void this.handle(req, res));
    return listenAt(this.server, port, host, this.ssePath);
  }

  /** Ends every stream and closes the listener (if `listen` was used). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.values()].map((t) => t.close()));
    if (this.server) await closeHttpServer(this.server);
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
    const problem = await startSession(this.onSession, transport, id);
    if (problem !== undefined || res.destroyed) {
      // The answer first: closing the transport ends the reply (an empty 200 if nothing was written).
      if (problem !== undefined && !res.destroyed) {
        sendRpcError(res, problem.status, problem.status === 503 ? HTTP_REFUSAL_CODE : ErrorCode.InternalError, problem.message, problem.status === 503 ? { "retry-after": "5" } : undefined);
      }
      await transport.close();
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
    const body = await this.guard.readJson(req, res);
    if (!body) return;
    if (transport.closed) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: unknown or closed session");
      return;
    }
    res.writeHead(202, { "content-type": "text/plain; charset=utf-8", "content-length": 8 }).end("Accepted");
    transport.deliver(body.value);
  }
}
