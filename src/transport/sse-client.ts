/**
 * The client side of the legacy HTTP+SSE transport (MCP 2024-11-05), deprecated since
 * 2025-03-26 but still spoken by many servers.
 *
 * `start()` GETs the SSE URL and waits for the `endpoint` event, whose data is a URI (not
 * JSON) resolved against the SSE URL; an endpoint on another origin is refused, so the
 * configured headers never leave the origin the user chose. Every message is then POSTed there
 * (any 2xx, body ignored) and every reply arrives as a `message` event on the stream.
 *
 * There is no resumption in this protocol: when the stream drops, the transport ends
 * (`onclose` with the reason), and the peer fails its pending requests with it.
 */
import type * as http from "node:http";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { SseParser, type SseEvent } from "../jsonrpc/sse.ts";
import type { StreamableHttpClientTransportOptions } from "./http-client.ts";
import { clientBasics, type HttpClientBasics } from "./http-options.ts";
import { drain, mediaType, statusError } from "./http-body.ts";
import { readSse } from "./http-event-stream.ts";
import { carriesRequest } from "./http-options.ts";
import { HttpCall, LiveCalls, displayUrl, type HttpMethod } from "./http-request.ts";
import type { Transport } from "./transport.ts";
import { TransportLifecycle } from "./lifecycle.ts";

/**
 * Options of {@link SseClientTransport}. Of {@link StreamableHttpClientTransportOptions}, `openGetStream` and
 * `reconnect` do not apply (the legacy protocol has one stream and no resumption).
 */
export interface SseClientTransportOptions extends StreamableHttpClientTransportOptions {
  /** Time allowed for the stream to open and send its `endpoint` event, ms. Default `requestTimeoutMs`. */
  endpointTimeoutMs?: number;
}

/** @deprecated Renamed {@link SseClientTransportOptions}; this alias goes in the next release. */
export type SseClientOptions = SseClientTransportOptions;

/**
 * ```ts
 * const transport = new SseClientTransport({ url: "http://127.0.0.1:3001/sse" });
 * await new McpClient().connect(transport);
 * ```
 */
export class SseClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private readonly base: HttpClientBasics;
  private readonly endpointTimeoutMs: number;
  private readonly live = new LiveCalls();
  private postUrl: URL | undefined;
  private readonly life: TransportLifecycle;

  constructor(options: SseClientTransportOptions) {
    this.base = clientBasics(options, "SSE transport");
    this.life = new TransportLifecycle(this, `SSE transport for ${this.base.target}`);
    this.endpointTimeoutMs = options.endpointTimeoutMs ?? this.base.timeoutMs;
  }

  /** Where messages are POSTed, once the `endpoint` event arrived. */
  get endpoint(): string | undefined {
    return this.postUrl?.href;
  }

  /** Accepted for the Transport contract; the legacy protocol has no version header. */
  setProtocolVersion(_version: string): void {}

  /** One authorization budget for the whole connect (see `BearerAuth.connecting`). */
  setConnecting(connecting: boolean): void {
    this.base.auth?.connecting(connecting);
  }

  /** Opens the stream; resolves once the `endpoint` event arrived. Rejects with `AuthError` or `HTTP_ERROR`. */
  start(): Promise<void> {
    const auth = this.base.auth;
    return this.life.openWith(() => (auth ? auth.run(() => this.openStream()) : this.openStream()));
  }

  private async openStream(): Promise<void> {
    const call = this.newCall("GET", { ...this.base.configured, accept: "text/event-stream" }, undefined, this.endpointTimeoutMs);
    const res = await call.response;
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await statusError(call, res, "GET", this.base.url);
    if (mediaType(res) !== "text/event-stream") {
      call.abort();
      throw new BridgeError("HTTP_ERROR", `GET ${this.base.target} answered content type "${mediaType(res)}", not text/event-stream`, {
        details: { status },
      });
    }
    await new Promise<void>((resolve, reject) => {
      let waiting = true;
      let opened = false;
      const parser = new SseParser({ maxEventSize: this.base.maxBody });
      const ended = readSse(call, res, parser, (events) => {
        for (const ev of events) {
          if (this.life.ending) return;
          if (!waiting) {
            this.onEvent(ev);
          } else if (ev.event === "endpoint") {
            const refused = this.takeEndpoint(ev.data);
            waiting = false;
            if (refused) {
              call.abort(refused);
              reject(refused);
              return;
            }
            call.disarm();
            opened = true;
            resolve();
          } else {
            this.base.log(`ignored a "${ev.event}" event before the endpoint event`);
          }
        }
      });
      void ended.then((err) => {
        if (waiting) {
          waiting = false;
          call.abort();
          reject(err ?? new BridgeError("HTTP_ERROR", `the SSE stream of ${this.base.target} ended before its endpoint event`));
        } else if (opened) {
          this.streamEnded(err);
        }
      });
    });
  }

  async send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") throw this.life.notOpen();
    const auth = this.base.auth;
    return auth ? auth.run(() => this.post(message)) : this.post(message);
  }

  private async post(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    const url = this.postUrl!;
    const body = encodeMessage(message);
    if (typeof body !== "string") throw body;
    const repeatable = !carriesRequest(message);
    const call = this.newCall("POST", { ...this.base.configured, "content-type": "application/json" }, body, this.base.timeoutMs, url, repeatable);
    const res = await call.response;
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await statusError(call, res, "POST", url);
    await drain(call, res);
  }

  /** Drops the stream and frees the agent. Idempotent. */
  close(): Promise<void> {
    return this.life.close(() => this.shutdown(undefined));
  }

  private async shutdown(reason: Error | undefined): Promise<void> {
    const err = reason ?? closedError();
    this.live.abortAll(err);
    if (this.base.ownAgent) this.base.agent.destroy();
    this.life.ended(reason);
  }

  private newCall(
    method: HttpMethod, headers: http.OutgoingHttpHeaders, body: string | undefined, timeoutMs: number, url = this.base.url, repeatable = true,
  ): HttpCall {
    if (this.life.ending) throw closedError();
    const sent = this.base.auth ? this.base.auth.apply(headers, method, url) : headers;
    return new HttpCall({ method, url, headers: sent, body, agent: this.base.agent, timeoutMs, live: this.live, retryStaleSocket: repeatable });
  }

  /** Resolves the endpoint URI; returns the refusal, if any. */
  private takeEndpoint(data: string): BridgeError | undefined {
    let url: URL;
    try {
      url = new URL(data.trim(), this.base.url);
    } catch {
      return new BridgeError("HTTP_ERROR", `the endpoint event of ${this.base.target} is not a URI`);
    }
    if (url.origin !== this.base.url.origin) {
      return new BridgeError(
        "HTTP_ERROR",
        `the endpoint event of ${this.base.target} points to another origin (${url.origin}); refused: ` +
          `messages and configured headers stay on ${this.base.url.origin}`,
        { details: { endpointOrigin: url.origin } },
      );
    }
    this.postUrl = url;
    this.base.log(`messages go to ${displayUrl(url)}`);
    return undefined;
  }

  private onEvent(ev: SseEvent): void {
    if (ev.event !== "message") {
      this.base.log(`ignored an SSE event of type "${ev.event}"`);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(ev.data);
    } catch (err) {
      this.onerror?.(new BridgeError("PARSE_ERROR", `an SSE message event is not JSON: ${errorMessage(err)}`, { cause: err }));
      return;
    }
    try {
      this.onmessage?.(value);
    } catch (err) {
      // Plain: the value was thrown by the caller's onmessage; it is passed on, not classified.
      this.onerror?.(err instanceof Error ? err : new Error(errorMessage(err)));
    }
  }

  /** The stream ended after start: the transport ends with it. */
  private streamEnded(err: Error | undefined): void {
    if (this.life.ending) return;
    const why = err ? `: ${err.message}` : " (the server closed it)";
    const reason = new BridgeError("CLOSED", `the SSE stream of ${this.base.target} ended${why}`, err ? { cause: err } : {});
    if (err instanceof BridgeError && err.code === "LIMIT_EXCEEDED") this.onerror?.(err);
    void this.life.close(() => this.shutdown(reason));
  }
}

function closedError(): BridgeError {
  return new BridgeError("CLOSED", "SSE transport is closed");
}
