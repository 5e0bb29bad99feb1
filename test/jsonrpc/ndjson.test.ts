import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import {
  DEFAULT_MAX_LINE_BYTES,
  LineDecoder,
  encodeLine,
  type DecodedLine,
} from "../../src/jsonrpc/ndjson.ts";

const utf8 = new TextEncoder();

function bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

function concat(...parts: Uint8Array[]): Uint8Array {
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
function decodeChunks(chunks: Uint8Array[], maxLineBytes?: number): DecodedLine[] {
  const d = new LineDecoder(maxLineBytes === undefined ? {} : { maxLineBytes });
  const out: DecodedLine[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.end());
  return out;
}

/** A readable summary: the value for a good line, `error:CODE` for a bad one. */
function summary(lines: DecodedLine[]): unknown[] {
  return lines.map((l) => (l.ok ? l.value : `error:${l.error.code}`));
}

function singleBytes(buf: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < buf.length; i++) out.push(buf.subarray(i, i + 1));
  return out;
}

/** Asserts `buf` decodes to `expected` when cut at every single position and into single bytes. */
function assertEverySplit(buf: Uint8Array, expected: unknown[], maxLineBytes?: number): void {
  for (let i = 0; i <= buf.length; i++) {
    const got = summary(decodeChunks([buf.subarray(0, i), buf.subarray(i)], maxLineBytes));
    assert.deepEqual(got, expected, `split at byte ${i}`);
  }
  assert.deepEqual(summary(decodeChunks(singleBytes(buf), maxLineBytes)), expected, "single bytes");
}

describe("LineDecoder", () => {
  it("decodes the doc comment example and keeps the partial line", () => {
    const d = new LineDecoder();
    assert.deepEqual(d.push(bytes('{"a":1}\n{"b"')), [{ ok: true, value: { a: 1 } }]);
    assert.equal(d.bufferedBytes, 4);
    assert.deepEqual(d.push(bytes(":2}\n")), [{ ok: true, value: { b: 2 } }]);
    assert.equal(d.bufferedBytes, 0);
  });

  it("uses a 32 MiB limit by default and honours a custom one", () => {
    assert.equal(DEFAULT_MAX_LINE_BYTES, 32 * 1024 * 1024);
    assert.equal(new LineDecoder().maxLineBytes, DEFAULT_MAX_LINE_BYTES);
    assert.equal(new LineDecoder({ maxLineBytes: 10 }).maxLineBytes, 10);
  });

  it("decodes several values in one chunk, in order, of any JSON type", () => {
    const got = decodeChunks([bytes('{"a":1}\n[1,{"b":2}]\n"text"\n42\nnull\ntrue\n')]);
    assert.deepEqual(summary(got), [{ a: 1 }, [1, { b: 2 }], "text", 42, null, true]);
  });

  describe("multi-byte UTF-8 split anywhere", () => {
    const values = [
      { jsonrpc: "2.0", id: 1, method: "café", params: { s: "é" } },
      { jsonrpc: "2.0", id: "€", result: { price: "12 €", clef: "𝄞" } },
      { note: "𝄞𝄞", emoji: "😀👍🏽", family: "👨‍👩‍👧" },
      { mixed: "aé€𝄞😀z", ascii: "plain" },
    ];
    const buf = concat(...values.map((v) => bytes(encodeLine(v))));

    it("contains 2-, 3- and 4-byte sequences (so the splits below cut inside characters)", () => {
      const leads = new Set(Array.from(buf).filter((b) => b >= 0xc0));
      assert.ok([...leads].some((b) => b >= 0xc2 && b <= 0xdf), "2-byte lead");
      assert.ok([...leads].some((b) => b >= 0xe0 && b <= 0xef), "3-byte lead");
      assert.ok([...leads].some((b) => b >= 0xf0 && b <= 0xf4), "4-byte lead");
    });

    it("decodes exactly when cut at every byte position and into single bytes", () => {
      assertEverySplit(buf, values);
    });

    it("decodes exactly when cut at every pair of positions (three chunks)", () => {
      for (let i = 0; i <= buf.length; i += 1) {
        for (let j = i; j <= buf.length; j += 1) {
          const chunks = [buf.subarray(0, i), buf.subarray(i, j), buf.subarray(j)];
          const got = summary(decodeChunks(chunks));
          if (!isDeepStrictEqual(got, values)) assert.deepEqual(got, values, `split at ${i} and ${j}`);
        }
      }
    });
  });

  it("tolerates CRLF line endings, wherever the CR and LF fall", () => {
    const buf = bytes('{"a":"é"}\r\n{"b":2}\r\n{"c":3}\n');
    assertEverySplit(buf, [{ a: "é" }, { b: 2 }, { c: 3 }]);
  });

  it("strips only one CR: a value whose line ends in CR CR still parses (CR is JSON whitespace)", () => {
    assert.deepEqual(summary(decodeChunks([bytes('{"a":1}\r\r\n')])), [{ a: 1 }]);
  });

  it("skips blank and whitespace-only lines", () => {
    const buf = bytes('\n\n   \n\t \n\r\n \r\n{"a":1}\n\n{"b":2}\n  \t');
    assertEverySplit(buf, [{ a: 1 }, { b: 2 }]);
  });

  describe("line length limit", () => {
    it("yields one LINE_TOO_LONG error for an over-long line and decodes the next line", () => {
      const d = new LineDecoder({ maxLineBytes: 16 });
      const out = d.push(bytes(`{"a":"${"x".repeat(40)}"}\n{"ok":true}\n`));
      assert.equal(out.length, 2);
      const first = out[0]!;
      assert.equal(first.ok, false);
      if (first.ok) return;
      assert.ok(first.error instanceof BridgeError);
      assert.equal(first.error.code, "LINE_TOO_LONG");
      assert.deepEqual(first.error.details, { maxLineBytes: 16 });
      assert.deepEqual(out[1], { ok: true, value: { ok: true } });
    });

    it("never decodes the tail of an over-long line, even when it looks like a message", () => {
      const tail = '{"jsonrpc":"2.0","id":1,"method":"x"}';
      const long = `{"a":"${"x".repeat(30)}","b":${tail}}`;
      const buf = bytes(`${long}\n${tail}\n`);
      // Limit big enough for the tail alone, too small for the whole line.
      const limit = tail.length + 2;
      assert.ok(long.length > limit);
      const expected = ["error:LINE_TOO_LONG", { jsonrpc: "2.0", id: 1, method: "x" }];
      assertEverySplit(buf, expected, limit);
    });

    it("discards a long line whose tail after the limit is itself a complete JSON line", () => {
      const tail = '{"jsonrpc":"2.0","id":7,"method":"evil"}';
      const limit = tail.length + 5;
      // Exactly `limit` bytes of junk, then a complete message, on the same line.
      const buf = bytes(`${"y".repeat(limit)}${tail}\n{"good":1}\n`);
      assertEverySplit(buf, ["error:LINE_TOO_LONG", { good: 1 }], limit);
    });

    it("reports an over-long line only once however many chunks it spans", () => {
      const d = new LineDecoder({ maxLineBytes: 8 });
      const errors: DecodedLine[] = [];
      for (let i = 0; i < 50; i++) errors.push(...d.push(bytes("zzzzzz")));
      assert.deepEqual(summary(errors), ["error:LINE_TOO_LONG"]);
      assert.equal(d.bufferedBytes, 0, "discarded bytes are not buffered");
      assert.deepEqual(summary(d.push(bytes('zz"\n[1]\n'))), [[1]]);
    });

    it("accepts a line of exactly the limit and rejects one byte more", () => {
      const line = '{"k":"vvvvvvvv"}';
      const limit = bytes(line).length;
      assertEverySplit(bytes(`${line}\n`), [{ k: "vvvvvvvv" }], limit);
      assertEverySplit(bytes(`${line}\n`), ["error:LINE_TOO_LONG"], limit - 1);
    });

    it("counts bytes, not characters, against the limit", () => {
      const line = '["€€"]'; // 4 ASCII bytes + 2 × 3 bytes = 10 bytes, 6 characters
      assert.equal(bytes(line).length, 10);
      assertEverySplit(bytes(`${line}\n`), [["€€"]], 10);
      assertEverySplit(bytes(`${line}\n`), ["error:LINE_TOO_LONG"], 9);
    });

    it("accepts a line at the limit followed by CRLF (the CR is not part of the line)", () => {
      const line = '{"k":"vvvvvvvv"}';
      const limit = bytes(line).length;
      assertEverySplit(bytes(`${line}\r\n{"n":2}\r\n`), [{ k: "vvvvvvvv" }, { n: 2 }], limit);
    });

    it("rejects a line at the limit plus a CR that is not the line's last byte", () => {
      const line = '{"k":"vvvvvvvv"}';
      const limit = bytes(line).length;
      // The CR is content here (a space follows it), so the line is limit + 2 bytes.
      assertEverySplit(bytes(`${line}\r \n{"n":2}\n`), ["error:LINE_TOO_LONG", { n: 2 }], limit);
    });

    it("accepts a line at the limit plus a final CR at end of input", () => {
      const line = '{"k":"vvvvvvvv"}';
      const limit = bytes(line).length;
      assertEverySplit(bytes(`${line}\r`), [{ k: "vvvvvvvv" }], limit);
    });

    it("drops an over-long final line at end() without decoding it", () => {
      const d = new LineDecoder({ maxLineBytes: 4 });
      assert.deepEqual(summary(d.push(bytes('{"a":1}'))), ["error:LINE_TOO_LONG"]);
      assert.deepEqual(d.end(), []);
      // end() left the discarding state: the next line decodes.
      assert.deepEqual(summary(d.push(bytes("[2]\n"))), [[2]]);
    });
  });

  it("reports invalid JSON for that line only and continues", () => {
    const buf = bytes('{"a":1}\n{not json}\n{"b":\n[1,2\n{"c":3}\n');
    assertEverySplit(buf, [{ a: 1 }, "error:PARSE_ERROR", "error:PARSE_ERROR", "error:PARSE_ERROR", { c: 3 }]);
  });

  it("gives PARSE_ERROR as a BridgeError that shows the offending line", () => {
    const [line] = decodeChunks([bytes("hello world\n")]);
    assert.ok(line && !line.ok);
    assert.ok(line.error instanceof BridgeError);
    assert.equal(line.error.code, "PARSE_ERROR");
    assert.match(line.error.message, /hello world/);
  });

  it("leaves the CR of a CRLF line out of the line shown in a PARSE_ERROR", () => {
    const [line] = decodeChunks([bytes("not json\r\n")]);
    assert.ok(line && !line.ok);
    assert.match(line.error.message, /"not json"$/);
  });

  it("reports invalid UTF-8 for that line only and continues", () => {
    const buf = concat(
      bytes('{"a":"é"}\n'),
      new Uint8Array([0x22, 0xff, 0x22, 0x0a]), // "\xff"
      bytes('{"b":"€"}\n'),
      new Uint8Array([0x22, 0xc3, 0x28, 0x22, 0x0a]), // "\xc3(" : lead byte without continuation
      new Uint8Array([0x22, 0xf0, 0x9f, 0x98, 0x22, 0x0a]), // truncated 4-byte sequence
      new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22, 0x0a]), // encoded UTF-16 surrogate
      new Uint8Array([0x22, 0xc0, 0xaf, 0x22, 0x0a]), // overlong encoding of "/"
      bytes('{"c":"😀"}\n'),
    );
    assertEverySplit(buf, [
      { a: "é" },
      "error:INVALID_UTF8",
      { b: "€" },
      "error:INVALID_UTF8",
      "error:INVALID_UTF8",
      "error:INVALID_UTF8",
      "error:INVALID_UTF8",
      { c: "😀" },
    ]);
  });

  it("gives INVALID_UTF8 as a BridgeError", () => {
    const [line] = decodeChunks([new Uint8Array([0xff, 0x0a])]);
    assert.ok(line && !line.ok);
    assert.ok(line.error instanceof BridgeError);
    assert.equal(line.error.code, "INVALID_UTF8");
  });

  describe("end()", () => {
    it("flushes a final line without a newline", () => {
      const d = new LineDecoder();
      assert.deepEqual(d.push(bytes('{"a":1}\n{"last":"é"}')), [{ ok: true, value: { a: 1 } }]);
      assert.deepEqual(d.end(), [{ ok: true, value: { last: "é" } }]);
      assert.deepEqual(d.end(), [], "a second end() has nothing left");
      assert.equal(d.bufferedBytes, 0);
    });

    it("returns nothing when the input ended with a newline or was empty", () => {
      const d = new LineDecoder();
      assert.deepEqual(d.end(), []);
      d.push(bytes("[1]\n"));
      assert.deepEqual(d.end(), []);
    });

    it("reports a truncated final line as PARSE_ERROR and skips a whitespace one", () => {
      assert.deepEqual(summary(decodeChunks([bytes('{"a":')])), ["error:PARSE_ERROR"]);
      assert.deepEqual(summary(decodeChunks([bytes(" \t ")])), []);
    });

    it("reports a final line cut inside a character as INVALID_UTF8", () => {
      const euro = bytes('"€"');
      assert.deepEqual(summary(decodeChunks([euro.subarray(0, 2)])), ["error:INVALID_UTF8"]);
    });
  });

  describe("reset()", () => {
    it("clears the discarding state so the next line decodes", () => {
      const withReset = new LineDecoder({ maxLineBytes: 8 });
      const without = new LineDecoder({ maxLineBytes: 8 });
      for (const d of [withReset, without]) {
        assert.deepEqual(summary(d.push(bytes("0123456789abcdef"))), ["error:LINE_TOO_LONG"]);
      }
      withReset.reset();
      // Without reset the rest of the long line (up to its newline) is still being discarded.
      assert.deepEqual(summary(without.push(bytes('{"a":1}\n'))), []);
      assert.deepEqual(summary(withReset.push(bytes('{"a":1}\n'))), [{ a: 1 }]);
    });

    it("drops a partial line", () => {
      const d = new LineDecoder();
      assert.deepEqual(d.push(bytes('{"partial":')), []);
      assert.equal(d.bufferedBytes, 11);
      d.reset();
      assert.equal(d.bufferedBytes, 0);
      assert.deepEqual(summary(d.push(bytes('{"b":2}\n'))), [{ b: 2 }]);
      assert.deepEqual(d.end(), []);
    });
  });

  it("reports bufferedBytes for the line in progress, including a CR", () => {
    const d = new LineDecoder();
    assert.equal(d.bufferedBytes, 0);
    d.push(bytes("[1,"));
    assert.equal(d.bufferedBytes, 3);
    d.push(bytes("é")); // 2 bytes
    assert.equal(d.bufferedBytes, 5);
    d.push(bytes('"x"]\r'));
    assert.equal(d.bufferedBytes, 10);
    d.push(bytes("\n[2"));
    assert.equal(d.bufferedBytes, 2);
    d.push(bytes("]\n"));
    assert.equal(d.bufferedBytes, 0);
  });

  describe("large inputs (amortised linear; results checked, not timed)", () => {
    it("decodes a 16 MiB line delivered in 64 KiB chunks", () => {
      // A multi-byte pattern so that chunk edges fall inside characters.
      const unit = "abcdéf€g𝄞h"; // 16 bytes
      const payload = unit.repeat((16 * 1024 * 1024) / 16);
      const buf = bytes(`${JSON.stringify({ payload, n: 1 })}\n{"after":true}\n`);
      assert.ok(buf.length > 16 * 1024 * 1024);
      const chunk = 64 * 1024;
      const d = new LineDecoder();
      const out: DecodedLine[] = [];
      for (let i = 0; i < buf.length; i += chunk) {
        out.push(...d.push(buf.subarray(i, i + chunk)));
        if (out.length === 0) assert.equal(d.bufferedBytes, Math.min(i + chunk, buf.length));
      }
      out.push(...d.end());
      assert.equal(out.length, 2);
      const first = out[0]!;
      assert.ok(first.ok);
      const value = first.value as { payload: string; n: number };
      assert.equal(value.n, 1);
      assert.equal(value.payload.length, payload.length);
      assert.ok(value.payload === payload, "payload decoded byte-exact");
      assert.deepEqual(out[1], { ok: true, value: { after: true } });
    });

    it("decodes 100k small messages delivered in chunks misaligned by one byte", () => {
      const count = 100_000;
      const lines: string[] = [];
      for (let i = 0; i < count; i++) lines.push(encodeLine({ jsonrpc: "2.0", id: i, method: "m" }));
      const buf = bytes(lines.join(""));
      // Messages are 33-38 bytes; a 37-byte chunk drifts against the line boundaries.
      const sizes = [37, 38, 36];
      const d = new LineDecoder();
      const ids: unknown[] = [];
      let k = 0;
      for (let i = 0; i < buf.length; k++) {
        const size = sizes[k % sizes.length]!;
        for (const line of d.push(buf.subarray(i, i + size))) {
          assert.ok(line.ok);
          ids.push((line.value as { id: unknown }).id);
        }
        i += size;
      }
      assert.deepEqual(d.end(), []);
      assert.equal(ids.length, count);
      for (let i = 0; i < count; i++) if (ids[i] !== i) assert.equal(ids[i], i, `message ${i}`);
    });

    it("decodes 20k small messages delivered one byte at a time", () => {
      const count = 20_000;
      let text = "";
      for (let i = 0; i < count; i++) text += encodeLine({ id: i, s: "é€" });
      const buf = bytes(text);
      const d = new LineDecoder();
      let next = 0;
      for (let i = 0; i < buf.length; i++) {
        for (const line of d.push(buf.subarray(i, i + 1))) {
          assert.ok(line.ok);
          const v = line.value as { id: number; s: string };
          if (v.id !== next || v.s !== "é€") assert.deepEqual(v, { id: next, s: "é€" });
          next++;
        }
      }
      assert.equal(next, count);
    });
  });
});

describe("encodeLine", () => {
  it("encodes one value as compact JSON with a single trailing newline", () => {
    assert.equal(encodeLine({ jsonrpc: "2.0", id: 1, method: "ping" }), '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  });

  it("never embeds a raw newline or CR, even for strings that contain them", () => {
    const line = encodeLine({ text: "a\nb\r\nc", nested: ["\n"] });
    assert.equal(line.indexOf("\n"), line.length - 1);
    assert.equal(line.indexOf("\r"), -1);
  });

  it("encodes a batch as one line", () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "a" },
      { jsonrpc: "2.0", method: "b" },
    ];
    const line = encodeLine(batch);
    assert.equal(line.split("\n").length, 2);
    assert.deepEqual(JSON.parse(line), batch);
  });

  it("round-trips through LineDecoder, including non-ASCII and line separators", () => {
    const values = [{ s: "é€𝄞😀" }, { s: "a\u2028b\u2029c" }, { s: "tab\there", n: -0.5 }, []];
    const buf = bytes(values.map(encodeLine).join(""));
    assertEverySplit(buf, values);
  });
});

it("a UTF-8 byte order mark at the start of the stream is dropped", () => {
  const d = new LineDecoder();
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":1}\n')]);
  assert.deepEqual(d.push(bytes), [{ ok: true, value: { a: 1 } }]);
});
