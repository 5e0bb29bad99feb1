import assert from "node:assert/strict";
import { test } from "node:test";
import { EventStore, formatEventId, parseEventId } from "../../src/transport/event-store.ts";

const seqs = (events: Array<{ seq: number }>) => events.map((e) => e.seq);

test("event ids name their stream and round-trip; anything else does not parse", () => {
  assert.equal(formatEventId("3", 17), "3:17");
  assert.deepEqual(parseEventId("3:17"), { streamId: "3", seq: 17 });
  assert.deepEqual(parseEventId("0:0"), { streamId: "0", seq: 0 });
  for (const bad of ["", "3", "3:", ":1", "a:1", "1:b", "01:1", "1:01", "1:2:3", " 1:2", "1:2\n", "1234567890123456:1"]) {
    assert.equal(parseEventId(bad), undefined, JSON.stringify(bad));
  }
});

test("after() replays one stream's later events in order, never another stream's", () => {
  const store = new EventStore();
  store.append("1", 1, "a");
  store.append("2", 1, "x");
  store.append("1", 2, "b");
  store.append("1", 3, "c");
  store.append("2", 2, "y");
  assert.deepEqual(store.after("1", 0).map((e) => e.data), ["a", "b", "c"]);
  assert.deepEqual(store.after("1", 1).map((e) => e.data), ["b", "c"]);
  assert.deepEqual(store.after("1", 3), []);
  assert.deepEqual(store.after("2", 1).map((e) => e.data), ["y"]);
  assert.deepEqual(store.after("9", 0), []);
  assert.equal(store.size, 5);
});

test("the count limit drops the oldest events first, across streams", () => {
  const store = new EventStore({ maxEvents: 3 });
  store.append("1", 1, "a");
  store.append("2", 1, "x");
  store.append("1", 2, "b");
  store.append("1", 3, "c");
  assert.equal(store.size, 3);
  assert.equal(store.dropped, 1);
  assert.deepEqual(seqs(store.after("1", 0)), [2, 3]);
  assert.deepEqual(seqs(store.after("2", 0)), [1]);
  store.append("1", 4, "d");
  assert.deepEqual(store.after("2", 0), [], "stream 2's only event was the oldest");
  assert.deepEqual(seqs(store.after("1", 0)), [2, 3, 4]);
});

test("the byte limit counts UTF-8 bytes and drops the oldest; an event alone over it is not kept", () => {
  const store = new EventStore({ maxBytes: 10 });
  store.append("1", 1, "aaaa");
  store.append("1", 2, "é€"); // 5 bytes
  assert.equal(store.bytes, 9);
  store.append("1", 3, "bb");
  assert.equal(store.bytes, 7);
  assert.deepEqual(seqs(store.after("1", 0)), [2, 3]);
  store.append("1", 4, "x".repeat(11));
  assert.deepEqual(seqs(store.after("1", 0)), [2, 3], "the oversized event is refused, the others stay");
  assert.equal(store.dropped, 2);
});

test("a long run stays within both limits and keeps the newest events", () => {
  const store = new EventStore({ maxEvents: 100, maxBytes: 1000 });
  for (let i = 1; i <= 10_000; i++) store.append(String(i % 3), i, "y".repeat(i % 20));
  assert.ok(store.size <= 100);
  assert.ok(store.bytes <= 1000);
  const kept = [...store.after("0", 0), ...store.after("1", 0), ...store.after("2", 0)].map((e) => e.seq).sort((a, b) => a - b);
  assert.equal(kept.length, store.size);
  assert.equal(kept[kept.length - 1], 10_000);
  for (let i = 1; i < kept.length; i++) assert.equal(kept[i], kept[i - 1] + 1, "a contiguous newest window");
  store.clear();
  assert.equal(store.size, 0);
  assert.equal(store.bytes, 0);
});

test("limits must be positive integers", () => {
  assert.throws(() => new EventStore({ maxEvents: 0 }), RangeError);
  assert.throws(() => new EventStore({ maxBytes: 1.5 }), RangeError);
});
