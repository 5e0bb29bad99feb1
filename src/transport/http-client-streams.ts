/**
 * The receiving side of the Streamable HTTP client: which request a response completes, SSE
 * streams and their resumption (GET + `Last-Event-ID` under bounded backoff, honouring the
 * server's `retry`), and the GET stream for server-initiated messages.
 *
 * Each stream keeps its own last event id. An id counts once its event is complete, so a
 * stream cut inside an event is resumed before it and that event is replayed, not lost.
 */
import type * as http from "node:http";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { IdTable, type JsonRpcId } from "../jsonrpc/message.ts";
import { SseParser, type SseEvent } from "../jsonrpc/sse.ts";
import { AuthError } from "./auth-error.ts";
import type { BearerAuth } from "./http-auth.ts";
import { drain, mediaType, statusError } from "./http-body.ts";
import { readSse, reconnectDelay } from "./http-event-stream.ts";
import { HttpCall } from "./http-request.ts";

/** A POST stream still open this long after its last response is dropped. */
const LINGER_MS = 5_000;

/** What an exchange with nothing left to wait for hands out. */
const NO_IDS: readonly JsonRpcId[] = [];

/** Resumption state of one SSE stream (a POST's stream continued by GETs, or the GET stream). */
interface StreamState {
  lastEventId: string;
  retry: number | undefined;
  /** Failed (re)connections in a row; any received event resets it. */
  attempts: number;
  call: HttpCall | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** A GET of this stream was refused (401/403) and sent again with a new token; reset by a 2xx. */
  authRetried?: boolean;
}

/** A POST carrying requests, until each has its response. */
export class Exchange implements StreamState {
  lastEventId = "";
  retry: number | undefined = undefined;
  attempts = 0;
  call: HttpCall | undefined = undefined;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  authRetried = false;
  /**
   * The request still waiting for its response, in an exchange of one (the usual case: no Set
   * to build and empty per request, docs/decisions.md 164); a batch's are in {@link batch}.
   */
  private oneId: JsonRpcId | undefined;
  /** `[oneId]`, the list given at construction: handed out while that request waits, never rebuilt. */
  private readonly oneList: readonly JsonRpcId[] | undefined;
  private readonly batch: Set<JsonRpcId> | undefined;
  done = false;
  readonly promise: Promise<void>;
  resolve!: () => void;
  reject!: (e: Error) => void;
  captured: Record<string, unknown> | undefined = undefined;
  private readonly firstId: JsonRpcId | undefined;
  private readonly count: number;
  private readonly method: string | undefined;
  readonly swallow: boolean;
  private readonly fixedLabel: string | undefined;

  /**
   * @param method the request's method; undefined for a batch
   * @param swallow internal re-initialize: keep the response here instead of delivering it
   * @param fixedLabel a name for errors and logs, instead of the one built from method and id
   */
  constructor(ids: readonly JsonRpcId[], method: string | undefined, swallow: boolean, fixedLabel?: string) {
    this.method = method;
    this.swallow = swallow;
    this.fixedLabel = fixedLabel;
    if (ids.length === 1) {
      this.oneId = ids[0];
      this.oneList = ids;
    } else {
      this.batch = new Set(ids);
    }
    this.firstId = ids[0];
    this.count = ids.length;
    this.promise = new Promise<void>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  /** The ids still waiting for their responses (a snapshot; an exchange of one builds no list). */
  waitingIds(): readonly JsonRpcId[] {
    if (this.batch !== undefined) return [...this.batch];
    return this.oneId === undefined ? NO_IDS : this.oneList!;
  }

  /** How many responses are still to come. */
  get waiting(): number {
    return this.batch !== undefined ? this.batch.size : this.oneId === undefined ? 0 : 1;
  }

  /** Takes `id` off the waiting list (its response came, or it was cancelled). */
  settle(id: JsonRpcId): void {
    if (this.batch !== undefined) this.batch.delete(id);
    else if (this.oneId === id) this.oneId = undefined;
  }

  /** How errors and logs name the exchange; built on demand (most exchanges never need it). */
  get label(): string {
    if (this.fixedLabel !== undefined) return this.fixedLabel;
    return this.method === undefined ? `batch of ${this.count} requests` : `request "${this.method}" (id ${this.firstId})`;
  }
}

interface GetStream extends StreamState {
  stopped: boolean;
}

/** What the transport lends to its streams. */
export interface StreamHost {
  readonly url: URL;
  isClosed(): boolean;
  hasSession(): boolean;
  /** A GET for the event stream, with the session headers (and `Last-Event-ID` when not ""). */
  openGet(lastEventId: string): HttpCall;
  /** The transport's bearer tokens, when it has an `auth` provider. */
  readonly auth?: BearerAuth | undefined;
  message(value: unknown): void;
  error(e: Error): void;
  log(msg: string): void;
}

export interface StreamSettings {
  maxBody: number;
  initialDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
}

export class ReplyStreams {
  private readonly host: StreamHost;
  private readonly o: StreamSettings;
  private readonly exchanges = new IdTable<Exchange>();
  private getStream: GetStream | undefined;

  constructor(host: StreamHost, settings: StreamSettings) {
    this.host = host;
    this.o = settings;
  }

  /** Registers an exchange's requests; it settles when all of them have their responses. */
  track(ex: Exchange): Exchange {
    for (const id of ex.waitingIds()) this.exchanges.set(id, ex);
    return ex;
  }

  /** Settles an exchange once: resolves, or aborts its HTTP call and rejects. */
  finish(ex: Exchange, err?: Error): void {
    if (ex.done) return;
    ex.done = true;
    for (const id of ex.waitingIds()) if (this.exchanges.get(id) === ex) this.exchanges.delete(id);
    if (ex.timer !== undefined) clearTimeout(ex.timer);
    if (err) {
      ex.call?.abort(err);
      ex.reject(err);
    } else {
      // An SSE reply should end now; do not wait forever. (A JSON reply has ended already.)
      if (ex.call && !ex.call.complete) ex.call.arm(LINGER_MS);
      ex.resolve();
    }
  }

  /** Fails every unsettled exchange and stops the GET stream (the transport is closing). */
  closeAll(err: Error): void {
    this.stopGet();
    for (const ex of new Set(this.exchanges.values())) this.finish(ex, err);
  }

  /** The peer gave up on a request: stop reading its stream. */
  cancelled(id: JsonRpcId): void {
    const ex = this.exchanges.get(id);
    if (!ex) return;
    ex.settle(id);
    this.exchanges.delete(id);
    if (ex.waiting === 0) this.finish(ex, new BridgeError("CANCELLED", `${ex.label} was cancelled`));
  }

  /** Hands a message on, then settles the exchange its response completes. */
  deliver(value: unknown): void {
    if (!Array.isArray(value)) {
      const id = responseId(value);
      const ex = id === undefined ? undefined : this.exchanges.get(id);
      if (ex?.swallow) {
        ex.captured = value as Record<string, unknown>;
        this.answered(ex, id!);
        return;
      }
      this.host.message(value);
      if (ex) this.answered(ex, id!);
      return;
    }
    this.host.message(value);
    for (const item of value) {
      const id = responseId(item);
      const ex = id === undefined ? undefined : this.exchanges.get(id);
      if (ex) this.answered(ex, id!);
    }
  }

  private answered(ex: Exchange, id: JsonRpcId): void {
    ex.settle(id);
    this.exchanges.delete(id);
    if (ex.waiting === 0) this.finish(ex);
  }

  /**
   * Reads a request's SSE reply. When it ends before every response came, resumes it from
   * its last event id; without one, or past the attempts, the exchange fails.
   */
  async readRequestStream(ex: Exchange, call: HttpCall, res: http.IncomingMessage): Promise<void> {
    call.disarm();
    const err = await this.consume(ex, call, res);
    if (ex.done || this.host.isClosed()) return;
    if (err instanceof BridgeError && err.code === "LIMIT_EXCEEDED") throw err;
    this.resumeLater(ex, err);
  }

  private resumeLater(ex: Exchange, cause: Error | undefined): void {
    const why = cause ? ` (${cause.message})` : "";
    if (ex.lastEventId === "") {
      this.finish(ex, new BridgeError("HTTP_ERROR", `the event stream of ${ex.label} ended before its response${why}, with no event id to resume from`));
      return;
    }
    ex.attempts++;
    if (ex.attempts > this.o.maxAttempts) {
      this.finish(ex, new BridgeError("HTTP_ERROR", `gave up resuming the event stream of ${ex.label} after ${this.o.maxAttempts} attempts${why}`));
      return;
    }
    const delay = reconnectDelay(ex.attempts, ex.retry, this.o.initialDelayMs, this.o.maxDelayMs);
    this.host.log(`event stream of ${ex.label} ended${why}; resuming after event "${ex.lastEventId}" in ${delay} ms`);
    ex.timer = setTimeout(() => {
      ex.timer = undefined;
      this.resume(ex).catch((err: Error) => this.finish(ex, err));
    }, delay);
  }

  /** GET + Last-Event-ID: the rest of a request's stream, response included. */
  private async resume(ex: Exchange): Promise<void> {
    if (ex.done || this.host.isClosed()) return;
    const hadSession = this.host.hasSession();
    const sentWith = this.host.auth?.current;
    const call = this.host.openGet(ex.lastEventId);
    ex.call = call;
    let res: http.IncomingMessage;
    try {
      res = await call.response;
    } catch (err) {
      if (!ex.done) this.resumeLater(ex, err as Error);
      return;
    }
    const status = res.statusCode ?? 0;
    const label = `resuming ${ex.label}`;
    if (status === 405 || (status === 404 && hadSession) || status === 401 || status === 403) {
      const e = await statusError(call, res, "GET", this.host.url, label);
      if (await this.authRetry(ex, e, sentWith)) return this.resume(ex);
      throw status === 404 ? new BridgeError("HTTP_ERROR", `${e.message}: the session expired, the response is lost`, { details: e.details }) : e;
    }
    if (status < 200 || status > 299) {
      this.resumeLater(ex, await statusError(call, res, "GET", this.host.url, label));
      return;
    }
    ex.authRetried = false;
    if (mediaType(res) !== "text/event-stream") {
      call.abort();
      throw new BridgeError("HTTP_ERROR", `${label}: GET answered content type "${mediaType(res)}", not text/event-stream`);
    }
    await this.readRequestStream(ex, call, res);
  }

  /** Opens the GET stream unless it is open, or was refused (405) for this session. */
  startGet(): void {
    if (this.getStream || this.host.isClosed()) return;
    const s: GetStream = { lastEventId: "", retry: undefined, attempts: 0, call: undefined, timer: undefined, stopped: false };
    this.getStream = s;
    this.connectGet(s).catch((err: Error) => this.host.error(err));
  }

  /** Stops the GET stream; `forget` lets {@link startGet} open a new one (a new session). */
  stopGet(forget = false): void {
    const s = this.getStream;
    if (!s) return;
    s.stopped = true;
    if (s.timer !== undefined) clearTimeout(s.timer);
    s.call?.abort(new BridgeError("CLOSED", "GET stream stopped"));
    if (forget) this.getStream = undefined;
  }

  private async connectGet(s: GetStream): Promise<void> {
    await this.host.auth?.prepare();
    if (s.stopped || this.host.isClosed()) return;
    const hadSession = this.host.hasSession();
    const sentWith = this.host.auth?.current;
    const call = this.host.openGet(s.lastEventId);
    s.call = call;
    let res: http.IncomingMessage;
    try {
      res = await call.response;
    } catch (err) {
      this.reconnectGet(s, err as Error);
      return;
    }
    const status = res.statusCode ?? 0;
    if (status === 405 || (status === 404 && hadSession)) {
      await drain(call, res);
      s.stopped = true;
      this.host.log(status === 405
        ? "the server offers no GET stream (405); server messages arrive only on POST replies"
        : "GET stream: session not found (404); it reopens after the next re-initialize");
      return;
    }
    if (status < 200 || status > 299) {
      const e = await statusError(call, res, "GET", this.host.url, "GET stream");
      if (e instanceof AuthError) {
        let again: boolean;
        try {
          again = await this.authRetry(s, e, sentWith);
        } catch (err) {
          s.stopped = true;
          this.host.error(err as Error);
          return;
        }
        if (again) return this.connectGet(s);
        s.stopped = true;
        this.host.error(e);
      } else {
        this.reconnectGet(s, e);
      }
      return;
    }
    s.authRetried = false;
    if (mediaType(res) !== "text/event-stream") {
      call.abort();
      s.stopped = true;
      this.host.error(new BridgeError("HTTP_ERROR", `GET stream: the server answered content type "${mediaType(res)}", not text/event-stream`));
      return;
    }
    call.disarm();
    const err = await this.consume(s, call, res);
    if (err instanceof BridgeError && err.code === "LIMIT_EXCEEDED" && !s.stopped) {
      s.stopped = true;
      this.host.error(err);
      return;
    }
    this.reconnectGet(s, err);
  }

  /**
   * A GET of `state` was refused with `e`: true when the auth provider supplied a new token and
   * the GET may go once more (once per refusal in a row). Rejects with the provider's error.
   */
  private async authRetry(state: StreamState, e: Error, sentWith: string | undefined): Promise<boolean> {
    const auth = this.host.auth;
    if (auth === undefined || !(e instanceof AuthError) || state.authRetried === true) return false;
    state.authRetried = true;
    await auth.recover(e, sentWith);
    return !this.host.isClosed();
  }

  private reconnectGet(s: GetStream, cause: Error | undefined): void {
    if (s.stopped || this.host.isClosed()) return;
    s.attempts++;
    if (s.attempts > this.o.maxAttempts) {
      s.stopped = true;
      const why = cause ? `: ${cause.message}` : "";
      this.host.error(new BridgeError("HTTP_ERROR", `GET stream: ${this.o.maxAttempts} reconnections failed in a row; giving up${why}`));
      return;
    }
    const delay = reconnectDelay(s.attempts, s.retry, this.o.initialDelayMs, this.o.maxDelayMs);
    s.timer = setTimeout(() => {
      s.timer = undefined;
      this.connectGet(s).catch((err: Error) => this.host.error(err));
    }, delay);
  }

  /** Reads one SSE response to its end, delivering messages and tracking id and retry. */
  private consume(state: StreamState, call: HttpCall, res: http.IncomingMessage): Promise<Error | undefined> {
    const parser = new SseParser({ maxEventSize: this.o.maxBody });
    const note = () => {
      if (parser.lastEventId !== "") state.lastEventId = parser.lastEventId;
      if (parser.retry !== undefined) state.retry = parser.retry;
    };
    return readSse(call, res, parser, (events) => {
      state.attempts = 0;
      note();
      for (const ev of events) if (!this.host.isClosed()) this.onEvent(ev);
    }).then((err) => {
      note();
      return err;
    });
  }

  private onEvent(ev: SseEvent): void {
    if (ev.data === "") return; // priming event or keep-alive
    if (ev.event !== "message") {
      this.host.log(`ignored an SSE event of type "${ev.event}"`);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(ev.data);
    } catch (err) {
      this.host.error(new BridgeError("PARSE_ERROR", `an SSE message event is not JSON: ${errorMessage(err)}`, { cause: err }));
      return;
    }
    this.deliver(value);
  }
}

/** The id of a response (not of a server request, whose ids live in another space). */
function responseId(v: unknown): JsonRpcId | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const m = v as { method?: unknown; id?: unknown };
  if (m.method !== undefined) return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}
