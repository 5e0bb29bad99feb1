/**
 * Bounded capture of a byte stream (a child's stderr): a ring keeping the last `capacity` bytes
 * in one fixed allocation, so a flood costs copying, never memory; and a line splitter whose
 * partial line is bounded too.
 */

/** Default capacity of a {@link ByteRing}: 64 KiB. */
export const DEFAULT_RING_BYTES = 64 * 1024;

/**
 * A circular byte buffer holding the most recent `capacity` bytes written to it.
 *
 * ```ts
 * const ring = new ByteRing(4);
 * ring.write(new TextEncoder().encode("abcdef"));
 * ring.text(); // "cdef"
 * ```
 */
export class ByteRing {
  readonly capacity: number;
  private readonly buf: Uint8Array;
  /** Next write position. */
  private head = 0;
  private filled = 0;
  private written = 0;

  constructor(capacity: number = DEFAULT_RING_BYTES) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError("capacity must be a positive integer");
    this.capacity = capacity;
    this.buf = new Uint8Array(capacity);
  }

  /** Bytes currently held (at most `capacity`). */
  get size(): number {
    return this.filled;
  }

  /** Bytes ever written, including those already overwritten. */
  get totalWritten(): number {
    return this.written;
  }

  write(chunk: Uint8Array): void {
    this.written += chunk.length;
    let src = chunk;
    if (src.length >= this.capacity) {
      src = src.subarray(src.length - this.capacity);
      this.buf.set(src, 0);
      this.head = 0;
      this.filled = this.capacity;
      return;
    }
    const firstPart = Math.min(src.length, this.capacity - this.head);
    this.buf.set(src.subarray(0, firstPart), this.head);
    if (firstPart < src.length) this.buf.set(src.subarray(firstPart), 0);
    this.head = (this.head + src.length) % this.capacity;
    this.filled = Math.min(this.capacity, this.filled + src.length);
  }

  /** A copy of the held bytes, oldest first. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.filled);
    const start = (this.head - this.filled + this.capacity) % this.capacity;
    const firstPart = Math.min(this.filled, this.capacity - start);
    out.set(this.buf.subarray(start, start + firstPart), 0);
    if (firstPart < this.filled) out.set(this.buf.subarray(0, this.filled - firstPart), firstPart);
    return out;
  }

  /**
   * The held bytes as UTF-8 text. When old data was overwritten the buffer may begin inside a
   * character; those leading continuation bytes are dropped rather than shown as U+FFFD.
   */
  text(): string {
    let bytes = this.bytes();
    if (this.written > this.filled) {
      let skip = 0;
      while (skip < bytes.length && skip < 3 && (bytes[skip]! & 0xc0) === 0x80) skip++;
      bytes = bytes.subarray(skip);
    }
    return new TextDecoder("utf-8").decode(bytes);
  }

  clear(): void {
    this.head = 0;
    this.filled = 0;
  }
}

/** The last `maxLines` lines of `text`, further cut to its last `maxChars` characters. */
export function lastLines(text: string, maxLines: number, maxChars: number): string {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  let out = lines.slice(-maxLines).join("\n");
  if (out.length > maxChars) out = `…${out.slice(out.length - maxChars + 1)}`;
  return out;
}

/**
 * Splits a byte stream into UTF-8 text lines (LF or CRLF) for a callback. A line longer than
 * `maxChars` is delivered in pieces of at most `maxChars`, so memory stays bounded.
 */
export class TextLineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private partial = "";
  private readonly emit: (line: string) => void;
  private readonly maxChars: number;

  constructor(emit: (line: string) => void, maxChars: number) {
    this.emit = emit;
    this.maxChars = maxChars;
  }

  push(chunk: Uint8Array): void {
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      this.emitLine(text.slice(start, nl));
      start = nl + 1;
    }
    this.partial = text.slice(start);
    while (this.partial.length > this.maxChars) {
      this.emit(this.partial.slice(0, this.maxChars));
      this.partial = this.partial.slice(this.maxChars);
    }
  }

  /** Delivers a final line that had no newline. */
  end(): void {
    const rest = this.partial + this.decoder.decode();
    this.partial = "";
    if (rest !== "") this.emitLine(rest);
  }

  private emitLine(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.length === 0) this.emit("");
    for (let i = 0; i < text.length; i += this.maxChars) this.emit(text.slice(i, i + this.maxChars));
  }
}
