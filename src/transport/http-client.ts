/**
 * The client side of MCP Streamable HTTP (2025-03-26 .. 2025-11-25) over node:http/node:https.
 *
 * How `send()` settles, and how failures reach the caller (the peer rejects a request whose
 * `send()` rejects, with that very error):
 * - a request: `send()` resolves once its response has been delivered to `onmessage`, and
 *   rejects with a typed error when the exchange fails first: `AuthError` (401/403),
 *   `BridgeError HTTP_ERROR` (any other status, naming it; a wrong content type; a stream that
 *   ended before the response and could not be resumed), `PARSE_ERROR` (a JSON reply that is not
 *   JSON), `LIMIT_EXCEEDED` (a body or event over `maxBodyBytes`). No synthesized JSON-RPC error
 *   is delivered and `onerror` is not called for these: the caller gets the typed error once.
 * - a notification or response: `send()` resolves on a 2xx (202 expected) and rejects as above.
 * - `onerror` gets what belongs to no caller: an SSE event that is not JSON, and failures of
 *   the GET stream.
 *
 * Timeouts: `requestTimeoutMs` bounds each exchange that does not wait on a JSON-RPC result
 * (notification and response POSTs, the GET stream's headers, resumption GETs). A POST carrying
 * a request, its reply's body included, lives as long as the request: the peer's own timeout
 * (or the caller's abort) sends `notifications/cancelled`, and that makes this transport abort
 * the POST. Used without a peer, a request waits for its reply or close(). (A timer per reply
 * body would duplicate the peer's and cost a measurable share of a loopback round trip.)
 *
 * Redirects follow the policy of {@link HttpCall}: same-origin 307/308 only.
 */
import type * as http from "node:http";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcId, type JsonRpcMessage } from "../jsonrpc/message.ts";
import type { HttpAuthProvider } from "./auth-provider.ts";
import { Exchange, ReplyStreams, type StreamHost } from "./http-client-streams.ts";
import { describeErrorBody, drain, mediaType, readBody, refusalReply, statusError } from "./http-body.ts";
import { clientBasics, type HttpClientBasics } from "./http-options.ts";
import { HttpCall, LiveCalls, type HttpMethod } from "./http-request.ts";
import type { MessageHeaders, Transport } from "./transport.ts";
import { TransportLifecycle } from "./lifecycle.ts";

export interface StreamableHttpClientTransportOptions {
  url: string | URL;
  /** Sent on every request (POST, GET, DELETE) to the configured origin, never to another. */
  headers?: Record<string, string>;
  /**
   * Bearer tokens for every request, and one retry of a request answered 401/403 after the
   * provider handled the challenge (an `OAuthProvider`, or the host's own). See ./http-auth.ts.
   */
  auth?: HttpAuthProvider;
  /** Per HTTP exchange, ms (see the file comment for what it bounds). Default 60 000. */
  requestTimeoutMs?: number;
  /** Largest JSON body or single SSE event, bytes. Default 32 MiB. Over it: `LIMIT_EXCEEDED`. */
  maxBodyBytes?: number;
  /** Open the GET stream for server-initiated messages after initialize (405 is fine). Default true. */
  openGetStream?: boolean;
  /**
   * Reconnecting SSE streams: the server's `retry` is honoured (capped at `maxDelayMs`), then
   * exponential backoff. Defaults 1000 ms, 30 000 ms, 5 attempts in a row.
   */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
  onLog?: (msg: string) => void;
  /** Default: a keep-alive agent owned (and destroyed on close) by the transport. */
  agent?: http.Agent;
}

/** @deprecated Renamed {@link StreamableHttpClientTransportOptions}; this alias goes in the next release. */
export type HttpClientOptions = StreamableHttpClientTransportOptions;

/** Moved to http-options.ts; re-exported for the old import path. */
export { clientBasics, type HttpClientBasics } from "./http-options.ts";

const DELETE_TIMEOUT_MS = 2_000;
const POST_ACCEPT = "application/json, text/event-stream";
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/**
 * Requests that read and change nothing: when a reused keep-alive socket turns out closed
 * under one (the server timed it out as the request went), it is sent again on a fresh one.
 * A loaded machine meets that race often; a `tools/call` is never repeated (it may act).
 */
const READ_ONLY: ReadonlySet<string> = new Set([
  "ping",
  "server/discover",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
]);

/**
 * ```ts
 * const transport = new StreamableHttpClientTransport({ url: "https://example.com/mcp",
 *   headers: { authorization: `Bearer ${token}` } });
 * await new McpClient().connect(transport);
 * ```
 */
export class StreamableHttpClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;
  /** Called after a 404 made the transport re-initialize a new session transparently. */
  onsessionexpired?: () => void;

  private readonly base: HttpClientBasics;
  private readonly wantGetStream: boolean;
  private readonly live = new LiveCalls();
  private readonly streams: ReplyStreams;
  private session: string | undefined;
  private version: string | undefined;
  private initParams: unknown;
  private reinit: Promise<void> | undefined;
  private reinitCount = 0;
  private postHeadersCache: { session: string | undefined; version: string | undefined; headers: http.OutgoingHttpHeaders } | undefined;
  /** The last POST headers merged with a message's own (see {@link postHeaders}). */
  private mergedHeaders: { base: http.OutgoingHttpHeaders; extra: Record<string, string>; headers: http.OutgoingHttpHeaders } | undefined;
  /** Set while the MCP layer speaks the stateless era (see {@link setMessageHeaders}). */
  private eraHeaders: MessageHeaders | undefined;
  private readonly life = new TransportLifecycle(this, "Streamable HTTP transport");

  constructor(options: StreamableHttpClientTransportOptions) {
    this.base = clientBasics(options, "Streamable HTTP transport");
    this.wantGetStream = options.openGetStream ?? true;
    const host: StreamHost = {
      url: this.base.url,
      isClosed: () => this.life.ending,
      hasSession: () => this.session !== undefined,
      openGet: (lastEventId) => this.call("GET", this.getHeaders(lastEventId), undefined, this.base.timeoutMs),
      auth: this.base.auth,
      message: (value) => this.emit(value),
      error: (e) => this.onerror?.(e),
      log: this.base.log,
    };
    this.streams = new ReplyStreams(host, {
      maxBody: this.base.maxBody,
      initialDelayMs: options.reconnect?.initialDelayMs ?? 1000,
      maxDelayMs: options.reconnect?.maxDelayMs ?? 30_000,
      maxAttempts: options.reconnect?.maxAttempts ?? 5,
    });
  }

  /** The session id the server assigned at initialize, if any. */
  get sessionId(): string | undefined {
    return this.session;
  }

  /** The protocol version sent in `MCP-Protocol-Version`, once set. */
  get protocolVersion(): string | undefined {
    return this.version;
  }

  /** Sends `MCP-Protocol-Version: v` on every later request except `initialize`. */
  setProtocolVersion(v: string): void {
    this.version = v;
  }

  /**
   * The stateless era (2026-07-28): each POST gets the headers `headersFor` gives its message,
   * a JSON-RPC error answered with a 4xx status settles its request as that error, and a
   * cancelled request's stream is closed with no `notifications/cancelled` POST (closing it
   * is the cancellation). `undefined` goes back to the handshake era (docs/decisions.md 135).
   */
  setMessageHeaders(headersFor: MessageHeaders | undefined): void {
    this.eraHeaders = headersFor;
  }

  /** One authorization budget for the whole connect (see `BearerAuth.connecting`). */
  setConnecting(connecting: boolean): void {
    this.base.auth?.connecting(connecting);
  }

  /** Nothing to open: every message is its own POST (the GET stream opens after initialize). */
  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  /** Also accepted before `start()`: there is nothing to open (docs/decisions.md 88). */
  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.ending) return Promise.reject(closedError());
    const body = encodeMessage(message);
    if (typeof body !== "string") return Promise.reject(body);
    const single = Array.isArray(message) ? undefined : (message as { method?: unknown; params?: unknown });
    const method = typeof single?.method === "string" ? single.method : undefined;
    const ids = requestIds(message);
    const extra = this.eraHeaders !== undefined && method !== undefined ? this.eraHeaders({ method, params: single?.params }) : undefined;
    if (ids.length === 0) {
      const cancelledId = method === "notifications/cancelled" ? (single?.params as { requestId?: unknown } | undefined)?.requestId : undefined;
      if (typeof cancelledId === "string" || typeof cancelledId === "number") {
        this.streams.cancelled(cancelledId);
        if (this.eraHeaders !== undefined) return Promise.resolve();
      }
      const post = () => this.postOther(body, method ?? "message", false, extra);
      return this.base.auth ? this.base.auth.run(post) : post();
    }
    const init = method === "initialize";
    if (init) this.initParams = single?.params;
    const ex = this.streams.track(new Exchange(ids, method, false));
    const auth = this.base.auth;
    // A request cancelled or failed while a token was on its way is not sent after all.
    const sent = auth
      ? auth.run(() => (ex.done ? Promise.resolve() : this.postRequest(body, init, ex, false, extra)))
      : this.postRequest(body, init, ex, false, extra);
    sent.catch((err: Error) => this.streams.finish(ex, err));
    return ex.promise;
  }

  /** Aborts everything in flight, DELETEs the session (bounded; 405 fine) and frees the agent. */
  close(): Promise<void> {
    return this.life.close(() => this.shutdown());
  }

  private async shutdown(): Promise<void> {
    const err = closedError();
    this.streams.closeAll(err);
    this.live.abortAll(err);
    if (this.session !== undefined) {
      const call = this.call("DELETE", this.getHeaders(""), undefined, Math.min(this.base.timeoutMs, DELETE_TIMEOUT_MS));
      try {
        const res = await call.response;
        await drain(call, res);
        if (res.statusCode !== 405 && (res.statusCode ?? 0) >= 300) this.base.log(`DELETE of the session answered ${res.statusCode}`);
      } catch (e) {
        this.base.log(`DELETE of the session failed: ${errorMessage(e)}`);
      }
      this.session = undefined;
    }
    if (this.base.ownAgent) this.base.agent.destroy();
  }

  /** `repeatable`: safe to send again on a fresh connection if a kept-alive one was dead. */
  private call(method: HttpMethod, headers: http.OutgoingHttpHeaders, body: string | undefined, timeoutMs: number, repeatable = true): HttpCall {
    if (this.life.ending && method !== "DELETE") throw closedError();
    return new HttpCall({
      method, url: this.base.url, headers: this.base.auth ? this.base.auth.apply(headers, method, this.base.url) : headers, body, agent: this.base.agent, timeoutMs, live: this.live, retryStaleSocket: repeatable,
    });
  }

  /**
   * The headers of a POST. After initialize they are built once per (session, version) and
   * shared: node:http copies what it is given and never changes the object.
   */
  private postHeaders(init: boolean, extra?: Record<string, string>): http.OutgoingHttpHeaders {
    if (extra !== undefined) {
      // The stateless era's headers: the MCP layer hands the same object for the same method
      // and target, so the merge is kept for as long as both parts stay the same.
      const base = this.postHeaders(init);
      const merged = this.mergedHeaders;
      if (merged !== undefined && merged.base === base && merged.extra === extra) return merged.headers;
      const headers = { ...base, ...extra };
      if (!init) this.mergedHeaders = { base, extra, headers };
      return headers;
    }
    const cached = this.postHeadersCache;
    if (!init && cached && cached.session === this.session && cached.version === this.version) return cached.headers;
    const h: http.OutgoingHttpHeaders = { ...this.base.configured, accept: POST_ACCEPT, "content-type": "application/json" };
    if (init) return h;
    if (this.session !== undefined) h["mcp-session-id"] = this.session;
    if (this.version !== undefined) h["mcp-protocol-version"] = this.version;
    this.postHeadersCache = { session: this.session, version: this.version, headers: h };
    return h;
  }

  private getHeaders(lastEventId: string): http.OutgoingHttpHeaders {
    const h: http.OutgoingHttpHeaders = { ...this.base.configured, accept: "text/event-stream" };
    if (this.session !== undefined) h["mcp-session-id"] = this.session;
    if (this.version !== undefined) h["mcp-protocol-version"] = this.version;
    if (lastEventId !== "") h["last-event-id"] = lastEventId;
    return h;
  }

  /** `readOnly`: a request that changes nothing, which may go again on a fresh socket (see {@link READ_ONLY}). */
  private async postRequest(body: string, init: boolean, ex: Exchange, retried: boolean, extra?: Record<string, string>, readOnly = false): Promise<void> {
    const sessionAtSend = init ? undefined : this.session;
    const call = this.call("POST", this.postHeaders(init, extra), body, 0, readOnly);
    ex.call = call;
    const res = await call.response;
    const status = res.statusCode ?? 0;
    if (status === 404 && sessionAtSend !== undefined) {
      await drain(call, res);
      await this.sessionExpired(sessionAtSend, retried, ex.label);
      if (!ex.done) await this.postRequest(body, init, ex, true, extra, readOnly);
      return;
    }
    if ((status < 200 || status > 299) && this.eraHeaders !== undefined && !init) return this.refused(call, res, ex);
    if (status < 200 || status > 299) throw await statusError(call, res, "POST", this.base.url, ex.label);
    if (init) this.captureSession(res);
    const type = mediaType(res);
    if (type === "text/event-stream") return this.streams.readRequestStream(ex, call, res);
    if (type === "application/json") {
      // No timer of its own: the body is bounded by the request's lifetime (see the header).
      const buf = await readBody(call, res, this.base.maxBody, () => `reply to ${ex.label}`);
      let value: unknown;
      try {
        value = JSON.parse(buf.toString("utf8"));
      } catch (err) {
        throw new BridgeError("PARSE_ERROR", `reply to ${ex.label} is not valid JSON: ${errorMessage(err)}`, { cause: err });
      }
      this.streams.deliver(value);
      if (!ex.done) {
        const reason = describeErrorBody(buf.toString("utf8"));
        throw new BridgeError("HTTP_ERROR", `reply to ${ex.label} (${status}) did not contain its response${reason ? `: ${reason}` : ""}`, {
          details: { status },
        });
      }
      return;
    }
    if (status === 202 || status === 204) {
      await drain(call, res);
      this.base.log(`${ex.label} was answered ${status}; its response can only arrive on the GET stream`);
      return;
    }
    call.abort(new BridgeError("HTTP_ERROR", "unexpected content type"));
    throw new BridgeError(
      "HTTP_ERROR",
      `reply to ${ex.label} has content type "${type || "(none)"}"; expected application/json or text/event-stream`,
      { details: { status, contentType: type } },
    );
  }

  /** A stateless-era request answered 4xx: its JSON-RPC error settles it, else the HTTP error. */
  private async refused(call: HttpCall, res: http.IncomingMessage, ex: Exchange): Promise<void> {
    const answer = await refusalReply(call, res, "POST", this.base.url, ex.label);
    if ("error" in answer) throw answer.error;
    // An error without an id (allowed when the server could not read one) answers this POST.
    const waiting = ex.waitingIds();
    const id = answer.reply.id ?? (waiting.length === 1 ? waiting[0] : undefined);
    this.streams.deliver({ ...answer.reply, id });
    if (!ex.done) throw new BridgeError("HTTP_ERROR", `reply to ${ex.label} (${res.statusCode}) was an error for another request`, { details: { status: res.statusCode } });
  }

  /** POSTs a notification or a response: any 2xx will do, the body is ignored. */
  private async postOther(body: string, what: string, retried: boolean, extra?: Record<string, string>): Promise<void> {
    const sessionAtSend = this.session;
    const call = this.call("POST", this.postHeaders(false, extra), body, this.base.timeoutMs);
    const res = await call.response;
    const status = res.statusCode ?? 0;
    if (status === 404 && sessionAtSend !== undefined) {
      await drain(call, res);
      await this.sessionExpired(sessionAtSend, retried, `"${what}"`);
      return this.postOther(body, what, true, extra);
    }
    if (status < 200 || status > 299) throw await statusError(call, res, "POST", this.base.url, `"${what}"`);
    await drain(call, res);
    if (what === "notifications/initialized" && this.wantGetStream) this.streams.startGet();
  }

  private captureSession(res: http.IncomingMessage): void {
    const sid = res.headers["mcp-session-id"];
    if (typeof sid !== "string") return;
    if (!VISIBLE_ASCII.test(sid)) {
      throw new BridgeError("HTTP_ERROR", "the server's Mcp-Session-Id is not visible ASCII (0x21-0x7E); refusing it");
    }
    this.session = sid;
  }

  /** A request that carried `expired` got 404: re-initialize once (shared by all who saw it). */
  private async sessionExpired(expired: string, retried: boolean, label: string): Promise<void> {
    if (retried) {
      throw new BridgeError("HTTP_ERROR", `${label}: the server answered 404 (session not found) again right after re-initializing; giving up`, {
        details: { status: 404 },
      });
    }
    if (this.reinit) return this.reinit;
    if (this.session !== expired) return; // another request already re-initialized
    this.reinit = this.reinitialize().finally(() => {
      this.reinit = undefined;
    });
    return this.reinit;
  }

  private async reinitialize(): Promise<void> {
    this.session = undefined;
    this.streams.stopGet(true);
    if (this.initParams === undefined) {
      throw new BridgeError("HTTP_ERROR", "the session is gone (404) and no initialize was sent on this transport to replay");
    }
    this.base.log("session expired (404); re-initializing");
    const id = `mcp-bridge-reinitialize-${++this.reinitCount}`;
    const ex = this.streams.track(new Exchange([id], "initialize", true, "initialize (replayed after the session expired)"));
    const body = JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: this.initParams });
    this.postRequest(body, true, ex, true).catch((err: Error) => this.streams.finish(ex, err));
    try {
      await ex.promise;
    } catch (err) {
      throw new BridgeError("HTTP_ERROR", `the session expired (404) and re-initializing failed: ${errorMessage(err)}`, { cause: err });
    }
    const reply = ex.captured;
    const result = reply?.result as { protocolVersion?: unknown } | undefined;
    if (!result) {
      const why = (reply?.error as { message?: unknown } | undefined)?.message;
      throw new BridgeError("HTTP_ERROR", `the session expired (404) and the server refused to re-initialize: ${String(why ?? "no result")}`);
    }
    if (this.version !== undefined && result.protocolVersion !== this.version) {
      throw new BridgeError(
        "HTTP_ERROR",
        `the session expired (404) and on re-initialize the server chose protocol ${String(result.protocolVersion)}, not ${this.version}`,
      );
    }
    await this.postOther(INITIALIZED, "notifications/initialized", true);
    this.onsessionexpired?.();
  }

  private emit(value: unknown): void {
    try {
      this.onmessage?.(value);
    } catch (err) {
      // Plain: the value was thrown by the caller's onmessage; it is passed on, not classified.
      this.onerror?.(err instanceof Error ? err : new Error(errorMessage(err)));
    }
  }
}

/** Ids of the requests in a message or batch (a request has both `method` and `id`). */
function requestIds(message: JsonRpcMessage | JsonRpcMessage[]): JsonRpcId[] {
  if (!Array.isArray(message)) {
    const id = requestId(message);
    return id === undefined ? [] : [id];
  }
  const out: JsonRpcId[] = [];
  for (const m of message) {
    const id = requestId(m);
    if (id !== undefined) out.push(id);
  }
  return out;
}

/** The id of a request (a message with both `method` and `id`). */
function requestId(message: JsonRpcMessage): JsonRpcId | undefined {
  const r = message as { method?: unknown; id?: unknown };
  return typeof r.method === "string" && (typeof r.id === "string" || typeof r.id === "number") ? r.id : undefined;
}

function closedError(): BridgeError {
  return new BridgeError("CLOSED", "Streamable HTTP transport is closed");
}
