/** LineDecoder on bad input: the line length limit, invalid JSON and invalid UTF-8, each confined to its own line. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { LineDecoder, type DecodedLine } from "../../src/jsonrpc/ndjson.ts";
import { assertEverySplit, bytes, concat, decodeChunks, summary } from "./ndjson-helpers.ts";

describe("LineDecoder", () => {
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
      assert.deepEqual(first.error.details, { maxLineBytes: 16, bytesRead: 48 });
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
});
