/** Shared by the NDJSON tests: byte helpers and a harness that decodes input cut at every position. */
import assert from "node:assert/strict";
import { LineDecoder, type DecodedLine } from "../../src/jsonrpc/ndjson.ts";

const utf8 = new TextEncoder();

export function bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** Feeds the chunks to a fresh decoder, then ends it; returns everything it produced. */
export function decodeChunks(chunks: Uint8Array[], maxLineBytes?: number): DecodedLine[] {
  const d = new LineDecoder(maxLineBytes === undefined ? {} : { maxLineBytes });
  const out: DecodedLine[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.end());
  return out;
}

/** A readable summary: the value for a good line, `error:CODE` for a bad one. */
export function summary(lines: DecodedLine[]): unknown[] {
  return lines.map((l) => (l.ok ? l.value : `error:${l.error.code}`));
}

function singleBytes(buf: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < buf.length; i++) out.push(buf.subarray(i, i + 1));
  return out;
}

/** Asserts `buf` decodes to `expected` when cut at every single position and into single bytes. */
export function assertEverySplit(buf: Uint8Array, expected: unknown[], maxLineBytes?: number): void {
  for (let i = 0; i <= buf.length; i++) {
    const got = summary(decodeChunks([buf.subarray(0, i), buf.subarray(i)], maxLineBytes));
    assert.deepEqual(got, expected, `split at byte ${i}`);
  }
  assert.deepEqual(summary(decodeChunks(singleBytes(buf), maxLineBytes)), expected, "single bytes");
}
