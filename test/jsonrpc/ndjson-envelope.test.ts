/** scanEnvelope, and the id a LINE_TOO_LONG error carries: the top-level id only, never a nested one. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { LineDecoder, scanEnvelope } from "../../src/jsonrpc/ndjson.ts";
import { bytes, concat } from "./ndjson-helpers.ts";

const scan = (text: string) => scanEnvelope(bytes(text));

describe("scanEnvelope", () => {
  it("reads the top-level id and kind of complete and cut-off messages", () => {
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"a"'), { id: 7, kind: "response" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":"a\\"b","error":{"code":-1,'), { id: 'a"b', kind: "response" });
    assert.deepEqual(scan(' \r\n\t{ "id" : 0 , "result" : 1 }'), { id: 0, kind: "response" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{'), { id: 3, kind: "request" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'), { kind: "request" });
  });

  it("never takes an id from inside params, result or a string", () => {
    assert.deepEqual(scan('{"jsonrpc":"2.0","result":{"id":1,"items":[{"id":2}]},"id":9}'), { id: 9, kind: "response" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","result":{"id":1,"text":"'), { kind: "response" });
    assert.deepEqual(scan('{"note":"\\"id\\":5,","result":['), { kind: "response" });
    assert.deepEqual(scan('{"result":[{"id":4}],"x":"}]}\\"","id":6}'), { id: 6, kind: "response" });
    assert.deepEqual(scan('[{"jsonrpc":"2.0","id":1,"result":{}}'), {});
  });

  it("does not read a value the bytes cut off, nor ids that are not strings or numbers", () => {
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":12'), {}, "12 may be the start of 123");
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":"ab'), {});
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":null,"error":{'), { kind: "response" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":{"n":1},"result":'), { kind: "response" });
    assert.deepEqual(scan('{"jsonrpc":"2.0","id":1e999,"result":'), { kind: "response" });
    assert.deepEqual(scan('{"id":tru,"result":1}'), { kind: "response" });
  });

  it("stops at the first thing that is not a member", () => {
    assert.deepEqual(scan('{"jsonrpc" "2.0","id":1,"result":1}'), {});
    assert.deepEqual(scan('{"jsonrpc":"2.0" "id":1,"result":1}'), {});
    assert.deepEqual(scan("not json at all"), {});
    assert.deepEqual(scan(""), {});
  });
});

describe("LineDecoder: what a LINE_TOO_LONG error says about the line", () => {
  const detailsOf = (chunks: Uint8Array[], maxLineBytes: number) => {
    const d = new LineDecoder({ maxLineBytes });
    const errors = chunks.flatMap((c) => d.push(c)).filter((l) => !l.ok);
    assert.equal(errors.length, 1);
    return (errors[0] as { error: { details: unknown } }).error.details;
  };

  it("reads the id from the held pieces and the chunk that crossed the limit, split anywhere", () => {
    const line = bytes(`{"jsonrpc":"2.0","id":42,"result":{"text":"${"y".repeat(300)}"}}\n`);
    for (let cut = 1; cut < 60; cut++) {
      assert.deepEqual(detailsOf([line.subarray(0, cut), line.subarray(cut)], 100), {
        maxLineBytes: 100,
        bytesRead: line.length - 1,
        id: 42,
        kind: "response",
      });
    }
  });

  it("reads no more than the first 4 KiB of the line", () => {
    const head = bytes(`{"jsonrpc":"2.0","result":"${"z".repeat(5000)}",`);
    const tail = bytes('"id":5}\n');
    assert.deepEqual(detailsOf([concat(head, tail)], 100), { maxLineBytes: 100, bytesRead: head.length + tail.length - 1, kind: "response" });
  });
});
