/**
 * The server side of the MCP stdio transport: reads ndjson from stdin, writes only protocol
 * messages to stdout. Logging belongs on stderr, never here.
 */
import type { Readable, Writable } from "node:stream";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { LineDecoder, type DecodedLine } from "../jsonrpc/ndjson.ts";
import { TransportLifecycle } from "./lifecycle.ts";
import { TickCork } from "./tick-cork.ts";
import type { Transport } from "./transport.ts";

const utf8 = new TextEncoder();

/**
 * The most answers one write carries. Answers of one chunk of requests leave in batches of
 * eight, not all at the end of the tick: with 64 calls in flight a whole-tick batch kept the
 * client idle while the server worked and measured 0.67x the raw pair's throughput, eight
 * 0.99x, one write per answer 0.85x (docs/decisions.md 174).
 */
const ANSWERS_PER_WRITE = 8;

export interface StdioServerTransportOptions {
  /** Default `process.stdin`. */
  stdin?: Readable;
  /** Default `process.stdout`. */
  stdout?: Writable;
  /** Largest stdin line accepted, in bytes. Default 32 MiB. */
  maxLineBytes?: number;
}

/** @deprecated Renamed {@link StdioServerTransportOptions}; this alias goes in the next release. */
export type StdioServerOptions = StdioServerTransportOptions;

/**
 * Serves one peer over a pair of streams (by default this process's stdin and stdout).
 *
 * - Lines that are not JSON go to `onerror` as `PARSE_ERROR` / `INVALID_UTF8` /
 *   `LINE_TOO_LONG`, so the peer can answer -32700; they never close the transport.
 * - stdin EOF ends the transport (`onclose()` without a reason); a stdin or stdout stream error
 *   ends it with that error as the reason (EPIPE: the client went away).
 * - `close()` stops reading and waits until what was written is flushed. It never ends or
 *   destroys stdout, so buffered output is not lost and process.stdout stays usable.
 *
 * ```ts
 * const t = new StdioServerTransport();
 * t.onmessage = (m) => void t.send({ jsonrpc: "2.0", id: 1, result: {} });
 * await t.start();
 * ```
 */
export class StdioServerTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly decoder: LineDecoder;
  /** Answers produced in one tick (many requests came in one chunk) leave in a few writes. */
  private readonly cork: TickCork;
  private readonly life = new TransportLifecycle(this, "stdio server transport");
  private drain: Promise<void> | undefined;

  private readonly onData = (chunk: Uint8Array | string): void => {
    const bytes = typeof chunk === "string" ? utf8.encode(chunk) : chunk;
    this.deliverAll(this.decoder.push(bytes));
  };
  private readonly onEnd = (): void => {
    this.deliverAll(this.decoder.end());
    void this.end();
  };
  private readonly onStreamError = (err: Error): void => {
    void this.end(new BridgeError("CLOSED", `stdio stream failed: ${errorMessage(err)}`, { cause: err }));
  };

  constructor(options: StdioServerTransportOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.decoder = new LineDecoder({ maxLineBytes: options.maxLineBytes });
    this.cork = new TickCork(this.stdout, ANSWERS_PER_WRITE);
  }

  start(): Promise<void> {
    try {
      this.life.beginStart();
      this.life.opened();
    } catch (err) {
      return Promise.reject(err);
    }
    this.stdin.on("data", this.onData);
    this.stdin.on("end", this.onEnd);
    this.stdin.on("error", this.onStreamError);
    // Stays attached after close: a late EPIPE from a buffered write must not crash the process.
    this.stdout.on("error", this.onStreamError);
    return Promise.resolve();
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") return Promise.reject(this.life.notOpen());
    if (this.stdout.destroyed || !this.stdout.writable) return Promise.reject(this.life.closedError());
    const text = encodeMessage(message);
    if (typeof text !== "string") return Promise.reject(text);
    this.cork.hold();
    if (this.stdout.write(`${text}\n`)) return Promise.resolve();
    this.drain ??= new Promise<void>((resolve, reject) => {
      const done = (err?: Error): void => {
        this.stdout.off("drain", onDrain);
        this.stdout.off("close", onClose);
        this.drain = undefined;
        if (err) reject(err);
        else resolve();
      };
      const onDrain = (): void => done();
      const onClose = (): void => done(new BridgeError("CLOSED", "stdout closed before it drained"));
      this.stdout.on("drain", onDrain);
      this.stdout.on("close", onClose);
    });
    return this.drain;
  }

  close(): Promise<void> {
    return this.end();
  }

  private deliverAll(lines: DecodedLine[]): void {
    for (let i = 0; i < lines.length; i++) {
      if (this.life.ending) return;
      const line = lines[i]!;
      if (line.ok) this.onmessage?.(line.value);
      else this.onerror?.(line.error);
    }
  }

  private end(reason?: Error): Promise<void> {
    return this.life.close(async () => {
      this.stdin.off("data", this.onData);
      this.stdin.off("end", this.onEnd);
      this.stdin.off("error", this.onStreamError);
      // Paused and without listeners, stdin no longer keeps the event loop alive.
      this.stdin.pause();
      this.life.ended(reason);
      await flushed(this.stdout);
    });
  }
}

/** Resolves once everything written so far has been handed to the OS (or the stream died). */
function flushed(stream: Writable): Promise<void> {
  if (stream.destroyed || !stream.writable || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off("close", done);
      resolve();
    };
    stream.on("close", done);
    // The callback of an empty write runs after every earlier write completed.
    stream.write("", () => done());
  });
}
