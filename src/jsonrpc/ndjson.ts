/**
 * Newline-delimited JSON framing: a pure push decoder and the matching encoder.
 *
 * The decoder works on bytes, not strings: a newline byte (0x0A) never occurs inside a
 * multi-byte UTF-8 sequence, so lines are cut at byte level and each complete line is decoded
 * once, strictly. A chunk may end anywhere, including inside a character.
 */
import { BridgeError } from "./errors.ts";
import type { JsonRpcId } from "./message.ts";

/**
 * Default largest message accepted: 32 MiB. The one default for a whole message on every
 * channel: an ndjson line here, an SSE event (jsonrpc/sse.ts), an HTTP client's JSON body.
 */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface LineDecoderOptions {
  /** Largest line in bytes (without its newline). Default 32 MiB. */
  maxLineBytes?: number;
}

/** Bytes at the start of an over-long line that are read for its id (see {@link scanEnvelope}). */
const ENVELOPE_SCAN_BYTES = 4096;

/** One decoded line: a parsed JSON value, or the typed error for that line alone. */
export type DecodedLine = { ok: true; value: unknown } | { ok: false; error: BridgeError };

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Push decoder for ndjson.
 *
 * - CRLF is tolerated, blank lines are skipped.
 * - Invalid JSON or invalid UTF-8 yields an error for that line only; decoding continues.
 * - A line over the limit yields one `LINE_TOO_LONG` error and is discarded up to its newline;
 *   the decoder never tries to resynchronise in the middle of a line. The error is raised as
 *   soon as the limit is crossed; its details are `maxLineBytes`, `bytesRead` (the line is at
 *   least that long) and what {@link scanEnvelope} read from the line's first 4 KiB (`id`,
 *   `kind`), so the peer can fail the request that the line answered.
 * - Amortised linear: a partial line is kept as a list of pieces and joined once, when its
 *   newline arrives. The pieces are views into the pushed chunks, so a caller must not reuse
 *   a chunk's memory after `push` (Node stream chunks are fresh; a BYOB reader's are not).
 * - A UTF-8 byte order mark at the start of a line is dropped.
 *
 * ```ts
 * const d = new LineDecoder();
 * d.push(new TextEncoder().encode('{"a":1}\n{"b"')); // [{ ok: true, value: { a: 1 } }]
 * ```
 */
export class LineDecoder {
  readonly maxLineBytes: number;
  private pieces: Uint8Array[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });

  constructor(options: LineDecoderOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Bytes held for a line whose newline has not arrived yet. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /** Feeds one chunk; returns every line it completes, in order. */
  push(chunk: Uint8Array): DecodedLine[] {
    const out: DecodedLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk, start, end, out);
      if (nl === -1) break;
      this.finishLine(out);
      start = nl + 1;
    }
    return out;
  }

  /** Ends the input: a final line without a newline is decoded as if it had one. */
  end(): DecodedLine[] {
    const out: DecodedLine[] = [];
    if (this.pendingBytes > 0 || this.discarding) this.finishLine(out);
    return out;
  }

  /** Drops any partial line and leaves the discarding state. */
  reset(): void {
    this.pieces = [];
    this.pendingBytes = 0;
    this.discarding = false;
  }

  private take(chunk: Uint8Array, start: number, end: number, out: DecodedLine[]): void {
    if (this.discarding || end === start) return;
    const size = end - start;
    if (this.pendingBytes + size > this.maxLineBytes) {
      // Allow one trailing CR beyond the limit, since it is not part of the line.
      const overBy = this.pendingBytes + size - this.maxLineBytes;
      const onlyCr = overBy === 1 && chunk[end - 1] === CR;
      if (!onlyCr) {
        const bytesRead = this.pendingBytes + size;
        const envelope = scanEnvelope(this.head(chunk.subarray(start, end)));
        this.pieces = [];
        this.discarding = true;
        out.push({
          ok: false,
          error: new BridgeError(
            "LINE_TOO_LONG",
            `line of at least ${bytesRead} bytes exceeds the ${this.maxLineBytes}-byte limit (maxLineBytes); discarded up to the next newline`,
            { details: { maxLineBytes: this.maxLineBytes, bytesRead, ...envelope } },
          ),
        });
        this.pendingBytes = 0;
        return;
      }
    }
    this.pieces.push(chunk.subarray(start, end));
    this.pendingBytes += size;
  }

  /** The first ENVELOPE_SCAN_BYTES of the held pieces followed by `more`. */
  private head(more: Uint8Array): Uint8Array {
    const parts = [...this.pieces, more];
    let total = 0;
    for (const p of parts) total += p.length;
    return joinPieces(parts, Math.min(total, ENVELOPE_SCAN_BYTES));
  }

  private finishLine(out: DecodedLine[]): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    if (this.pendingBytes === 0) return;
    let bytes = this.pieces.length === 1 ? this.pieces[0]! : joinPieces(this.pieces, this.pendingBytes);
    this.pieces = [];
    this.pendingBytes = 0;
    if (bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    let text: string;
    try {
      text = this.utf8.decode(bytes);
    } catch {
      out.push({ ok: false, error: new BridgeError("INVALID_UTF8", "line is not valid UTF-8") });
      return;
    }
    if (isBlank(text)) return;
    try {
      out.push({ ok: true, value: JSON.parse(text) });
    } catch (err) {
      out.push({
        ok: false,
        error: new BridgeError("PARSE_ERROR", `line is not valid JSON: ${preview(text)}`, { cause: err }),
      });
    }
  }
}

/** Joins pieces into `total` bytes (the pieces may hold more: the rest is left out). */
function joinPieces(pieces: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of pieces) {
    if (offset === total) break;
    const take = Math.min(p.length, total - offset);
    out.set(take === p.length ? p : p.subarray(0, take), offset);
    offset += take;
  }
  return out;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** First 80 characters of a bad line, for diagnostics. */
function preview(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/**
 * Encodes any value as a single ndjson line, as `JSON.stringify` does (it throws what that
 * throws). Transports send messages with `${encodeMessage(m)}\n` instead, which never throws
 * for a response.
 */
export function encodeLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/** What the first bytes of a line say about the JSON-RPC message it holds. */
export interface LineEnvelope {
  /** The top-level `id`, when it is a string or a finite number wholly inside the bytes read. */
  id?: JsonRpcId;
  /** `"request"` once a top-level `method` key was seen, else `"response"` once `result` or `error` was. */
  kind?: "request" | "response";
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * Reads the top-level `id` of a JSON object, and whether it is a request or a response, from
 * the first bytes of a line that is too long to parse. A tiny tokenizer, not a search: it walks
 * the object's members, skipping nested values by counting brackets outside strings, so an
 * `"id"` inside `params` or `result` (or inside a string) never counts. It stops at the end of
 * `bytes`, at anything that is not a well-formed member, or at the end of the object; a value
 * cut off by the end of `bytes` is not read. Linear in `bytes.length`, no regular expression.
 *
 * ```ts
 * scanEnvelope(new TextEncoder().encode('{"jsonrpc":"2.0","id":7,"result":{"tools":[{"id":1')) // { id: 7, kind: "response" }
 * ```
 */
export function scanEnvelope(bytes: Uint8Array): LineEnvelope {
  const out: LineEnvelope = {};
  let method = false;
  let reply = false;
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_BRACE) return out;
  i = skipSpace(bytes, i + 1);
  while (bytes[i] === QUOTE) {
    const keyEnd = skipValue(bytes, i);
    if (keyEnd < 0) break;
    const key = parseSlice(bytes, i, keyEnd);
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== COLON) break;
    i = skipSpace(bytes, i + 1);
    if (key === "method") method = true;
    else if (key === "result" || key === "error") reply = true;
    const valueEnd = skipValue(bytes, i);
    if (valueEnd < 0) break;
    if (key === "id") {
      const id = parseSlice(bytes, i, valueEnd);
      if (typeof id === "string" || (typeof id === "number" && Number.isFinite(id))) out.id = id;
    }
    i = skipSpace(bytes, valueEnd);
    if (bytes[i] !== COMMA) break;
    i = skipSpace(bytes, i + 1);
  }
  if (method) out.kind = "request";
  else if (reply) out.kind = "response";
  return out;
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === CR)) i++;
  return i;
}

/** The index just after the JSON value starting at `i`, or -1 when it runs past the end of `bytes`. */
function skipValue(bytes: Uint8Array, i: number): number {
  const first = bytes[i];
  if (first === undefined) return -1;
  if (first !== QUOTE && first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number or a literal ends at a delimiter; one that reaches the end may be cut short.
    while (i < bytes.length) {
      const c = bytes[i]!;
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x09 || c === 0x0a || c === CR) return i;
      i++;
    }
    return -1;
  }
  let depth = 0;
  let inString = false;
  for (; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        if (depth === 0) return i + 1;
      }
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/** JSON.parse of a short slice (a key or a scalar), or undefined when it is not valid JSON. */
function parseSlice(bytes: Uint8Array, start: number, end: number): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes.subarray(start, end)));
  } catch {
    return undefined;
  }
}
