/**
 * Server-Sent Events (the `text/event-stream` format): a pure push parser and a writer.
 * Both follow the WHATWG HTML "event stream" rules; neither touches I/O.
 */
import { BridgeError } from "./errors.ts";
import { DEFAULT_MAX_LINE_BYTES } from "./ndjson.ts";

/** One dispatched event. `event` defaults to `"message"`. */
export interface SseEvent {
  event: string;
  data: string;
  /** The event's `id` field, if it had one. */
  id?: string;
  /** The `retry` field (ms), if the event block carried a valid one. */
  retry?: number;
}

export interface SseParserOptions {
  /** Largest event (accumulated `data` plus the pending line), in UTF-16 units. Default 32 MiB. */
  maxEventSize?: number;
}

/**
 * Push parser for an event stream.
 *
 * - Lines end in CR, LF or CRLF; a CRLF split across two chunks counts once.
 * - A leading BOM is dropped; comment lines (`:`) are ignored; unknown fields are ignored.
 * - `data` lines are joined with `\n`; an event with no data lines is not dispatched (but its
 *   `id` and `retry` still update {@link lastEventId} and {@link retry}).
 * - `id` containing NUL is ignored; `retry` is honoured only when it is all ASCII digits.
 * - Over the size limit the parser throws `BridgeError LIMIT_EXCEEDED` and refuses further
 *   input until {@link reset}: it never guesses where the next event starts.
 *
 * Feed text (decode bytes with a streaming `TextDecoder` first).
 */
export class SseParser {
  /**
   * The id of the last *complete* event that had one (it persists across events). An `id`
   * line counts only once the blank line ending its event arrives.
   */
  lastEventId = "";
  /** The last valid `retry` value, ms. */
  retry: number | undefined;

  private readonly maxEventSize: number;
  private pending = "";
  private data: string[] = [];
  private dataSize = 0;
  private eventType = "";
  private eventId: string | undefined;
  private eventRetry: number | undefined;
  private sawCr = false;
  private started = false;
  private failed = false;

  constructor(options: SseParserOptions = {}) {
    this.maxEventSize = options.maxEventSize ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Feeds text; returns the events it completes, in order. */
  feed(text: string): SseEvent[] {
    if (this.failed) throw new BridgeError("LIMIT_EXCEEDED", "SSE parser stopped after an oversized event; reset() first");
    const out: SseEvent[] = [];
    // An empty chunk (a streaming decoder holding a partial UTF-8 sequence returns "") must
    // not clear `sawCr`: the LF of a CRLF may still follow.
    if (text.length === 0) return out;
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    if (this.sawCr && chunk.charCodeAt(0) === 0x0a) start = 1;
    this.sawCr = false;
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      const line = this.pending + chunk.slice(start, i);
      this.pending = "";
      this.line(line, out);
      if (c === 0x0d) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === 0x0a) i++;
        } else {
          this.sawCr = true;
        }
      }
      start = i + 1;
    }
    if (start < chunk.length) {
      this.pending += chunk.slice(start);
      this.checkSize(this.pending.length);
    }
    return out;
  }

  /** Clears all state, including an overflow, but keeps `lastEventId` and `retry`. */
  reset(): void {
    this.pending = "";
    this.resetEvent();
    this.sawCr = false;
    this.started = false;
    this.failed = false;
  }

  private resetEvent(): void {
    this.data = [];
    this.dataSize = 0;
    this.eventType = "";
    this.eventId = undefined;
    this.eventRetry = undefined;
  }

  private checkSize(extra: number): void {
    if (this.dataSize + extra > this.maxEventSize) {
      this.failed = true;
      this.pending = "";
      this.resetEvent();
      throw new BridgeError("LIMIT_EXCEEDED", `SSE event exceeds ${this.maxEventSize} characters`, {
        details: { maxEventSize: this.maxEventSize },
      });
    }
  }

  private line(line: string, out: SseEvent[]): void {
    if (line.length === 0) {
      this.dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 0x3a) return; // comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (field) {
      case "data":
        this.checkSize(value.length + 1);
        this.data.push(value);
        this.dataSize += value.length + 1;
        break;
      case "event":
        this.eventType = value;
        break;
      case "id":
        if (!value.includes("\0")) {
          this.eventId = value;
        }
        break;
      case "retry":
        if (/^\d+$/.test(value)) {
          this.eventRetry = Number(value);
          this.retry = this.eventRetry;
        }
        break;
      default:
        break;
    }
  }

  private dispatch(out: SseEvent[]): void {
    // The id counts only once its event is complete: a stream cut off inside an event must be
    // resumed from the previous id, or that event is lost (WHATWG: set at dispatch time).
    if (this.eventId !== undefined) this.lastEventId = this.eventId;
    if (this.data.length > 0) {
      const ev: SseEvent = { event: this.eventType || "message", data: this.data.join("\n") };
      if (this.eventId !== undefined) ev.id = this.eventId;
      if (this.eventRetry !== undefined) ev.retry = this.eventRetry;
      out.push(ev);
    }
    this.resetEvent();
  }
}

/** Fields of one event to write. */
export interface SseWriteFields {
  event?: string;
  data?: string;
  id?: string;
  retry?: number;
}

/**
 * Serialises one event. `data` is split per line (any of CR, LF, CRLF) so it cannot end the
 * event early; `event` and `id` must not contain CR, LF (or NUL, for `id`), which would let a
 * value inject fields: such input throws a `BridgeError INVALID_MESSAGE`.
 *
 * ```ts
 * formatSseEvent({ event: "message", id: "7", data: '{"jsonrpc":"2.0"}' })
 * // 'event: message\nid: 7\ndata: {"jsonrpc":"2.0"}\n\n'
 * ```
 */
export function formatSseEvent(fields: SseWriteFields): string {
  let out = "";
  if (fields.event !== undefined) out += `event: ${safeField("event", fields.event)}\n`;
  if (fields.id !== undefined) {
    if (fields.id.includes("\0")) throw new BridgeError("INVALID_MESSAGE", "SSE id must not contain NUL");
    out += `id: ${safeField("id", fields.id)}\n`;
  }
  if (fields.retry !== undefined) {
    if (!Number.isInteger(fields.retry) || fields.retry < 0) throw new BridgeError("INVALID_MESSAGE", "SSE retry must be a non-negative integer");
    out += `retry: ${fields.retry}\n`;
  }
  if (fields.data !== undefined) {
    for (const line of fields.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  }
  return `${out}\n`;
}

/** A comment line, used as a keep-alive. Newlines in the text are replaced by spaces. */
export function formatSseComment(text = ""): string {
  return `: ${text.replace(/[\r\n]/g, " ")}\n\n`;
}

function safeField(name: string, value: string): string {
  if (/[\r\n]/.test(value)) throw new BridgeError("INVALID_MESSAGE", `SSE ${name} must not contain CR or LF`);
  return value;
}
