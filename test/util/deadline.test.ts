/** raceDeadline, settlesWithin and withDeadline: a promise against a deadline, in one place. */
import assert from "node:assert/strict";
import { mock, test, type TestContext } from "node:test";
import { raceDeadline, settlesWithin, TIMED_OUT, withDeadline } from "../../src/util/deadline.ts";

test("raceDeadline resolves to the promise's value when it settles first", async () => {
  assert.equal(await raceDeadline(Promise.resolve(42), 1_000), 42);
  assert.equal(await settlesWithin(Promise.resolve(), 1_000), true);
});

test("raceDeadline resolves to TIMED_OUT when the deadline comes first", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const never = new Promise<number>(() => {});
  const raced = raceDeadline(never, 500);
  const settled = settlesWithin(never, 500);
  t.mock.timers.tick(499);
  t.mock.timers.tick(1);
  assert.equal(await raced, TIMED_OUT);
  assert.equal(await settled, false);
});

test("raceDeadline rejects with the promise's error when it rejects first", async () => {
  const failure = new Error("boom");
  await assert.rejects(raceDeadline(Promise.reject(failure), 1_000), failure);
  await assert.rejects(settlesWithin(Promise.reject(failure), 1_000), failure);
});

test("raceDeadline clears its timer once the promise settles", async (t) => {
  const cleared = mock.method(globalThis, "clearTimeout");
  t.after(() => cleared.mock.restore());
  await raceDeadline(Promise.resolve("done"), 60_000);
  assert.equal(cleared.mock.callCount(), 1);
});

/** Rejects the raced promise after its deadline and checks nothing surfaces as unhandled. */
async function assertLateRejectionHandled(t: TestContext, reject: (err: Error) => void): Promise<void> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  t.after(() => process.off("unhandledRejection", onUnhandled));
  reject(new Error("too late"));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(unhandled, []);
}

test("a promise that rejects after the deadline is handled, never unhandled", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let reject: (err: Error) => void = () => {};
  const late = new Promise<never>((_, rej) => (reject = rej));
  const raced = raceDeadline(late, 10);
  t.mock.timers.tick(10);
  assert.equal(await raced, TIMED_OUT);
  await assertLateRejectionHandled(t, reject);
});

test("withDeadline settles as the promise does when it comes first, and clears its timer", async (t) => {
  const cleared = mock.method(globalThis, "clearTimeout");
  t.after(() => cleared.mock.restore());
  const late = () => new Error("late");
  assert.equal(await withDeadline(Promise.resolve(7), 60_000, late), 7);
  const failure = new Error("boom");
  await assert.rejects(withDeadline(Promise.reject(failure), 60_000, late), failure);
  assert.equal(cleared.mock.callCount(), 2);
});

test("withDeadline rejects with onTimeout's error when the deadline comes first; a later rejection is handled", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let reject: (err: Error) => void = () => {};
  const slow = new Promise<never>((_, rej) => (reject = rej));
  const timedOut = new Error("no answer in 10 ms");
  let made = 0;
  const bounded = withDeadline(slow, 10, () => (made++, timedOut));
  t.mock.timers.tick(9);
  assert.equal(made, 0);
  t.mock.timers.tick(1);
  await assert.rejects(bounded, timedOut);
  assert.equal(made, 1);
  await assertLateRejectionHandled(t, reject);
});
