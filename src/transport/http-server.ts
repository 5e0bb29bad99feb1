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
 * 503 too many sessions, each with a request in flight (else the idlest is closed instead), or
 * `onSession` refused with BridgeError `LIMIT_EXCEEDED`.
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
  targetPath,
} from "./http-guard.ts";
import { ProtectedResource, samePrincipal, scopedMessages, type AuthInfo, type ProtectedResourceOptions } from "./http-protected.ts";
import { closeHttpServer, createHttpServer, listenAt, startSession, type OnSession } from "./http-serve.ts";
import { StreamableHttpSessionTransport } from "./http-session.ts";
import { SessionTable, type SessionEntry } from "./http-session-table.ts";
import { Roster } from "../util/roster.ts";

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
  /**
   * Serve as an OAuth 2.1 protected resource (see http-protected.ts): metadata at
   * `/.well-known/oauth-protected-resource[/<path>]`, 401/403 with the challenge a client's
   * OAuth flow reads, a session bound to the principal that opened it, and the verified
   * {@link AuthInfo} on the session's transport (`ctx.auth` in handlers). Not with `bearerToken`.
   */
  protectedResource?: ProtectedResourceOptions;
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
  private readonly protection: ProtectedResource | undefined;
  private readonly maxSessions: number;
  private readonly versions: ReadonlySet<string>;
  private readonly options: StreamableHttpServerOptions;
  private readonly allow: string;
  private readonly sessions: SessionTable;
  /** Stateless transports still serving their POST. */
  private readonly transient = new Roster<StreamableHttpSessionTransport>();
  private server: Server | undefined;
  private closed = false;

  constructor(options: StreamableHttpServerOptions) {
    if (typeof options?.onSession !== "function") {
      throw new TypeError("StreamableHttpServer: onSession must be a function (transport) => server.connect(transport)");
    }
    this.options = options;
    this.onSession = options.onSession;
    this.path = options.path ?? "/mcp";
    this.stateless = options.stateless === true;
    this.guard = new HttpGuard(options);
    if (options.protectedResource !== undefined && options.bearerToken !== undefined) {
      throw new RangeError("StreamableHttpServer: protectedResource and bearerToken exclude each other");
    }
    this.protection = options.protectedResource && new ProtectedResource(options.protectedResource, this.path);
    const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    this.sessions = new SessionTable(idleMs);
    this.maxSessions = options.maxSessions ?? 1000;
    this.versions = new Set(options.supportedVersions ?? SUPPORTED_PROTOCOL_VERSIONS);
    this.allow = this.stateless ? "POST" : "GET, POST, DELETE";
    if (!this.path.startsWith("/")) throw new RangeError(`StreamableHttpServer: path must start with "/", got ${JSON.stringify(this.path)}`);
    // setTimeout cannot wait longer than 2^31-1 ms (it would fire at once).
    if (!(idleMs > 0 && idleMs <= 2_147_483_647)) throw new RangeError("StreamableHttpServer: sessionIdleMs must be in 1..2147483647");
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
      const metadata = this.protection?.isMetadataRequest(req) === true;
      if (!metadata && targetPath(req.url) !== this.path) {
        sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found");
        return;
      }
      if (!this.guard.admit(req, res)) return;
      if (metadata) return this.protection!.serveMetadata(req, res);
      if (this.closed) {
        sendRpcError(res, 503, HTTP_REFUSAL_CODE, "Service Unavailable: server is closing");
        return;
      }
      let auth: AuthInfo | undefined;
      if (this.protection !== undefined && (auth = await this.protection.authenticate(req, res)) === undefined) return;
      switch (req.method) {
        case "POST":
          await this.post(req, res, auth);
          return;
        case "GET":
        case "DELETE":
          // The stateless era has no GET stream and no session to delete.
          if (isStatelessVersionHeader(req)) {
            sendRpcError(res, 405, HTTP_REFUSAL_CODE, `Method Not Allowed: protocol ${header(req, "mcp-protocol-version")} is POST only`, { allow: "POST" });
          } else if (req.method === "GET") this.get(req, res, auth);
          else await this.delete(req, res, auth);
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
    const all = [...this.sessions.transports(), ...this.transient.toArray()];
    await Promise.all(all.map((t) => t.close()));
    if (this.server) await closeHttpServer(this.server);
  }

  private async post(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
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
    if (auth !== undefined && !this.protection!.authorize(auth, scopedMessages(value), req, res)) return;
    if (isStatelessPost(req, value)) return this.postEra(req, res, value, shape, auth);
    if (this.stateless) return this.postStateless(req, res, value, shape, auth);
    const sid = header(req, "mcp-session-id");
    let transport: StreamableHttpSessionTransport | undefined;
    if (sid === undefined) {
      if (!shape.initialize) {
        sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: Mcp-Session-Id header is required", undefined, onlyId(shape));
        return;
      }
      const entry = await this.createSession(res, auth);
      if (!entry) return;
      entry.transport.acceptPost(res, value, shape.ids, { "mcp-session-id": entry.transport.sessionId });
      entry.opening = false;
      return;
    }
    transport = this.session(sid, res, auth);
    if (!transport) return;
    if (!shape.initialize && !this.versionOk(req, res)) return;
    if (Array.isArray(value) && !allowsBatches(transport.protocolVersion)) {
      sendRpcError(res, 400, ErrorCode.InvalidRequest, "Invalid Request: batches are accepted only on 2025-03-26 sessions");
      return;
    }
    transport.acceptPost(res, value, shape.ids);
  }

  private async postStateless(req: IncomingMessage, res: ServerResponse, value: unknown, shape: BodyShape, auth: AuthInfo | undefined): Promise<void> {
    let version: string | undefined;
    if (!shape.initialize) {
      if (!this.versionOk(req, res)) return;
      version = header(req, "mcp-protocol-version") ?? DEFAULT_HEADER_VERSION;
    }
    if (Array.isArray(value) && !allowsBatches(version)) {
      sendRpcError(res, 400, ErrorCode.InvalidRequest, "Invalid Request: batches are accepted only at 2025-03-26");
      return;
    }
    await this.serveAlone(res, value, shape, version, auth);
  }

  /**
   * A POST of the stateless era (2026-07-28): headers checked against the body, then served
   * by a session of its own, with no session id, whatever mode this server is in. The MCP
   * layer checks `_meta` and answers -32022 for a version it does not speak.
   */
  private async postEra(req: IncomingMessage, res: ServerResponse, value: unknown, shape: BodyShape, auth: AuthInfo | undefined): Promise<void> {
    const refusal = eraRefusal(req, value);
    if (refusal !== undefined) return sendRpcError(res, 400, refusal.code, refusal.message, undefined, onlyId(shape));
    await this.serveAlone(res, value, shape, MODERN_PROTOCOL_VERSIONS[0], auth, req);
  }

  /** Serves one POST on a transport and session of its own; `era` is the request of a stateless-era POST. */
  private async serveAlone(
    res: ServerResponse,
    value: unknown,
    shape: BodyShape,
    version: string | undefined,
    authInfo: AuthInfo | undefined,
    era?: IncomingMessage,
  ): Promise<void> {
    let leave = (): void => undefined;
    const transport: StreamableHttpSessionTransport = new StreamableHttpSessionTransport({
      sessionId: undefined,
      stateless: true,
      initializedProtocolVersion: version,
      keepAliveMs: this.options.keepAliveMs,
      statusOf: era ? statelessStatus : undefined,
      requestHeaders: era?.headers,
      authInfo,
      onEnd: () => leave(),
    });
    // A roster, not a Set: a transport joins and leaves it per POST (docs/decisions.md 164).
    leave = this.transient.add(transport);
    if (!(await this.connect(transport, res))) return;
    transport.acceptPost(res, value, shape.ids);
  }

  private get(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): void {
    if (this.stateless) {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed: this server is stateless (no GET stream)", { allow: this.allow });
      return;
    }
    if (!acceptsEventStream(req.headers.accept)) {
      sendRpcError(res, 406, HTTP_REFUSAL_CODE, "Not Acceptable: Accept must list text/event-stream");
      return;
    }
    const transport = this.sessionOf(req, res, auth);
    if (!transport || !this.versionOk(req, res)) return;
    transport.openGet(res, header(req, "last-event-id"));
  }

  private async delete(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): Promise<void> {
    if (this.stateless) {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed: this server is stateless (no sessions)", { allow: this.allow });
      return;
    }
    const transport = this.sessionOf(req, res, auth);
    if (!transport || !this.versionOk(req, res)) return;
    await transport.close();
    res.writeHead(204).end();
  }

  /** The session named by the request's `Mcp-Session-Id`, or undefined after writing 400/404. */
  private sessionOf(req: IncomingMessage, res: ServerResponse, auth: AuthInfo | undefined): StreamableHttpSessionTransport | undefined {
    const sid = header(req, "mcp-session-id");
    if (sid === undefined) {
      sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    return this.session(sid, res, auth);
  }

  /** The session `sid`, or undefined after 404 (unknown) or 403 (opened by another principal). */
  private session(sid: string, res: ServerResponse, auth: AuthInfo | undefined): StreamableHttpSessionTransport | undefined {
    const entry = this.sessions.get(sid);
    if (!entry) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: unknown or terminated session");
      return undefined;
    }
    if (auth !== undefined) {
      // A session id is no credential: only the principal that opened the session may use it.
      if (!samePrincipal(entry.transport.authInfo, auth)) {
        sendRpcError(res, 403, HTTP_REFUSAL_CODE, "Forbidden: this session belongs to another principal");
        return undefined;
      }
      entry.transport.authInfo = auth; // the newest token's scopes (a step-up adds some)
    }
    this.sessions.touch(entry);
    return entry.transport;
  }

  private versionOk(req: IncomingMessage, res: ServerResponse): boolean {
    const v = header(req, "mcp-protocol-version");
    if (v === undefined || this.versions.has(v)) return true;
    sendRpcError(res, 400, HTTP_REFUSAL_CODE, `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(v)} (supported: ${[...this.versions].join(", ")})`);
    return false;
  }

  private async createSession(res: ServerResponse, authInfo: AuthInfo | undefined): Promise<SessionEntry | undefined> {
    if (this.sessions.size >= this.maxSessions && !this.sessions.evictIdlest()) {
      sendRpcError(res, 503, HTTP_REFUSAL_CODE, `Service Unavailable: ${this.maxSessions} sessions already open, each with a request in flight`, { "retry-after": "5" });
      return undefined;
    }
    const id = randomUUID();
    const transport = new StreamableHttpSessionTransport({
      sessionId: id,
      eventStore: this.options.eventStore,
      retryMs: this.options.retryMs,
      keepAliveMs: this.options.keepAliveMs,
      authInfo,
      onEnd: () => this.sessions.remove(id, transport),
      onResponseClosed: () => {
        const entry = this.sessions.get(id);
        if (entry?.transport === transport) this.sessions.touch(entry);
      },
    });
    // Registered before onSession runs, so concurrent initializes cannot overshoot maxSessions.
    const entry = this.sessions.add(id, transport);
    return (await this.connect(transport, res)) ? entry : undefined;
  }

  /** Runs onSession; on failure answers 500, closes the transport and returns false. */
  private async connect(transport: StreamableHttpSessionTransport, res: ServerResponse): Promise<boolean> {
    const problem = await startSession(this.onSession, transport, transport.sessionId);
    if (problem === undefined) return true;
    await transport.close();
    sendRpcError(res, problem.status, problem.status === 503 ? HTTP_REFUSAL_CODE : ErrorCode.InternalError, problem.message, problem.status === 503 ? { "retry-after": "5" } : undefined);
    return false;
  }

}

/** A request header as one string (Node joins repeated custom headers with ", "). */
function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}
