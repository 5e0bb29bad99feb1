import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { SseParser, formatSseComment, formatSseEvent, type SseEvent } from "../../src/jsonrpc/sse.ts";

/** Feeds the chunks to a fresh parser; returns the events and the parser. */
function parse(chunks: string[], maxEventSize?: number): { events: SseEvent[]; parser: SseParser } {
  const parser = new SseParser(maxEventSize === undefined ? {} : { maxEventSize });
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...parser.feed(c));
  return { events, parser };
}

/**
 * Asserts `text` parses to `expected` fed whole, cut at every position into two chunks, cut at
 * every pair of positions into three, one character at a time, and with empty chunks between
 * every character (a streaming TextDecoder returns "" while it holds a partial UTF-8 sequence).
 */
function assertEverySplit(text: string, expected: SseEvent[], lastEventId?: string): void {
  const check = (chunks: string[], what: string) => {
    const { events, parser } = parse(chunks);
    assert.deepEqual(events, expected, what);
    if (lastEventId !== undefined) assert.equal(parser.lastEventId, lastEventId, `${what}: lastEventId`);
  };
  check([text], "whole");
  for (let i = 0; i <= text.length; i++) check([text.slice(0, i), text.slice(i)], `split at ${i}`);
  if (text.length <= 80) {
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        check([text.slice(0, i), text.slice(i, j), text.slice(j)], `split at ${i} and ${j}`);
      }
    }
  }
  check([...text], "single characters");
  check([...text].flatMap((c) => ["", c, ""]), "empty chunks around every character");
}

function limitError(fn: () => unknown): void {
  assert.throws(fn, { name: "BridgeError", code: "LIMIT_EXCEEDED" });
}

function invalidMessage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, { name: "BridgeError", code: "INVALID_MESSAGE", message: pattern });
}

describe("SseParser", () => {
  it("joins multi-line data with LF and reads event, id and retry", () => {
    const text = "event: update\nid: 7\nretry: 1500\ndata: first\ndata: second\ndata: third\n\n";
    assertEverySplit(text, [{ event: "update", data: "first\nsecond\nthird", id: "7", retry: 1500 }], "7");
    const { parser } = parse([text]);
    assert.equal(parser.retry, 1500);
  });

  it("defaults the event type to message and resets it after each event", () => {
    const text = "event: a\ndata: 1\n\ndata: 2\n\n";
    assertEverySplit(text, [
      { event: "a", data: "1" },
      { event: "message", data: "2" },
    ]);
  });

  for (const [name, eol] of [["LF", "\n"], ["CR", "\r"], ["CRLF", "\r\n"]] as const) {
    it(`parses ${name} line ends split at every position`, () => {
      const text = ["id: 1", "data: a", "data: b", "", ": note", "event: e", "data: c", "", ""].join(eol);
      assertEverySplit(
        text,
        [
          { event: "message", data: "a\nb", id: "1" },
          { event: "e", data: "c" },
        ],
        "1",
      );
    });
  }

  it("parses mixed line ends in one stream", () => {
    assertEverySplit("data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r", [
      { event: "message", data: "a\nb\nc" },
      { event: "message", data: "d" },
    ]);
  });

  it("counts a CRLF split between two chunks once", () => {
    // Were the LF counted again, the blank line would end the event after "a".
    const { events } = parse(["data: a\r", "\ndata: b\r", "\n\r", "\n"]);
    assert.deepEqual(events, [{ event: "message", data: "a\nb" }]);
  });

  it("keeps a pending CR across an empty chunk (regression: the LF used to count as a second line end)", () => {
    const { events } = parse(["data: x\r", "", "\ndata: y\r\n\r\n"]);
    assert.deepEqual(events, [{ event: "message", data: "x\ny" }]);
  });

  it("treats CR CR as two line ends, not one", () => {
    const { events } = parse(["data: a\r", "\r", "data: b\n\n"]);
    assert.deepEqual(events, [
      { event: "message", data: "a" },
      { event: "message", data: "b" },
    ]);
  });

  it("ignores an id containing NUL and keeps the previous one", () => {
    assertEverySplit("id: good\ndata: 1\n\nid: ba\0d\ndata: 2\n\n", [
      { event: "message", data: "1", id: "good" },
      { event: "message", data: "2" },
    ], "good");
  });

  it("honours retry only when it is all ASCII digits", () => {
    const bad = ["retry: 10a", "retry: -5", "retry: 1.5", "retry: ", "retry:", "retry:  5", "retry: 1e3", "retry: \u0661\u0662"];
    for (const line of bad) {
      const { events, parser } = parse([`retry: 250\ndata: x\n\n${line}\ndata: y\n\n`]);
      assert.deepEqual(events, [
        { event: "message", data: "x", retry: 250 },
        { event: "message", data: "y" },
      ], line);
      assert.equal(parser.retry, 250, `${line}: previous retry kept`);
    }
    const { events, parser } = parse(["retry:0\ndata: z\n\n"]);
    assert.deepEqual(events, [{ event: "message", data: "z", retry: 0 }]);
    assert.equal(parser.retry, 0);
  });

  it("ignores comments and unknown fields; a comment-only block dispatches nothing", () => {
    assertEverySplit(": hello\n:\n\nfoo: bar\nDATA: upper case is another field\ndata: kept\n: inside\n\n", [
      { event: "message", data: "kept" },
    ]);
  });

  it("drops a leading BOM, but only at the very start", () => {
    assertEverySplit("\uFEFFdata: a\n\n", [{ event: "message", data: "a" }]);
    // A later BOM belongs to the field name, which is then unknown.
    const { events } = parse(["data: a\n\n", "\uFEFFdata: b\n\n", "data: c\n\n"]);
    assert.deepEqual(events, [
      { event: "message", data: "a" },
      { event: "message", data: "c" },
    ]);
    // The BOM may arrive alone in the first chunk.
    assert.deepEqual(parse(["\uFEFF", "data: d\n\n"]).events, [{ event: "message", data: "d" }]);
    // An empty first chunk does not use up the BOM check.
    assert.deepEqual(parse(["", "\uFEFFdata: e\n\n"]).events, [{ event: "message", data: "e" }]);
  });

  it("does not dispatch an event without data, but its id and retry still count", () => {
    const { events, parser } = parse(["id: 42\nretry: 3000\n\nevent: nothing\n\n"]);
    assert.deepEqual(events, []);
    assert.equal(parser.lastEventId, "42");
    assert.equal(parser.retry, 3000);
  });

  it("counts an id only once its event is complete (regression: a cut-off event's id was used to resume)", () => {
    const parser = new SseParser();
    assert.deepEqual(parser.feed("id: 1\ndata: a\n\nid: 2\ndata: b"), [{ event: "message", data: "a", id: "1" }]);
    assert.equal(parser.lastEventId, "1", "event 2 is incomplete: resuming must replay it");
    parser.feed("\n");
    assert.equal(parser.lastEventId, "1");
    parser.feed("\n");
    assert.equal(parser.lastEventId, "2");
    parser.feed("id: 3\n");
    parser.reset();
    assert.equal(parser.lastEventId, "2", "reset drops the incomplete event and its id");
  });

  it("dispatches a priming event (id, empty data) with empty data", () => {
    assertEverySplit("id: p1\nretry: 500\ndata:\n\n", [{ event: "message", data: "", id: "p1", retry: 500 }], "p1");
  });

  it("reads a field without a colon as an empty value and strips one space only", () => {
    assertEverySplit("data\ndata\n\ndata:  two spaces\n\ndata:no space\n\n", [
      { event: "message", data: "\n" },
      { event: "message", data: " two spaces" },
      { event: "message", data: "no space" },
    ]);
  });

  it("keeps colons after the first one in the value", () => {
    assert.deepEqual(parse(['data: {"a":"b:c"}\n\n']).events, [{ event: "message", data: '{"a":"b:c"}' }]);
  });

  it("does not dispatch an incomplete event at the end of the input", () => {
    assert.deepEqual(parse(["data: complete\n\ndata: partial\n"]).events, [{ event: "message", data: "complete" }]);
  });

  it("keeps multi-byte characters intact", () => {
    assertEverySplit("data: h\u00e9llo \u{1F600}\n\n", [{ event: "message", data: "h\u00e9llo \u{1F600}" }]);
  });

  it("allows an event exactly at the limit and refuses one character more", () => {
    // Each data line counts its value plus one for the joining LF.
    assert.deepEqual(parse(["data: abc\ndata: abc\n\n"], 8).events, [{ event: "message", data: "abc\nabc" }]);
    limitError(() => parse(["data: abc\ndata: abcd\n\n"], 8));
  });

  it("refuses an over-long pending line before it ends", () => {
    const parser = new SseParser({ maxEventSize: 16 });
    parser.feed("data: 0123");
    limitError(() => parser.feed("456789abcdef"));
  });

  it("refuses many small data lines that add up past the limit", () => {
    const parser = new SseParser({ maxEventSize: 100 });
    assert.throws(() => {
      for (let i = 0; i < 100; i++) parser.feed("data: 0123456789\n");
    }, { name: "BridgeError", code: "LIMIT_EXCEEDED" });
  });

  it("refuses all input after an overflow until reset, then works and keeps lastEventId and retry", () => {
    const parser = new SseParser({ maxEventSize: 10 });
    assert.deepEqual(parser.feed("id: 5\nretry: 99\ndata: ok\n\n"), [{ event: "message", data: "ok", id: "5", retry: 99 }]);
    limitError(() => parser.feed("data: this is far too long\n"));
    limitError(() => parser.feed("data: x\n\n"));
    limitError(() => parser.feed(""));
    parser.reset();
    assert.deepEqual(parser.feed("data: x\n\n"), [{ event: "message", data: "x" }]);
    assert.equal(parser.lastEventId, "5");
    assert.equal(parser.retry, 99);
  });

  it("reset drops a half-read event", () => {
    const parser = new SseParser();
    parser.feed("event: half\ndata: lost\ndata: par");
    parser.reset();
    assert.deepEqual(parser.feed("data: fresh\n\n"), [{ event: "message", data: "fresh" }]);
  });

  it("drops a leading BOM again after reset", () => {
    const parser = new SseParser();
    parser.feed("\uFEFFdata: a\n\n");
    parser.reset();
    assert.deepEqual(parser.feed("\uFEFFdata: b\n\n"), [{ event: "message", data: "b" }]);
  });
});

describe("formatSseEvent", () => {
  it("writes the fields in order and ends the event with a blank line", () => {
    assert.equal(
      formatSseEvent({ event: "message", id: "7", retry: 500, data: '{"jsonrpc":"2.0"}' }),
      'event: message\nid: 7\nretry: 500\ndata: {"jsonrpc":"2.0"}\n\n',
    );
    assert.equal(formatSseEvent({ id: "p", data: "" }), "id: p\ndata: \n\n");
  });

  it("splits data on CR, LF and CRLF into one data line each", () => {
    assert.equal(formatSseEvent({ data: "a\nb\rc\r\nd" }), "data: a\ndata: b\ndata: c\ndata: d\n\n");
  });

  it("cannot end an event early or inject fields through data", () => {
    const hostile = "x\n\nevent: admin\nid: 999\ndata: injected\r\rretry: 1";
    const text = formatSseEvent({ event: "message", id: "1", data: hostile });
    const { events, parser } = parse([text]);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.event, "message");
    assert.equal(events[0]!.id, "1");
    assert.equal(events[0]!.data, "x\n\nevent: admin\nid: 999\ndata: injected\n\nretry: 1");
    assert.equal(parser.retry, undefined);
    assert.equal(parser.lastEventId, "1");
  });

  it("refuses CR or LF in event and id (field injection)", () => {
    invalidMessage(() => formatSseEvent({ event: "message\ndata: evil", data: "x" }), /event/);
    invalidMessage(() => formatSseEvent({ event: "message\r", data: "x" }), /event/);
    invalidMessage(() => formatSseEvent({ id: "1\nevent: admin", data: "x" }), /id/);
    invalidMessage(() => formatSseEvent({ id: "1\r\n", data: "x" }), /id/);
  });

  it("refuses NUL in id and a retry that is not a non-negative integer", () => {
    invalidMessage(() => formatSseEvent({ id: "a\0b", data: "x" }), /NUL/);
    invalidMessage(() => formatSseEvent({ retry: -1, data: "x" }), /retry/);
    invalidMessage(() => formatSseEvent({ retry: 1.5, data: "x" }), /retry/);
    invalidMessage(() => formatSseEvent({ retry: Number.NaN, data: "x" }), /retry/);
  });

  it("round-trips through the parser at every split position", () => {
    const inputs = [
      { event: "message", id: "s1-1", data: '{"jsonrpc":"2.0","id":1,"result":{}}' },
      { event: "endpoint", data: "/messages?sessionId=abc" },
      { id: "s1-2", retry: 2000, data: "" },
      { event: "message", data: "line one\nline two" },
    ];
    const text = inputs.map((f) => formatSseEvent(f)).join("") + formatSseComment("keep-alive");
    assertEverySplit(text, [
      { event: "message", id: "s1-1", data: '{"jsonrpc":"2.0","id":1,"result":{}}' },
      { event: "endpoint", data: "/messages?sessionId=abc" },
      { event: "message", id: "s1-2", retry: 2000, data: "" },
      { event: "message", data: "line one\nline two" },
    ], "s1-2");
  });
});

describe("formatSseComment", () => {
  it("writes a comment the parser ignores, with newlines flattened", () => {
    assert.equal(formatSseComment(), ": \n\n");
    const text = formatSseComment("a\nb\rdata: evil");
    assert.equal(text, ": a b data: evil\n\n");
    assert.deepEqual(parse([text]).events, []);
  });
});
