/** TimeoutQueue: many timeouts of one length on one timer, oldest first. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { TimeoutQueue } from "../../src/util/timeout-queue.ts";

const refedTimeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

test("each entry times out once, no sooner than its own timeout, in the order they joined", async () => {
  const q = new TimeoutQueue(40);
  const fired: { name: string; after: number }[] = [];
  const join = (name: string): void => {
    const at = performance.now();
    q.add(() => fired.push({ name, after: performance.now() - at }));
  };
  join("a");
  await sleep(15);
  join("b");
  await sleep(15);
  join("c");
  await sleep(120);
  assert.deepEqual(fired.map((f) => f.name), ["a", "b", "c"]);
  // The timer runs on the loop's millisecond clock: allow it that rounding, never more.
  for (const f of fired) assert.ok(f.after >= 39, `${f.name} fired after ${f.after} ms`);
});

test("a cancelled entry never fires, and cancelling is idempotent and harmless after the timeout", async () => {
  const q = new TimeoutQueue(20);
  const fired: string[] = [];
  const cancelFirst = q.add(() => fired.push("first"));
  const cancelSecond = q.add(() => fired.push("second"));
  const cancelThird = q.add(() => fired.push("third"));
  cancelFirst();
  cancelFirst();
  cancelThird();
  await sleep(80);
  assert.deepEqual(fired, ["second"]);
  cancelSecond(); // after it fired: nothing happens
  assert.deepEqual(fired, ["second"]);
});

test("the oldest entry leaving early does not delay or lose the ones behind it", async () => {
  const q = new TimeoutQueue(30);
  const fired: string[] = [];
  const cancelOld = q.add(() => fired.push("old"));
  await sleep(10);
  q.add(() => fired.push("young"));
  cancelOld(); // the timer was armed for "old"; it must move on to "young"
  await sleep(90);
  assert.deepEqual(fired, ["young"]);
});

test("an entry added from a timeout callback, and one added after the queue emptied, still fire", async () => {
  const q = new TimeoutQueue(15);
  const fired: string[] = [];
  q.add(() => {
    fired.push("first");
    q.add(() => fired.push("added by first"));
  });
  await sleep(80);
  assert.deepEqual(fired, ["first", "added by first"]);
  q.add(() => fired.push("after idle"));
  await sleep(60);
  assert.deepEqual(fired, ["first", "added by first", "after idle"]);
});

test("its timer never keeps the process alive", async () => {
  const before = refedTimeouts();
  const q = new TimeoutQueue(60_000);
  const cancel = q.add(() => assert.fail("must not fire"));
  assert.equal(refedTimeouts(), before);
  cancel();
});

test("the timeout must be what setTimeout can wait", () => {
  for (const bad of [0, 0.5, -1, 2 ** 31, Number.NaN, Infinity]) {
    assert.throws(() => new TimeoutQueue(bad), RangeError, String(bad));
  }
  assert.equal(new TimeoutQueue(1).ms, 1);
});
