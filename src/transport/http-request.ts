/**
 * The low-level HTTP exchange shared by the HTTP client transports, over node:http/node:https.
 *
 * Policies, all on purpose:
 * - Redirects: only 307 and 308 (which keep method and body), at most {@link MAX_REDIRECTS}, and
 *   only within the origin of the configured URL. Any redirect to another origin is refused
 *   before a single byte (or header) goes there; 301/302/303 are refused too, since they would
 *   turn a POST into a GET.
 * - No timer is armed unless the caller asks; {@link HttpCall.arm} bounds whatever part of the
 *   exchange the caller chooses (headers, a body).
 * - Body readers (./http-body.ts) enforce a byte limit and destroy the socket when it is passed.
 * - No listener is ever added to a socket or an agent: only to the per-request `req`/`res`
 *   objects, which die with the request. Keep-alive reuse is left to the agent.
 */
import * as http from "node:http";
import * as https from "node:https";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";

const MAX_REDIRECTS = 3;

export type HttpMethod = "GET" | "POST" | "DELETE";

export interface HttpCallOptions {
  method: HttpMethod;
  /** Not changed afterwards: what node:http needs of it is worked out once per URL object. */
  url: URL;
  headers: http.OutgoingHttpHeaders;
  body?: string;
  agent: http.Agent;
  /** Arms the timer at once (see {@link HttpCall.arm}). */
  timeoutMs?: number;
  /** Every unfinished call registers here, so a transport can abort all of them on close. */
  live?: LiveCalls;
  /**
   * Send once more on a fresh connection when a reused keep-alive socket turns out to be dead
   * (the server closed it as the request went out). Only for exchanges that are safe to repeat:
   * a repeated POST could run a tool twice, so POSTs carrying requests leave this off.
   */
  retryStaleSocket?: boolean;
}

/** The origin and path of a URL, for messages (the query string may hold a secret). */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * The unfinished calls of one transport, so that its close() can abort them all. An intrusive
 * doubly linked list: joining and leaving allocate nothing (a Set's add/delete per call showed
 * in the HTTP benchmark's garbage collection).
 */
export class LiveCalls {
  /** @internal */
  head: HttpCall | undefined;

  /** Aborts every call still in progress. */
  abortAll(err: Error): void {
    const all: HttpCall[] = [];
    for (let c = this.head; c !== undefined; c = c.nextLive) all.push(c);
    for (const c of all) c.abort(err);
  }
}

/** One HTTP request and its response, abortable at any point. */
export class HttpCall {
  /** @internal Links in {@link LiveCalls}. */
  prevLive: HttpCall | undefined;
  /** @internal */
  nextLive: HttpCall | undefined;
  /** Resolves with the final response (after same-origin redirects), whatever its status. */
  readonly response: Promise<http.IncomingMessage>;
  private readonly o: HttpCallOptions;
  private req: http.ClientRequest | undefined;
  private res: http.IncomingMessage | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reason: Error | undefined;
  private ended = false;
  private retried = false;

  constructor(options: HttpCallOptions) {
    this.o = options;
    const live = options.live;
    if (live) {
      this.nextLive = live.head;
      if (live.head) live.head.prevLive = this;
      live.head = this;
    }
    if (options.timeoutMs) this.arm(options.timeoutMs);
    this.response = new Promise((resolve, reject) => this.issue(options.url, 0, resolve, reject));
  }

  /** Why the call was aborted (timeout, close, limit), if it was. */
  get abortReason(): Error | undefined {
    return this.reason;
  }

  /** True once the response body has been read to its end (or the call is over). */
  get complete(): boolean {
    return this.ended || this.res?.complete === true;
  }

  /** Aborts the call with a TIMEOUT error unless it finishes within `ms`. Replaces any earlier timer. */
  arm(ms: number): void {
    if (this.ended) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.abort(new BridgeError("TIMEOUT", `${this.o.method} ${displayUrl(this.o.url)} timed out after ${ms} ms`, {
        details: { method: this.o.method, url: displayUrl(this.o.url), timeoutMs: ms },
      }));
    }, ms);
  }

  disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Destroys the request and its socket. A no-op once the response has been fully read. */
  abort(reason: Error = new BridgeError("CLOSED", "request aborted")): void {
    if (this.ended) return;
    this.reason ??= reason;
    // Without an argument: destroy(err) would emit 'error' on a response nobody may be reading.
    if (this.res) this.res.destroy();
    else this.req?.destroy(this.reason);
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.disarm();
    const live = this.o.live;
    if (live) {
      if (this.prevLive) this.prevLive.nextLive = this.nextLive;
      else if (live.head === this) live.head = this.nextLive;
      if (this.nextLive) this.nextLive.prevLive = this.prevLive;
      this.prevLive = this.nextLive = undefined;
    }
  }

  private issue(url: URL, hops: number, resolve: (r: http.IncomingMessage) => void, reject: (e: Error) => void): void {
    const o = this.o;
    if (this.reason) {
      reject(this.reason);
      return;
    }
    let req: http.ClientRequest;
    try {
      const t = targetOf(url);
      req = (t.protocol === "https:" ? https : http).request({
        protocol: t.protocol,
        hostname: t.hostname,
        port: t.port,
        path: t.path,
        method: o.method,
        headers: o.headers,
        agent: o.agent,
      });
    } catch (err) {
      this.finish();
      reject(new BridgeError("HTTP_ERROR", `${o.method} ${displayUrl(url)}: ${errorMessage(err)}`, { cause: err }));
      return;
    }
    this.req = req;
    req.on("error", (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (!this.reason && o.retryStaleSocket && req.reusedSocket && !this.retried && (code === "ECONNRESET" || code === "EPIPE")) {
        this.retried = true;
        this.issue(url, hops, resolve, reject);
        return;
      }
      this.finish();
      reject(this.reason ?? networkError(o.method, url, err));
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      // Only a redirect reads `headers`, which Node builds on first use (docs/decisions.md 163).
      const location = status >= 300 && status < 400 ? res.headers.location : undefined;
      if (location !== undefined) {
        res.resume();
        const next = this.redirectTarget(url, status, location, hops);
        if (next instanceof Error) {
          this.finish();
          reject(next);
        } else {
          this.issue(next, hops + 1, resolve, reject);
        }
        return;
      }
      this.res = res;
      res.on("close", () => this.finish());
      resolve(res);
    });
    req.end(o.body);
  }

  private redirectTarget(from: URL, status: number, location: string, hops: number): URL | BridgeError {
    const method = this.o.method;
    let target: URL;
    try {
      target = new URL(location, from);
    } catch {
      return new BridgeError("HTTP_ERROR", `${method} ${displayUrl(from)} answered ${status} with an invalid Location`, {
        details: { status },
      });
    }
    const details = { status, url: displayUrl(from), location: displayUrl(target) };
    if (target.origin !== this.o.url.origin) {
      return new BridgeError(
        "HTTP_ERROR",
        `${method} ${displayUrl(from)} answered ${status} redirecting to another origin (${target.origin}); ` +
          `refused: configured headers never leave ${this.o.url.origin}. Configure the new URL directly if you trust it`,
        { details },
      );
    }
    if (status !== 307 && status !== 308) {
      return new BridgeError(
        "HTTP_ERROR",
        `${method} ${displayUrl(from)} answered ${status} redirecting to ${displayUrl(target)}; only 307/308 ` +
          `redirects are followed (they keep the method and body). Configure the new URL directly`,
        { details },
      );
    }
    if (hops >= MAX_REDIRECTS) {
      return new BridgeError("HTTP_ERROR", `${method} ${displayUrl(this.o.url)}: more than ${MAX_REDIRECTS} redirects`, { details });
    }
    return target;
  }
}

interface Target {
  protocol: string;
  hostname: string;
  port: string | undefined;
  path: string;
}

/**
 * What node:http needs of a URL, worked out once per URL object: a transport sends every POST
 * to the same URL, and each getter of a WHATWG URL builds a new string.
 */
const targets = new WeakMap<URL, Target>();

function targetOf(url: URL): Target {
  let t = targets.get(url);
  if (t === undefined) {
    const host = url.hostname;
    t = {
      protocol: url.protocol,
      hostname: host.startsWith("[") ? host.slice(1, -1) : host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
    };
    targets.set(url, t);
  }
  return t;
}

function networkError(method: string, url: URL, err: Error): BridgeError {
  return new BridgeError("HTTP_ERROR", `${method} ${displayUrl(url)} failed: ${err.message}`, {
    cause: err,
    details: { url: displayUrl(url), code: (err as NodeJS.ErrnoException).code },
  });
}
