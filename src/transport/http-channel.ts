/**
 * One stream of a Streamable HTTP session, server side: a POST exchange or the standalone (GET)
 * stream, and the HTTP response currently carrying it. A stream outlives its connections: a
 * client that resumes with `Last-Event-ID` hands it a new response.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { isWritable, SSE_KEEP_ALIVE, writeBounded } from "./http-guard.ts";

/** Stream id of the session's standalone stream; POST streams count up from "1". */
export const STANDALONE = "0";

export class Channel {
  /** The connection carrying the stream now; undefined while none is. */
  res: ServerResponse | undefined;
  /** Set once the channel is an event stream. */
  streamId: string | undefined;
  /** Last sequence number used on this stream. */
  seq = 0;
  /** Last sequence number written to some connection (what a fresh GET no longer owes). */
  delivered = 0;
  private keepAlive: ReturnType<typeof setInterval> | undefined;

  /** Requests of this POST not answered yet. */
  outstanding: number;
  /** Extra headers of the response (the session id on `initialize`). */
  readonly headers: OutgoingHttpHeaders | undefined;

  constructor(res: ServerResponse | undefined, outstanding: number, headers: OutgoingHttpHeaders | undefined) {
    this.res = res;
    this.outstanding = outstanding;
    this.headers = headers;
  }

  /**
   * Sends a keep-alive comment every `intervalMs` while a connection carries the stream, so
   * proxies do not cut an idle one. Idempotent; stopped by `detach`.
   */
  startKeepAlive(intervalMs: number, maxBuffered: number): void {
    if (this.keepAlive !== undefined) return;
    this.keepAlive = setInterval(() => {
      if (this.res) writeBounded(this.res, SSE_KEEP_ALIVE, maxBuffered);
    }, intervalMs);
    this.keepAlive.unref();
  }

  /** Forgets the connection (it closed, or is being replaced) and stops the keep-alive. */
  detach(): void {
    this.res = undefined;
    if (this.keepAlive !== undefined) clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /** Ends the connection carrying the stream, if any; the stream itself can still be resumed. */
  endConnection(): void {
    const res = this.res;
    this.detach();
    if (isWritable(res)) res.end();
  }
}
