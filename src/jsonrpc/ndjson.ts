/**
 * Newline-delimited JSON framing: a pure push decoder and the matching encoder.
 *
 * The decoder works on bytes, not strings: a newline byte (0x0A) never occurs inside a
 * multi-byte UTF-8 sequence, so lines are cut at byte level and each complete line is decoded
 * once, strictly. A chunk may end anywhere, including inside a character.
 */
import { BridgeError } from "./errors.ts";

/** Default largest line accepted: 32 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface LineDecoderOptions {
  /** Largest line in bytes (without its newline). Default 32 MiB. */
  maxLineBytes?: number;
}

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
 *   the decoder never tries to resynchronise in the middle of a line.
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
        this.pieces = [];
        this.discarding = true;
        out.push({
          ok: false,
          error: new BridgeError(
            "LINE_TOO_LONG",
            `line exceeds ${this.maxLineBytes} bytes; discarded up to the next newline`,
            { details: { maxLineBytes: this.maxLineBytes } },
          ),
        });
        this.pendingBytes = 0;
        return;
      }
    }
    this.pieces.push(chunk.subarray(start, end));
    this.pendingBytes += size;
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

function joinPieces(pieces: Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of pieces) {
    out.set(p, offset);
    offset += p.length;
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

/** Encodes one message (or batch) as a single ndjson line. */
export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}
