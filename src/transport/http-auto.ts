/**
 * `transport: "auto"`: Streamable HTTP first, legacy HTTP+SSE as the fallback, decided by the
 * answer to the `initialize` POST (MCP 2025-11-25, "backwards compatibility"):
 * - 2xx: Streamable HTTP.
 * - 400, 404 or 405: GET the same URL as a legacy SSE stream, wait for its `endpoint`, and
 *   replay the `initialize` there.
 * - 401/403 (an `AuthError`), any other status, a network failure or a timeout: the error
 *   goes to the caller as is. Authorization failures never trigger the fallback.
 *
 * A dual-era client first sends a stateless-era request (`server/discover`). It goes over
 * Streamable HTTP without choosing it: when the client then sends `initialize` (the server is
 * of the handshake era), the choice above is made as if that probe had not happened; when it
 * sends another stateless-era request (the server is of that era), Streamable HTTP is chosen.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../jsonrpc/message.ts";
import { AuthError } from "./auth-error.ts";
import { bearerAuth, type BearerAuth } from "./http-auth.ts";
import { StreamableHttpClientTransport, type StreamableHttpClientTransportOptions } from "./http-client.ts";
import { httpUrl, normalizeHeaders } from "./http-options.ts";
import { SseClientTransport } from "./sse-client.ts";
import type { MessageHeaders, Transport } from "./transport.ts";
import { TransportLifecycle } from "./lifecycle.ts";

const FALLBACK_STATUSES: ReadonlySet<unknown> = new Set([400, 404, 405]);

/**
 * ```ts
 * const transport = new AutoHttpClientTransport({ url: "https://example.com/mcp" });
 * await new McpClient().connect(transport);
 * transport.selected // "streamable-http" or "sse"
 * ```
 */
export class AutoHttpClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;
  /** Forwarded from the Streamable HTTP transport (see its `onsessionexpired`). */
  onsessionexpired?: () => void;

  private readonly options: StreamableHttpClientTransportOptions;
  private inner: StreamableHttpClientTransport | SseClientTransport | undefined;
  private choosing: Promise<void> | undefined;
  /** The Streamable HTTP transport while its initialize POST decides; close() must reach it. */
  private probing: StreamableHttpClientTransport | undefined;
  private which: "streamable-http" | "sse" | undefined;
  private version: string | undefined;
  private eraHeaders: MessageHeaders | undefined;
  /** The Streamable HTTP transport that carried messages before any choice (an era probe). */
  private unchosen: StreamableHttpClientTransport | undefined;
  private readonly life = new TransportLifecycle(this, "auto HTTP transport");
  /** The provider's view for {@link setConnecting}, made on first use. */
  private connectAuth: BearerAuth | undefined;

  constructor(options: StreamableHttpClientTransportOptions) {
    // Fail at construction on a bad URL or header, as the concrete transports do.
    httpUrl(options.url, "auto HTTP transport");
    normalizeHeaders(options.headers, "auto HTTP transport");
    this.options = options;
  }

  /** The transport in use, once the `initialize` POST decided it. */
  get selected(): "streamable-http" | "sse" | undefined {
    return this.which;
  }

  /** The Streamable HTTP session id, if that transport was selected and the server gave one. */
  get sessionId(): string | undefined {
    return this.inner instanceof StreamableHttpClientTransport ? this.inner.sessionId : undefined;
  }

  setProtocolVersion(version: string): void {
    this.version = version;
    this.inner?.setProtocolVersion(version);
  }

  setMessageHeaders(headersFor: MessageHeaders | undefined): void {
    this.eraHeaders = headersFor;
    if (this.inner instanceof StreamableHttpClientTransport) this.inner.setMessageHeaders(headersFor);
    this.unchosen?.setMessageHeaders(headersFor);
  }

  /**
   * One authorization budget for the whole connect, whichever transports it tries: they
   * share the provider, and the budget is the provider's (see `BearerAuth.connecting`).
   */
  setConnecting(connecting: boolean): void {
    this.connectAuth ??= bearerAuth(this.options.auth);
    this.connectAuth?.connecting(connecting);
  }

  /** Nothing to open: the first `send()` (the initialize POST) chooses the transport. */
  start(): Promise<void> {
    return this.life.openAtOnce();
  }

  /** Also accepted before `start()`, as Streamable HTTP accepts it (docs/decisions.md 88). */
  async send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.ending) throw closedError();
    if (this.inner) return this.inner.send(message);
    if (this.choosing) {
      await this.choosing.catch(() => undefined);
      if (this.life.ending) throw closedError();
      const chosen = this.current();
      if (!chosen) throw new BridgeError("NOT_CONNECTED", "auto HTTP transport: the initialize that chooses the transport failed");
      return chosen.send(message);
    }
    const isInitialize = !Array.isArray(message) && "method" in message && message.method === "initialize";
    if (!isInitialize && this.eraHeaders !== undefined) {
      // A stateless-era message: no choice yet (see the file comment).
      // A second request in that era means the first one found a server of it: choose.
      const chosen = this.unchosen !== undefined && isRequest(message);
      const probe = (this.unchosen ??= this.streamable());
      if (!probe.onmessage) this.wire(probe);
      if (chosen) {
        this.unchosen = undefined;
        this.use(probe, "streamable-http");
      }
      return probe.send(message);
    }
    if (!isInitialize) {
      const http = this.unchosen ?? this.streamable();
      this.unchosen = undefined;
      this.use(http, "streamable-http");
      return http.send(message);
    }
    if (this.unchosen) {
      const probe = this.unchosen;
      this.unchosen = undefined;
      probe.onclose = undefined;
      void probe.close();
    }
    const done = this.probe(message).finally(() => {
      this.probing = undefined;
    });
    this.choosing = done;
    return done;
  }

  close(): Promise<void> {
    return this.life.close(async () => {
      await Promise.all([this.inner?.close(), this.probing?.close(), this.unchosen?.close()]);
    });
  }

  private async probe(initialize: JsonRpcMessage): Promise<void> {
    const http = this.streamable();
    this.wire(http);
    this.probing = http;
    try {
      await http.send(initialize);
      this.use(http, "streamable-http");
      return;
    } catch (err) {
      const status = err instanceof BridgeError && err.code === "HTTP_ERROR" ? err.details.status : undefined;
      if (!FALLBACK_STATUSES.has(status) || this.life.ending) {
        this.use(http, "streamable-http");
        throw err;
      }
      http.onclose = undefined;
      http.onmessage = undefined;
      http.onerror = undefined;
      await http.close();
      if (this.life.ending) throw closedError();
      this.options.onLog?.(`initialize POST answered ${String(status)}; falling back to the legacy HTTP+SSE transport`);
    }
    const sse = new SseClientTransport(this.options);
    this.wire(sse);
    this.use(sse, "sse");
    try {
      await sse.start();
    } catch (err) {
      if (err instanceof AuthError) throw err;
      const e = err as Error;
      throw new BridgeError(
        err instanceof BridgeError ? err.code : "HTTP_ERROR",
        `neither transport worked: the Streamable HTTP initialize POST was refused, and the legacy SSE stream failed: ${e.message}`,
        { cause: err, details: err instanceof BridgeError ? { ...err.details } : {} },
      );
    }
    if (this.life.ending) throw closedError();
    await sse.send(initialize);
  }

  /** Read through a method: TypeScript keeps `this.inner` narrowed across an await. */
  private current(): Transport | undefined {
    return this.inner;
  }

  private streamable(): StreamableHttpClientTransport {
    const t = new StreamableHttpClientTransport(this.options);
    t.setMessageHeaders(this.eraHeaders);
    t.onsessionexpired = () => this.onsessionexpired?.();
    return t;
  }

  private wire(t: Transport): void {
    t.onmessage = (m) => this.onmessage?.(m);
    t.onerror = (e) => this.onerror?.(e);
    t.onclose = (reason) => {
      if (t === this.inner) this.life.ended(reason);
    };
  }

  private use(t: StreamableHttpClientTransport | SseClientTransport, which: "streamable-http" | "sse"): void {
    if (this.inner === t) return;
    if (!t.onmessage) this.wire(t);
    this.inner = t;
    this.which = which;
    if (this.version !== undefined) t.setProtocolVersion(this.version);
    if (t instanceof StreamableHttpClientTransport) t.setMessageHeaders(this.eraHeaders);
  }
}

function isRequest(message: JsonRpcMessage | JsonRpcMessage[]): boolean {
  return !Array.isArray(message) && "method" in message && "id" in message;
}

function closedError(): BridgeError {
  return new BridgeError("CLOSED", "auto HTTP transport is closed");
}
