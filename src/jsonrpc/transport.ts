/**
 * The transport contract. Every adapter (stdio, HTTP, SSE, TCP, in-memory) implements it, and
 * the JSON-RPC peer is its only consumer.
 */
import type { JsonRpcId, JsonRpcMessage } from "./message.ts";

/** Routing hints for {@link Transport.send}. */
export interface TransportSendOptions {
  /**
   * The incoming request this message belongs to (a progress or log notification, or a
   * sampling request sent while handling it). Streamable HTTP puts such messages on that
   * request's response stream; other transports ignore it.
   */
  relatedRequestId?: JsonRpcId;
}

/**
 * Who a verified OAuth access token belongs to and what it allows, as a protected Streamable
 * HTTP server's verifier established it (transport/http-protected.ts). Handlers read it as
 * `ctx.auth`.
 */
export interface AuthInfo {
  /** The authorization server's client id the token was issued to. */
  clientId?: string;
  /** The resource owner (`sub`), when the token names one. */
  subject?: string;
  /** Scopes the token grants. */
  scopes: readonly string[];
  /** Expiry, seconds since the epoch; a token past it is refused. */
  expiresAt?: number;
  /** The token's audience (`aud`); when given it must include this server's `resource`. */
  audience?: string | readonly string[];
  /** Anything else the verifier wants handlers to see (claims, tenant, ...). */
  extra?: Readonly<Record<string, unknown>>;
}

/**
 * A bidirectional message channel.
 *
 * Rules every implementation keeps:
 * - `start()` is called once before `send()`; it resolves when messages can flow (the child is
 *   spawned, the stream is open). It rejects with a `BridgeError` (e.g. `SPAWN_FAILED`); a
 *   second call rejects with `INVALID_STATE`, a call after `close()` with `CLOSED`. `send()`
 *   before `start()` (or after a failed one) rejects with `NOT_CONNECTED`, except where there
 *   is nothing to open (the in-memory pair, Streamable HTTP). `TransportLifecycle` in
 *   transport/lifecycle.ts keeps these rules for every implementation.
 * - Messages are delivered to `onmessage` in the order they were received, one parsed JSON value
 *   per call (a batch arrives as one array). The transport does not validate JSON-RPC shape; the
 *   peer does.
 * - `send()` resolves once the message is handed to the underlying channel (not when the other
 *   side has read it). Messages are written in call order. After close, `send()` rejects with
 *   `BridgeError CLOSED`.
 * - Undecodable input (not JSON, invalid UTF-8, a line over the limit) is reported to `onerror`
 *   as a `BridgeError` (`PARSE_ERROR`, `INVALID_UTF8`, `LINE_TOO_LONG`) and never closes the
 *   transport. Junk is not fatal. One exception: a client transport reading a server's stdout
 *   only logs and counts lines that are not JSON (servers print banners); it still reports
 *   `LINE_TOO_LONG`, since that may have been a response.
 * - `onclose` is called exactly once, whether the close came from `close()` or from the other
 *   side (EOF, process exit, dropped socket). `reason` explains an unexpected end (exit code,
 *   signal, last stderr lines); it is absent for a requested close.
 * - `close()` is idempotent: later calls return the same promise. It resolves when the channel's
 *   resources (child processes, sockets) are released.
 */
export interface Transport {
  start(): Promise<void>;
  send(message: JsonRpcMessage | JsonRpcMessage[], options?: TransportSendOptions): Promise<void>;
  close(): Promise<void>;
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;
  /**
   * Called by the MCP layer once a protocol version is negotiated (HTTP transports put it in
   * a header; others ignore it).
   */
  setProtocolVersion?: (version: string) => void;
  /**
   * Called by the MCP layer with `true` when its connect starts (the era probe, the
   * handshake) and `false` when it ends, however it ends. An HTTP transport with an auth
   * provider then counts the authorizations of all the connect's requests in one budget;
   * others ignore it.
   */
  setConnecting?: (connecting: boolean) => void;
  /** The verified principal of the requests it carries, on a server transport that checks tokens. */
  readonly authInfo?: AuthInfo | undefined;
  /**
   * Called by the MCP layer when it speaks the stateless era (2026-07-28), with a function
   * giving the headers each outgoing message needs (`MCP-Protocol-Version`, `Mcp-Method`,
   * `Mcp-Name`, `Mcp-Param-*`), and with `undefined` to go back to the handshake era. While
   * set, an HTTP transport also hands a JSON-RPC error sent with a 4xx status to the peer as
   * the request's answer, and cancels by closing the request's stream instead of posting
   * `notifications/cancelled`. Transports without headers ignore it.
   */
  setMessageHeaders?: (headersFor: MessageHeaders | undefined) => void;
}

/** The stateless-era headers of one outgoing message, by lower-case name. */
export type MessageHeaders = (message: { method: string; params?: unknown }) => Record<string, string>;
