/**
 * The Streamable HTTP server (MCP 2025-03-26 and later, 2026-07-28 included): one endpoint for POST, GET and
 * DELETE, usable on its own ({@link StreamableHttpServer.listen}, 127.0.0.1 by default) or
 * mounted in an existing node:http server ({@link StreamableHttpServer.handle}).
 *
 * ```ts
 * const mcp = new McpServer({ name: "demo", version: "1.0.0" });
 * const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t) });
 * const { url } = await http.listen(3100);   // http://127.0.0.1:3100/mcp
 * ```
 *
 * Status codes: 403 Host/Origin not allowed; 401 bearer token missing or wrong; 404 other
 * paths, unknown or terminated sessions; 405 other methods (and GET/DELETE when stateless);
 * 406 `Accept` lacking a required type; 409 a second GET stream; 413 body too large; 408 body
 * too slow; 415 not `application/json`; 400 malformed JSON (-32700), invalid JSON-RPC (-32600),
 * a batch outside 2025-03-26, a missing session id, an unsupported `MCP-Protocol-Version`;
 * 503 too many sessions, each with a request in flight (else the idlest is closed instead).
 * Error bodies are JSON-RPC errors, with the request's id when the body held exactly one.
 *
 * A POST of the stateless era (2026-07-28) gets no session id and a session of its own; see
 * http-era.ts and docs/decisions.md 106.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { BridgeError, ErrorCode } from "../jsonrpc/errors.ts";
import { inspect, onlyId, type BodyShape } from "./http-body-shape.ts";
import { allowsBatches, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from "../mcp/versions.ts";
import { eraRefusal, isStatelessPost, isStatelessVersionHeader, statelessStatus } from "./http-era.ts";
import {
  acceptsEventStream,
  acceptsJsonAndEventStream,
  failRequest,
  HTTP_REFUSAL_CODE,
  HttpGuard,
  isJsonContentType,
  type HttpGuardOptions,
  sendRpcError,
  requestHeader,
  targetPath,
} from "./http-guard.ts";
import { closeHttpServer, createHttpServer, listenAt, startSession, type OnSession } from "./http-serve.ts";
import { StreamableHttpSessionTransport } from "./http-session.ts";
import { bindPrincipal, ProtectedResource, type ProtectedResourceOptions } from "./http-resource.ts";

export { StreamableHttpSessionTransport } from "./http-session.ts";

/** The Host/Origin allow-lists, bearer token and body limits are those of {@link HttpGuardOptions}. */
export interface StreamableHttpServerOptions extends HttpGuardOptions {
  /**
   * Called once per new session (or per POST in stateless mode) with its transport; connect
   * an McpServer to it: `(t) => mcpServer.connect(t)`. A throw answers 500.
   */
  onSession: OnSession;
  /** Endpoint path. Default `"/mcp"`; other paths get 404. */
  path?: string;
  /** No session ids and no GET stream: every POST gets a fresh transport and session. */
  stateless?: boolean;
  /**
   * A session with no open response for about this long expires (then 404), counted from its
   * last request or the end of its last response. Default 5 min.
   */
  sessionIdleMs?: number;
  /**
   * Sessions at once. An `initialize` beyond closes the session idle the longest (one with no
   * request waiting for its answer; an open GET stream alone does not protect a session), and
   * gets 503 only when every session has a request in flight. Default 1000.
   */
  maxSessions?: number;
  /** Per-session resumability store. Defaults 1000 events / 8 MiB. */
  eventStore?: { maxEvents?: number; maxBytes?: number };
  /** `retry:` field of priming events on 2025-11-25 sessions, ms. Default 1000. */
  retryMs?: number;
  /** Interval of keep-alive comments on SSE responses, ms. Default 15 000. */
  keepAliveMs?: number;
  /** Values of `MCP-Protocol-Version` accepted. Default: every version this library speaks. */
  supportedVersions?: readonly string[];
  /** Serve as an OAuth protected resource: tokens checked by `verifyToken` (./http-resource.ts). */
  auth?: ProtectedResourceOptions;
}

interface SessionEntry {
  readonly id: string;
  readonly transport: StreamableHttpSessionTransport;
  /** Its idle clock; see {@link StreamableHttpServer.armIdle}. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When it was last used, on the server's activity counter (higher is more recent). */
  lastUsed: number;
  /** Until its initialize POST is handed over: never evicted meanwhile. */
  opening: boolean;
}

/** Default idle expiry of a session: long enough for a slow agent turn, short enough to free state. */
const DEFAULT_SESSION_IDLE_MS = 5 * 60_000;

/** Assumed when a request after initialize carries no `MCP-Protocol-Version` (per the spec). */
const DEFAULT_HEADER_VERSION = "2025-03-26";

export class StreamableHttpServer {
  private readonly onSession: StreamableHttpServerOptions["onSession"];
  private readonly path: string;
  private readonly stateless: boolean;
  private readonly guard: HttpGuard;
  private readonly idleMs: number;
  private readonly maxSessions: number;
  private readonly versions: ReadonlySet<string>;
  private readonly options: StreamableHttpServerOptions;
  private readonly allow: string;
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly resource: ProtectedResource | undefined;
  /** Counts uses of sessions: an order for "idle the longest" that needs no clock. */
  private activity = 0;
  /** Stateless transports still serving their POST. */
  private readonly transient = new Set<StreamableHttpSessionTransport>();
  private server: Server | undefined;
  private closed = false;

  constructor(options: StreamableHttpServerOptions) {
    this.options = options;
    this.onSession = options.onSession;
    this.path = options.path ?? "/mcp";
    this.stateless = options.stateless === true;
    this.guard = new HttpGuard(options);
    this.idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.maxSessions = options.maxSessions ?? 1000;
    this.versions = new Set(options.supportedVersions ?? SUPPORTED_PROTOCOL_VERSIONS);
    this.allow = this.stateless ? "POST" : "GET, POST, DELETE";
    this.resource = options.auth ? new ProtectedResource(options.auth, this.path, options.bearerToken) : undefined;
    if (!this.path.startsWith("/")) throw new RangeError(`StreamableHttpServer: path must start with "/", got ${JSON.stringify(this.path)}`);
    // setTimeout cannot wait longer than 2^31-1 ms (it would fire at once).
    if (!(this.idleMs > 0 && this.idleMs <= 2_147_483_647)) throw new RangeError("StreamableHttpServer: sessionIdleMs must be in 1..2147483647");
    if (!Number.isInteger(this.maxSessions) || this.maxSessions < 1) throw new RangeError("StreamableHttpServer: maxSessions must be a positive integer");
  }

  /** Sessions currently open. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * node:http request handler, mountable in an existing server. Resolves once the request is
   * dispatched (an SSE reply may still be streaming). Never rejects.
   */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const target = targetPath(req.url);
      if (target !== this.path && !this.resource?.isMetadataPath(target)) {
        sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found");
        return;
      }
      if (!this.guard.admit(req, res)) return;
      if (target !== this.path) return this.resource!.serveMetadata(req, res);
      if (this.resource && !(await this.resource.authenticate(req, res))) return;
      if (this.closed) {
        sendRpcError(res, 503, HTTP_REFUSAL_CODE, "Service Unavailable: server is closing");
        return;
      }
      switch (req.method) {
        case "POST":
          await this.post(req, res);
          return;
        case "GET":
        case "DELETE":
          // The stateless era has no GET stream and no session to delete.
          if (isStatelessVersionHeader(req)) {
            sendRpcError(res, 405, HTTP_REFUSAL_CODE, `Method Not Allowed: protocol ${requestHeader(req, "mcp-protocol-version")} is POST only`, { allow: "POST" });
          } else if (req.method === "GET") this.get(req, res);
          else await this.delete(req, res);
          return;
        default:
          sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed", { allow: this.allow });
      }
    } catch (err) {
      failRequest(res, err);
    }
  }

  /** Listens (host default 127.0.0.1, port 0 = ephemeral) and returns the endpoint URL. */
  async listen(port = 0, host = "127.0.0.1"): Promise<{ url: URL; port: number }> {
    if (this.server) throw new BridgeError("INVALID_STATE", "StreamableHttpServer: listen() called twice");
    this.server = createHttpServer((req, res) => void this.handle(req, res));
    return listenAt(this.server, port, host, this.path);
  }

  /** Terminates every session, closes their streams and the listener (if `listen` was used). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...[...this.sessions.values()].map((e) => e.transport), ...this.transient];
    await Promise.all(all.map((t) => t.close()));
    if (this.server) await closeHttpServer(this.server);
  }

  private async post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isJsonContentType(req.headers["content-type"])) {
      sendRpcError(res, 415, HTTP_REFUSAL_CODE, "Unsupported Media Type: Content-Type must be application/json");
      return;
    }
    if (!acceptsJsonAndEventStream(req.headers.accept)) {
      sendRpcError(res, 406, HTTP_REFUSAL_CODE, "Not Acceptable: Accept must list application/json and text/event-stream");
      return;
    }
    const body = await this.guard.readJson(req, res);
    if (!body) return;
    const value = body.value;
    const shape = inspect(value);
    if (shape.invalid) {
      sendRpcError(res, 400, ErrorCode.InvalidRequest, `Invalid Request: ${shape.invalid.message}`, undefined, shape.invalid.id);
      return;
    }
    if (isStatelessPost(req, value)) return this.postEra(req, res, value, shape);
    if (this.stateless) return this.postStateless(req, res, value, shape);
    const sid = requestHeader(req, "mcp-session-id");
    let transport: StreamableHttpSessionTransport | undefined;
    if (sid === undefined) {
      if (!shape.initialize) {
        sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: Mcp-Session-Id header is required", undefined, onlyId(shape));
        return;
      }
      const entry = await this.createSession(res);
      if (!entry) return;
      entry.transport.acceptPost(res, value, shape.ids, { "mcp-session-id": entry.transport.sessionId });
      entry.opening = false;
      return;
    }
    transport = this.session(sid, res);
    if (!transport) return;
    if (!shape.initialize && !this.versionOk(req, res)) return;
    if (Array.isArray(value) && !allowsBatches(transport.protocolVersion)) {
      sendRpcError(res, 400, ErrorCode.InvalidRequest, "Invalid Request: batches are accepted only on 2025-03-26 sessions");
      return;
    }
    transport.acceptPost(res, value, shape.ids);
  }

  private async postStateless(req: IncomingMessage, res: ServerResponse, value: unknown, shape: BodyShape): Promise<void> {
    let version: string | undefined;
    if (!shape.initialize) {
      if (!this.versionOk(req, res)) return;
      version = requestHeader(req, "mcp-protocol-version") ?? DEFAULT_HEADER_VERSION;
    }
    if (Array.isArray(value) && !allowsBatches(version)) {
      sendRpcError(res, 400, ErrorCode.InvalidRequest, "Invalid Request: batches are accepted only at 2025-03-26");
      return;
    }
    await this.serveAlone(res, value, shape, version);
  }

  /**
   * A POST of the stateless era (2026-07-28): headers checked against the body, then served
   * by a session of its own, with no session id, whatever mode this server is in. The MCP
   * layer checks `_meta` and answers -32022 for a version it does not speak.
   */
  private async postEra(req: IncomingMessage, res: ServerResponse, value: unknown, shape: BodyShape): Promise<void> {
    const refusal = eraRefusal(req, value);
    if (refusal !== undefined) return sendRpcError(res, 400, refusal.code, refusal.message, undefined, onlyId(shape));
    await this.serveAlone(res, value, shape, MODERN_PROTOCOL_VERSIONS[0], req);
  }

  /** Serves one POST on a transport and session of its own; `era` is the request of a stateless-era POST. */
  private async serveAlone(res: ServerResponse, value: unknown, shape: BodyShape, version: string | undefined, era?: IncomingMessage): Promise<void> {
    const transport: StreamableHttpSessionTransport = new StreamableHttpSessionTransport({
      sessionId: undefined,
      stateless: true,
      initializedProtocolVersion: version,
      keepAliveMs: this.options.keepAliveMs,
      statusOf: era ? statelessStatus : undefined,
      requestHeaders: era?.headers,
      onEnd: () => this.transient.delete(transport),
    });
    this.transient.add(transport);
    bindPrincipal(transport, res);
    if (!(await this.connect(transport, res))) return;
    transport.acceptPost(res, value, shape.ids);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (this.stateless) {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed: this server is stateless (no GET stream)", { allow: this.allow });
      return;
    }
    if (!acceptsEventStream(req.headers.accept)) {
      sendRpcError(res, 406, HTTP_REFUSAL_CODE, "Not Acceptable: Accept must list text/event-stream");
      return;
    }
    const transport = this.sessionOf(req, res);
    if (!transport || !this.versionOk(req, res)) return;
    transport.openGet(res, requestHeader(req, "last-event-id"));
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.stateless) {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed: this server is stateless (no sessions)", { allow: this.allow });
      return;
    }
    const transport = this.sessionOf(req, res);
    if (!transport || !this.versionOk(req, res)) return;
    await transport.close();
    res.writeHead(204).end();
  }

  /** The session named by the request's `Mcp-Session-Id`, or undefined after writing 400/404. */
  private sessionOf(req: IncomingMessage, res: ServerResponse): StreamableHttpSessionTransport | undefined {
    const sid = requestHeader(req, "mcp-session-id");
    if (sid === undefined) {
      sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    return this.session(sid, res);
  }

  private session(sid: string, res: ServerResponse): StreamableHttpSessionTransport | undefined {
    const entry = this.sessions.get(sid);
    if (!entry) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: unknown or terminated session");
      return undefined;
    }
    if (!bindPrincipal(entry.transport, res)) return undefined;
    this.touch(entry);
    return entry.transport;
  }

  private versionOk(req: IncomingMessage, res: ServerResponse): boolean {
    const v = requestHeader(req, "mcp-protocol-version");
    if (v === undefined || this.versions.has(v)) return true;
    sendRpcError(res, 400, HTTP_REFUSAL_CODE, `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(v)} (supported: ${[...this.versions].join(", ")})`);
    return false;
  }

  /** The session was used now: it moves to the back of the eviction order and its idle clock restarts. */
  private touch(entry: SessionEntry): void {
    entry.lastUsed = ++this.activity;
    this.armIdle(entry);
  }

  /**
   * (Re)starts a session's idle clock. A new timer rather than `refresh()`: the cost is alike,
   * and `mock.timers`, the clock the tests drive, does not implement `refresh()`
   * (docs/decisions.md 104).
   */
  private armIdle(entry: SessionEntry): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.expire(entry.id), this.idleMs);
    entry.timer.unref();
  }

  /**
   * Closes the session idle the longest, so that a full server still admits a new client
   * (idle clients cannot lock it out). Sessions with a request in flight, or still opening,
   * are spared; false when that is all of them.
   */
  private evictIdlest(): boolean {
    let idlest: SessionEntry | undefined;
    for (const entry of this.sessions.values()) {
      if (entry.opening || entry.transport.answering) continue;
      if (idlest === undefined || entry.lastUsed < idlest.lastUsed) idlest = entry;
    }
    // close() ends its responses (a GET stream included) and removes it from the map at once.
    if (idlest !== undefined) void idlest.transport.close();
    return idlest !== undefined;
  }

  private async createSession(res: ServerResponse): Promise<SessionEntry | undefined> {
    if (this.sessions.size >= this.maxSessions && !this.evictIdlest()) {
      sendRpcError(res, 503, HTTP_REFUSAL_CODE, `Service Unavailable: ${this.maxSessions} sessions already open, each with a request in flight`, { "retry-after": "5" });
      return undefined;
    }
    const id = randomUUID();
    const transport = new StreamableHttpSessionTransport({
      sessionId: id,
      eventStore: this.options.eventStore,
      retryMs: this.options.retryMs,
      keepAliveMs: this.options.keepAliveMs,
      onEnd: () => {
        const entry = this.sessions.get(id);
        if (entry?.transport !== transport) return;
        clearTimeout(entry.timer);
        this.sessions.delete(id);
      },
      onResponseClosed: () => {
        const entry = this.sessions.get(id);
        if (entry?.transport === transport) this.touch(entry);
      },
    });
    bindPrincipal(transport, res);
    // Registered before onSession runs, so concurrent initializes cannot overshoot maxSessions.
    const entry: SessionEntry = { id, transport, timer: undefined, lastUsed: ++this.activity, opening: true };
    this.armIdle(entry);
    this.sessions.set(id, entry);
    return (await this.connect(transport, res)) ? entry : undefined;
  }

  /** Runs onSession; on failure answers 500, closes the transport and returns false. */
  private async connect(transport: StreamableHttpSessionTransport, res: ServerResponse): Promise<boolean> {
    const problem = await startSession(this.onSession, transport, transport.sessionId);
    if (problem === undefined) return true;
    await transport.close();
    sendRpcError(res, 500, ErrorCode.InternalError, `Internal error: ${problem}`);
    return false;
  }

  private expire(id: string): void {
    const entry = this.sessions.get(id);
    if (!entry) return;
    // An open response (a GET stream, a POST still answering) keeps the session alive.
    if (entry.transport.busy) this.armIdle(entry);
    else void entry.transport.close();
  }
}
