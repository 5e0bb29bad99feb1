/**
 * ndjson over a TCP socket, both sides. Used on loopback by the MCP-over-ACP shim and the
 * conductor that listens for it; the framing (and its limits) is the same `LineDecoder` and
 * `encodeMessage` as stdio.
 *
 * - {@link TcpTransport} wraps a socket that is already connected (what a server accepts).
 * - {@link TcpClientTransport} connects in `start()`, retrying a refused connect with a
 *   bounded backoff, and may send a first line (a greeting such as an auth token) before
 *   anything else.
 * - {@link readFirstLine} reads one bounded line off a fresh socket, for a server that must
 *   check a greeting before it trusts the connection.
 */
import { connect, type Socket } from "node:net";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { encodeLine, LineDecoder, type DecodedLine } from "../jsonrpc/ndjson.ts";
import { TransportLifecycle } from "./lifecycle.ts";
import type { Transport } from "./transport.ts";
import { settlesWithin } from "../util/deadline.ts";

export interface TcpTransportOptions {
  /** Largest line accepted, in bytes. Default 32 MiB. */
  maxLineBytes?: number;
  /** Bytes already read off the socket (after a greeting), decoded before anything else. */
  initialData?: Uint8Array;
  /** How long `close()` waits for the other side to close its half before destroying, ms. Default 2000. */
  closeGraceMs?: number;
  /** Name used in error messages. Default `tcp`. */
  name?: string;
}

const DEFAULT_CLOSE_GRACE_MS = 2000;

/**
 * Exchanges newline-delimited JSON over a connected socket.
 *
 * - Undecodable lines go to `onerror` (`PARSE_ERROR`, `INVALID_UTF8`, `LINE_TOO_LONG`) and
 *   never end the connection.
 * - The other side closing (EOF, reset) ends the transport: `onclose()` without a reason for
 *   a clean end, with the socket error otherwise.
 * - `close()` ends our half, waits up to the grace period for the socket to close, then
 *   destroys it.
 */
export class TcpTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  protected socket: Socket | undefined;
  protected readonly label: string;
  private readonly decoder: LineDecoder;
  private readonly graceMs: number;
  protected readonly life: TransportLifecycle;
  private initialData: Uint8Array | undefined;
  private socketError: Error | undefined;
  private drain: Promise<void> | undefined;
  private readonly socketClosed: Promise<void>;
  private markSocketClosed!: () => void;

  constructor(socket: Socket | undefined, options: TcpTransportOptions = {}) {
    this.socket = socket;
    this.label = options.name ?? "tcp";
    this.life = new TransportLifecycle(this, this.label);
    this.decoder = new LineDecoder({ maxLineBytes: options.maxLineBytes });
    this.graceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.initialData = options.initialData;
    this.socketClosed = new Promise((resolve) => {
      this.markSocketClosed = resolve;
    });
  }

  /** Starts reading. Rejects if called twice or if the socket is already gone. */
  start(): Promise<void> {
    try {
      this.life.beginStart();
    } catch (err) {
      return Promise.reject(err);
    }
    return this.open(this.socket);
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") return Promise.reject(this.life.notOpen());
    const socket = this.socket!;
    if (socket.destroyed || !socket.writable) return Promise.reject(this.life.closedError());
    const text = encodeMessage(message);
    if (typeof text !== "string") return Promise.reject(text);
    if (socket.write(`${text}\n`)) return Promise.resolve();
    this.drain ??= new Promise<void>((resolve, reject) => {
      const done = (err?: Error): void => {
        socket.off("drain", onDrain);
        socket.off("close", onClose);
        this.drain = undefined;
        if (err) reject(err);
        else resolve();
      };
      const onDrain = (): void => done();
      const onClose = (): void => done(new BridgeError("CLOSED", `${this.label}: connection closed before it drained`));
      socket.on("drain", onDrain);
      socket.on("close", onClose);
    });
    return this.drain;
  }

  close(): Promise<void> {
    const wasOpen = this.life.state === "open";
    return this.life.close(async () => {
      const socket = this.socket;
      if (!socket || !wasOpen) {
        // Never attached: nothing to wait for (the lifecycle reports the end).
        socket?.destroy();
        return;
      }
      socket.end();
      await settlesWithin(this.socketClosed, this.graceMs);
      socket.destroy();
      await this.socketClosed;
    });
  }

  /** Second half of start(): `starting` to `open` on a live socket, which it then reads. */
  protected open(socket: Socket | undefined): Promise<void> {
    if (!socket || socket.destroyed) {
      this.life.startFailed();
      return Promise.reject(new BridgeError("CLOSED", `${this.label}: socket is not connected`));
    }
    try {
      this.life.opened();
    } catch (err) {
      // close() came while connecting.
      socket.destroy();
      return Promise.reject(err);
    }
    this.attach(socket);
    return Promise.resolve();
  }

  /** Wires a connected socket: data, end, errors, close. */
  protected attach(socket: Socket): void {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Uint8Array) => this.deliverAll(this.decoder.push(chunk)));
    socket.on("end", () => {
      this.deliverAll(this.decoder.end());
      // The other side finished writing: finish our half too, so the socket closes.
      socket.end();
    });
    socket.on("error", (err) => {
      this.socketError = err;
    });
    socket.on("close", () => {
      this.markSocketClosed();
      // Still open: the other side (or the network) ended it, not our close().
      const reason = this.life.state !== "open" || this.socketError === undefined
        ? undefined
        : new BridgeError("CLOSED", `${this.label}: connection failed: ${errorMessage(this.socketError)}`, { cause: this.socketError });
      this.life.ended(reason);
    });
    // A socket handed over by readFirstLine() was paused explicitly; a listener alone would
    // not restart it.
    socket.resume();
    const initial = this.initialData;
    this.initialData = undefined;
    if (initial && initial.length > 0) {
      // After start() returns, so that the caller's handlers are in place either way.
      queueMicrotask(() => this.deliverAll(this.decoder.push(initial)));
    }
  }

  private deliverAll(lines: DecodedLine[]): void {
    for (let i = 0; i < lines.length; i++) {
      if (this.life.state === "closed") return;
      const line = lines[i]!;
      if (line.ok) this.onmessage?.(line.value);
      else this.onerror?.(line.error);
    }
  }
}

export interface TcpClientTransportOptions extends Omit<TcpTransportOptions, "initialData"> {
  /** Default `127.0.0.1`. */
  host?: string;
  port: number;
  /** Connect attempts in total (the first plus retries). Default 8. */
  connectAttempts?: number;
  /** Delay before the first retry, doubling after each, ms. Default 50. */
  retryDelayMs?: number;
  /** Longest delay between attempts, ms. Default 1000. */
  maxRetryDelayMs?: number;
  /** Written as the first line, before any message (for example `{"token": "..."}`). */
  greeting?: unknown;
  /**
   * Waits out the delay before a retry. Default a `setTimeout` of `ms`. A seam for tests, which
   * resolve it on cue instead of racing the clock (docs/decisions.md 104).
   */
  delay?: (ms: number) => Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Connection errors worth another attempt: nobody listening yet, or the listener is busy. */
const RETRYABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EADDRNOTAVAIL"]);

/**
 * Connects to a TCP server in `start()`.
 *
 * ```ts
 * const t = new TcpClientTransport({ port: 4000, greeting: { token } });
 * t.onmessage = (m) => console.log(m);
 * await t.start();
 * ```
 */
export class TcpClientTransport extends TcpTransport {
  private readonly target: Required<Pick<TcpClientTransportOptions, "host" | "port" | "connectAttempts" | "retryDelayMs" | "maxRetryDelayMs" | "delay">>;
  private readonly greeting: unknown;

  constructor(options: TcpClientTransportOptions) {
    super(undefined, { ...options, name: options.name ?? `tcp ${options.host ?? "127.0.0.1"}:${options.port}` });
    const attempts = options.connectAttempts ?? 8;
    if (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535) {
      throw new RangeError(`TcpClientTransport: port must be an integer in 1..65535, got ${options.port}`);
    }
    if (!Number.isInteger(attempts) || attempts < 1) throw new RangeError(`TcpClientTransport: connectAttempts must be >= 1, got ${attempts}`);
    this.target = {
      host: options.host ?? "127.0.0.1",
      port: options.port,
      connectAttempts: attempts,
      retryDelayMs: options.retryDelayMs ?? 50,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 1000,
      delay: options.delay ?? sleep,
    };
    this.greeting = options.greeting;
  }

  /** Rejects with `BridgeError CLOSED` once every attempt failed (or `close()` was called). */
  override async start(): Promise<void> {
    this.life.beginStart();
    let socket: Socket;
    try {
      socket = await this.connectWithRetry();
    } catch (err) {
      this.life.startFailed();
      throw err;
    }
    if (this.greeting !== undefined) socket.write(encodeLine(this.greeting));
    this.socket = socket;
    await this.open(socket);
  }

  private async connectWithRetry(): Promise<Socket> {
    const { host, port, connectAttempts } = this.target;
    let delay = this.target.retryDelayMs;
    let lastError: unknown;
    for (let attempt = 1; attempt <= connectAttempts; attempt++) {
      if (this.life.ending) break;
      try {
        const socket = await connectOnce(host, port);
        if (this.life.ending) {
          socket.destroy();
          break;
        }
        return socket;
      } catch (err) {
        lastError = err;
        const code = (err as NodeJS.ErrnoException).code;
        if (code === undefined || !RETRYABLE.has(code) || attempt === connectAttempts) break;
      }
      await this.target.delay(delay);
      delay = Math.min(delay * 2, this.target.maxRetryDelayMs);
    }
    const why = this.life.ending ? "closed before it connected" : `connect failed: ${errorMessage(lastError)}`;
    throw new BridgeError("CLOSED", `${this.label}: ${why}`, { cause: lastError, details: { host, port } });
  }
}

function connectOnce(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const onError = (err: Error): void => {
      socket.off("connect", onConnect);
      socket.destroy();
      reject(err);
    };
    const onConnect = (): void => {
      socket.off("error", onError);
      resolve(socket);
    };
    socket.once("error", onError);
    socket.once("connect", onConnect);
  });
}

/** What {@link readFirstLine} read: the line (without its newline) and any bytes after it. */
export interface FirstLine {
  line: string;
  rest: Uint8Array;
}

/**
 * Reads the first line of a fresh socket. Rejects (and leaves the socket to the caller) when
 * the line is longer than `maxBytes`, is not UTF-8, or does not arrive within `timeoutMs`, or
 * the socket ends first. Reading pauses after the line, so nothing is lost before a
 * {@link TcpTransport} takes over with `initialData: rest`.
 */
export function readFirstLine(socket: Socket, options: { maxBytes: number; timeoutMs: number }): Promise<FirstLine> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const timer = setTimeout(() => fail(new BridgeError("TIMEOUT", `no greeting within ${options.timeoutMs} ms`, { details: { timeoutMs: options.timeoutMs } })), options.timeoutMs);
    const cleanup = (): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("error", onError);
      socket.off("close", onEnd);
      socket.pause();
    };
    const fail = (err: Error): void => {
      cleanup();
      // The caller is about to destroy the socket; a late error must not go unhandled.
      socket.on("error", () => undefined);
      reject(err);
    };
    const onData = (chunk: Uint8Array): void => {
      const nl = chunk.indexOf(0x0a);
      const take = nl === -1 ? chunk : chunk.subarray(0, nl);
      size += take.length;
      if (size > options.maxBytes) return fail(new BridgeError("LIMIT_EXCEEDED", `greeting longer than ${options.maxBytes} bytes`, { details: { maxBytes: options.maxBytes } }));
      chunks.push(take);
      if (nl === -1) return;
      cleanup();
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        bytes.set(c, at);
        at += c.length;
      }
      let line: string;
      try {
        line = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        return reject(new BridgeError("INVALID_UTF8", "greeting is not valid UTF-8"));
      }
      resolve({ line: line.endsWith("\r") ? line.slice(0, -1) : line, rest: chunk.subarray(nl + 1) });
    };
    const onEnd = (): void => fail(new BridgeError("CLOSED", "connection ended before its greeting"));
    const onError = (err: Error): void => fail(err);
    socket.on("data", onData);
    socket.on("end", onEnd);
    socket.on("close", onEnd);
    socket.on("error", onError);
  });
}
