/** LineDecoder on well-formed input (framing, UTF-8 split anywhere, CRLF, end/reset, large inputs), encodeLine, and the BOM. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import {
  DEFAULT_MAX_LINE_BYTES,
  LineDecoder,
  encodeLine,
  type DecodedLine,
} from "../../src/jsonrpc/ndjson.ts";
import { assertEverySplit, bytes, concat, decodeChunks, summary } from "./ndjson-helpers.ts";

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
