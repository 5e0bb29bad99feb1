import assert from "node:assert/strict";
import type { Writable } from "node:stream";
import { test } from "node:test";
import { TickCork } from "../../src/transport/tick-cork.ts";
import { writeRecorder } from "./write-recorder.ts";

function nextTick(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

function writeAll(cork: TickCork, stream: Writable, words: string[]): void {
  for (const w of words) {
    cork.hold();
    stream.write(w);
  }
}

test("without a bound, the writes of one tick leave together when the tick ends", async () => {
  const { stream, writes } = writeRecorder();
  const cork = new TickCork(stream);
  writeAll(cork, stream, ["a", "b", "c", "d", "e"]);
  assert.deepEqual(writes, [], "nothing leaves before the tick ends");
  await nextTick();
  assert.deepEqual(writes, [["a", "b", "c", "d", "e"]]);
  stream.destroy();
});

test("maxHeld splits a tick's writes into batches of that many, in order, the last at the tick's end", async () => {
  const { stream, writes } = writeRecorder();
  const cork = new TickCork(stream, 2);
  writeAll(cork, stream, ["a", "b", "c", "d", "e"]);
  assert.deepEqual(writes, [["a", "b"], ["c", "d"]], "full batches leave at once");
  await nextTick();
  assert.deepEqual(writes, [["a", "b"], ["c", "d"], ["e"]]);
  // The next tick starts a new batch.
  writeAll(cork, stream, ["f", "g", "h"]);
  await nextTick();
  assert.deepEqual(writes.slice(3), [["f", "g"], ["h"]]);
  assert.equal(stream.writableCorked, 0, "the stream is left uncorked");
  stream.destroy();
});

test("maxHeld 1 writes each message as it comes", async () => {
  const { stream, writes } = writeRecorder();
  const cork = new TickCork(stream, 1);
  writeAll(cork, stream, ["a", "b", "c"]);
  assert.deepEqual(writes, [["a"], ["b"]]);
  await nextTick();
  assert.deepEqual(writes, [["a"], ["b"], ["c"]]);
  assert.equal(stream.writableCorked, 0);
  stream.destroy();
});
