/**
 * One Streamable HTTP session as a {@link Transport}: what the server peer sends is routed to
 * the HTTP response it belongs to.
 *
 * Streams. A POST that carries requests waits for their responses. Until the handler sends
 * something related to one of them (progress, a log line, a sampling request), nothing is
 * written; the response then goes out as plain JSON. If something related comes first, the
 * POST becomes an SSE stream: related messages, then the response, then the end. Messages not
 * related to a live request go on the session's standalone stream (the GET stream), or wait in
 * the event store until one is opened. Every message goes on exactly one stream.
 *
 * Resumability (not in stateless mode). Each SSE event has an id `<streamId>:<seq>` and is kept
 * in a bounded per-session {@link EventStore}. A GET with `Last-Event-ID` replays that stream's
 * later events and, if the stream is still live (its request unanswered, or the standalone
 * stream), carries on as that stream. On 2025-11-25 sessions every SSE response starts with a
 * priming event (an id, a `retry` field, empty data) so even a stream cut before its first
 * message can be resumed.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { ErrorCode } from "../jsonrpc/errors.ts";
import { encodeMessage, IdTable, type JsonRpcId, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { formatSseEvent } from "../jsonrpc/sse.ts";
import { versionAtLeast } from "../mcp/versions.ts";
import { EventStore, formatEventId, parseEventId, type EventStoreOptions, type StoredEvent } from "./event-store.ts";
import { Channel, STANDALONE } from "./http-channel.ts";
import { HTTP_REFUSAL_CODE, isWritable as writable, sendJson, sendRpcError, startEventStream, writeBounded } from "./http-guard.ts";
import type { AuthInfo } from "./http-protected.ts";
import type { Transport, TransportSendOptions } from "./transport.ts";
import { TransportLifecycle } from "./lifecycle.ts";

export interface StreamableHttpSessionTransportOptions {
  /** The `Mcp-Session-Id`; `undefined` in stateless mode. */
  sessionId: string | undefined;
  /** One POST, no event ids, no standalone stream; the transport closes once that POST is answered. */
  stateless?: boolean;
  /**
   * Stateless mode: the client initialized elsewhere, at this version. The MCP server session
   * reads it and starts initialized (see `ServerSession`).
   */
  initializedProtocolVersion?: string;
  eventStore?: EventStoreOptions;
  /** `retry:` sent in priming events, ms. Default 1000. */
  retryMs?: number;
  /** Interval of keep-alive comments on open SSE responses, ms. Default 15 000. */
  keepAliveMs?: number;
  /** Stateless era: the POST's headers, for checks that need the body's meaning (`Mcp-Param-*`). */
  requestHeaders?: Readonly<Record<string, string | string[] | undefined>>;
  /** HTTP status of a response sent as plain JSON (the stateless era's errors). Default 200. */
  statusOf?: (message: JsonRpcMessage | JsonRpcMessage[]) => number;
  /** The verified principal of the request that opened it (a protected server only). */
  authInfo?: AuthInfo;
  /** Called once when the transport closes (the server forgets the session). */
  onEnd?: () => void;
  /** Called whenever one of its HTTP responses closes (the server restarts its idle clock). */
  onResponseClosed?: () => void;
}

const DONE = Promise.resolve();

/** The name in a stateless transport's errors: one string for every POST, not one built per POST. */
const STATELESS_LABEL = "HTTP session (stateless)";

/**
 * The transport of one session (or, in stateless mode, of one POST). Created by
 * `StreamableHttpServer`, which hands it to `onSession`.
 *
 * For tool handlers that want SSE polling (SEP-1699) it offers {@link closeRequestStream}:
 *
 * ```ts
 * server.tool(def, async (args, ctx) => {
 *   const t = ctx.session.transport;
 *   if (t instanceof StreamableHttpSessionTransport) t.closeRequestStream(ctx.requestId);
 *   // ... the result is kept and delivered when the client resumes with GET + Last-Event-ID
 * });
 * ```
 */
export class StreamableHttpSessionTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  readonly sessionId: string | undefined;
  /** Set in stateless mode for a non-initialize POST (see {@link StreamableHttpSessionTransportOptions}). */
  readonly initializedProtocolVersion: string | undefined;
  /** See {@link StreamableHttpSessionTransportOptions.requestHeaders}. */
  readonly requestHeaders: StreamableHttpSessionTransportOptions["requestHeaders"];
  /**
   * On a protected server (`protectedResource`), the verified principal of the session's
   * latest request; handlers read it as `ctx.auth`. Undefined otherwise.
   */
  authInfo: AuthInfo | undefined;

  private version: string | undefined;
  private readonly stateless: boolean;
  private readonly store: EventStore | undefined;
  private readonly standalone: Channel | undefined;
  private readonly byRequest = new IdTable<Channel>();
  /**
   * Live event streams by id (the standalone one included), for resumption. Not in stateless
   * mode, which resumes nothing: one map less for every POST (docs/decisions.md 171).
   */
  private readonly streams: Map<string, Channel> | undefined;
  private readonly retryMs: number;
  private readonly keepAliveMs: number;
  private readonly maxBuffered: number;
  private readonly onEnd: (() => void) | undefined;
  private readonly onResponseClosed: (() => void) | undefined;
  private readonly statusOf: StreamableHttpSessionTransportOptions["statusOf"];
  private nextStream = 0;
  private openResponses = 0;
  private readonly life: TransportLifecycle;

  constructor(options: StreamableHttpSessionTransportOptions) {
    this.sessionId = options.sessionId;
    this.life = new TransportLifecycle(this, options.sessionId === undefined ? STATELESS_LABEL : `HTTP session ${options.sessionId}`);
    this.stateless = options.stateless === true;
    this.initializedProtocolVersion = options.initializedProtocolVersion;
    this.requestHeaders = options.requestHeaders;
    this.authInfo = options.authInfo;
    this.version = options.initializedProtocolVersion;
    this.retryMs = options.retryMs ?? 1000;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
    this.onEnd = options.onEnd;
    this.onResponseClosed = options.onResponseClosed;
    this.statusOf = options.statusOf;
    if (!this.stateless) {
      this.store = new EventStore(options.eventStore);
      this.standalone = new Channel(undefined, 0, undefined);
      this.standalone.streamId = STANDALONE;
      this.streams = new Map([[STANDALONE, this.standalone]]);
    }
    // A client that stops reading is cut off once this much is queued; it can resume.
    this.maxBuffered = Math.max(1024 * 1024, this.store?.maxBytes ?? 0);
  }

  /** The negotiated protocol version (from `setProtocolVersion`). */
  get protocolVersion(): string | undefined {
    return this.version;
  }

  /** True once `start()` was called (the MCP server connected). */
  get connected(): boolean {
    return this.life.state !== "new";
  }

  /** True once closed. */
  get closed(): boolean {
    return this.life.ending;
  }

  /** True while an HTTP response of this session is open (it is not idle). */
  get busy(): boolean {
    return this.openResponses > 0;
  }

  /** True while a request of this session waits for its answer (a GET stream alone does not count). */
  get answering(): boolean {
    return this.byRequest.size > 0;
  }

  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  setProtocolVersion(version: string): void {
    this.version = version;
  }

  send(message: JsonRpcMessage | JsonRpcMessage[], options?: TransportSendOptions): Promise<void> {
    if (this.life.state !== "open") return Promise.reject(this.life.notOpen());
    try {
      if (Array.isArray(message)) this.routeBatch(message);
      else if ("method" in message) {
        const related = options?.relatedRequestId;
        const ch = related === undefined ? undefined : this.byRequest.get(related);
        if (ch) this.emit(ch, message, false);
        else if (this.standalone) this.emit(this.standalone, message, false);
      } else {
        const ch = message.id === null ? undefined : this.byRequest.get(message.id);
        // Nobody waits for it (cancelled, or unknown): responses never go on the standalone stream.
        if (ch) {
          this.byRequest.delete(message.id as JsonRpcId);
          this.emit(ch, message, --ch.outstanding === 0);
        }
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return DONE;
  }

  /**
   * SEP-1699 polling: ends the HTTP response that carries request `requestId` now. What the
   * handler sends afterwards, its result included, is kept in the event store and delivered
   * when the client resumes with GET + `Last-Event-ID`. A POST still waiting for a JSON answer
   * first becomes an SSE stream with a priming event, so the client has an id to resume from.
   * Returns false (and does nothing) when the request has no open response, in stateless
   * mode, or when the client could not resume (no event id sent yet and the session predates
   * 2025-11-25, whose clients expect no priming event).
   */
  closeRequestStream(requestId: JsonRpcId): boolean {
    const ch = this.byRequest.get(requestId);
    if (!ch || !this.store || !writable(ch.res)) return false;
    if (ch.streamId === undefined) {
      if (!this.priming) return false;
      this.openEventStream(ch, ch.res);
    } else if (ch.seq === 0 && !this.priming) {
      return false;
    }
    ch.endConnection();
    return true;
  }

  /**
   * Serves a POST (called by the server). `message` is the parsed body, already checked to be
   * valid JSON-RPC; `requestIds` the ids of the requests in it. Notifications and responses
   * alone get 202; requests get their answers.
   */
  acceptPost(res: ServerResponse, message: unknown, requestIds: readonly JsonRpcId[], headers?: OutgoingHttpHeaders): void {
    if (this.life.ending) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: session terminated");
      return;
    }
    if (requestIds.length === 0) {
      this.deliver(message);
      res.writeHead(202, headers).end();
      if (this.stateless) void this.close();
      return;
    }
    for (const id of requestIds) {
      if (this.byRequest.has(id)) {
        const single = requestIds.length === 1;
        sendRpcError(res, 400, ErrorCode.InvalidRequest, `Invalid Request: id ${JSON.stringify(id)} is already in use`, undefined, single ? id : null);
        if (this.stateless) void this.close();
        return;
      }
    }
    const ch = new Channel(res, requestIds.length, headers);
    for (const id of requestIds) this.byRequest.set(id, ch);
    this.track(ch, res);
    this.deliver(message);
  }

  /**
   * Serves a GET (called by the server): with `lastEventId`, resumes that stream; without,
   * opens the standalone stream (409 if it is already open) and sends what waited for it.
   */
  openGet(res: ServerResponse, lastEventId: string | undefined): void {
    if (this.life.ending || !this.standalone || !this.store) {
      sendRpcError(res, 404, HTTP_REFUSAL_CODE, "Not Found: session terminated");
      return;
    }
    if (lastEventId !== undefined) {
      const at = parseEventId(lastEventId);
      if (!at || Number(at.streamId) > this.nextStream) {
        sendRpcError(res, 400, HTTP_REFUSAL_CODE, "Bad Request: Last-Event-ID does not name a stream of this session");
        return;
      }
      this.attach(this.streams?.get(at.streamId), res, lastEventId, this.store.after(at.streamId, at.seq));
      return;
    }
    const ch = this.standalone;
    if (writable(ch.res)) {
      sendRpcError(res, 409, HTTP_REFUSAL_CODE, "Conflict: this session already has an open GET stream");
      return;
    }
    this.attach(ch, res, formatEventId(STANDALONE, ch.delivered), this.store.after(STANDALONE, ch.delivered));
  }

  /** Ends every open response and forgets the session. `onclose` fires once. */
  close(): Promise<void> {
    return this.life.close(() => this.release());
  }

  private release(): void {
    // A stateless POST's transport closes once its answer is out: nothing left to end.
    const open = this.byRequest.size + (this.streams?.size ?? 0);
    const channels = open === 0 ? [] : new Set([...this.byRequest.values(), ...(this.streams?.values() ?? [])]);
    for (const ch of channels) {
      if (ch.streamId === undefined) {
        if (writable(ch.res)) sendRpcError(ch.res, 404, HTTP_REFUSAL_CODE, "Not Found: session terminated");
      } else {
        ch.endConnection();
      }
    }
    this.byRequest.clear();
    this.streams?.clear();
    this.store?.clear();
    // The lifecycle reports the end (onclose) as soon as this returns, before close() does, as
    // the server's bookkeeping expects.
    this.onEnd?.();
  }

  /** Priming events (and so `retry`) are sent from 2025-11-25 on, when streams are resumable. */
  private get priming(): boolean {
    return this.store !== undefined && versionAtLeast(this.version, "2025-11-25");
  }

  private deliver(message: unknown): void {
    try {
      this.onmessage?.(message);
    } catch (err) {
      // Plain: the value was thrown by the caller's onmessage; it is passed on, not classified.
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
    if (Array.isArray(message)) for (const m of message) this.noteCancel(m);
    else this.noteCancel(message);
  }

  /**
   * A cancelled request gets no response (the peer drops it), so its POST must not wait for
   * one: it ends with 202 (or, as a stream, just ends).
   */
  private noteCancel(m: unknown): void {
    const n = m as { method?: unknown; params?: { requestId?: unknown } };
    if (n.method !== "notifications/cancelled") return;
    const id = n.params?.requestId;
    if (typeof id !== "string" && typeof id !== "number") return;
    const ch = this.byRequest.get(id);
    if (!ch) return;
    this.byRequest.delete(id);
    if (--ch.outstanding > 0) return;
    if (ch.streamId !== undefined) this.complete(ch);
    else if (writable(ch.res)) ch.res.writeHead(202, ch.headers).end();
  }

  private routeBatch(items: JsonRpcMessage[]): void {
    let ch: Channel | undefined;
    let answered = 0;
    for (const item of items) {
      const id = (item as { id?: unknown }).id;
      if ("method" in item || (typeof id !== "string" && typeof id !== "number")) continue;
      const owner = this.byRequest.get(id);
      if (!owner || (ch && owner !== ch)) continue;
      ch = owner;
      this.byRequest.delete(id);
      answered++;
    }
    if (!ch) return;
    ch.outstanding -= answered;
    this.emit(ch, items, ch.outstanding === 0);
  }

  /** Sends one message on `ch`; `final` means it completes a POST. */
  private emit(ch: Channel, message: JsonRpcMessage | JsonRpcMessage[], final: boolean): void {
    // A response always encodes (a result that cannot be serialised becomes -32603), so a
    // POST always ends; a request or notification that cannot be serialised makes send() reject.
    const data = encodeMessage(message);
    if (typeof data !== "string") throw data;
    if (ch.streamId === undefined) {
      const res = ch.res;
      if (!writable(res)) return; // the client left before any event id: nothing can resume it
      if (final) return sendJson(res, this.statusOf?.(message) ?? 200, data, ch.headers);
      this.openEventStream(ch, res);
    }
    const seq = ++ch.seq;
    let id: string | undefined;
    if (this.store) {
      id = formatEventId(ch.streamId!, seq);
      this.store.append(ch.streamId!, seq, data);
    }
    if (writable(ch.res)) {
      this.write(ch.res, formatSseEvent(id === undefined ? { data } : { id, data }));
      ch.delivered = seq;
    }
    if (final) this.complete(ch);
  }

  /** Turns a waiting POST into an event stream on its own response. */
  private openEventStream(ch: Channel, res: ServerResponse): void {
    ch.streamId = String(++this.nextStream);
    this.streams?.set(ch.streamId, ch);
    startEventStream(res, ch.headers);
    if (this.priming) this.write(res, formatSseEvent({ id: formatEventId(ch.streamId, 0), retry: this.retryMs, data: "" }));
    ch.startKeepAlive(this.keepAliveMs, this.maxBuffered);
  }

  /**
   * Puts `res` in charge of stream `ch` (or, when `ch` is undefined, a finished stream: replay
   * and end). The priming event's id is the position the replay starts from, so a connection
   * lost at any point resumes without loss.
   */
  private attach(ch: Channel | undefined, res: ServerResponse, position: string, replay: StoredEvent[]): void {
    startEventStream(res);
    if (this.priming) this.write(res, formatSseEvent({ id: position, retry: this.retryMs, data: "" }));
    for (const e of replay) this.write(res, formatSseEvent({ id: formatEventId(e.streamId, e.seq), data: e.data }));
    if (!ch) {
      res.end();
      return;
    }
    if (replay.length > 0) ch.delivered = Math.max(ch.delivered, replay[replay.length - 1].seq);
    // A resume replaces a connection the client has given up on.
    if (ch.res !== undefined) ch.endConnection();
    ch.res = res;
    this.track(ch, res);
    ch.startKeepAlive(this.keepAliveMs, this.maxBuffered);
  }

  private write(res: ServerResponse, text: string): void {
    writeBounded(res, text, this.maxBuffered);
  }

  /** Counts `res` as open until it closes, and detaches it from `ch` then. */
  private track(ch: Channel, res: ServerResponse): void {
    this.openResponses++;
    res.once("close", () => {
      this.openResponses--;
      this.onResponseClosed?.();
      if (ch.res === res) ch.detach();
      // Stateless: the one exchange is over (answered, or the client left: nothing can resume).
      if (this.stateless) void this.close();
    });
  }

  /** Every request of a streamed POST is answered: end it; a later resume only replays. */
  private complete(ch: Channel): void {
    if (ch.streamId !== undefined && ch.streamId !== STANDALONE) this.streams?.delete(ch.streamId);
    ch.endConnection();
  }
}
