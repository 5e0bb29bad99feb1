/** Restart delays: exponential, capped, jitter only shortens, growth stays visible. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { backoffDelay, checkBackoff, DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS } from "../../src/manager/backoff.ts";

test("defaults: 1 s doubling to a 30 s cap", () => {
  assert.equal(DEFAULT_BACKOFF_BASE_MS, 1000);
  assert.equal(DEFAULT_BACKOFF_CAP_MS, 30_000);
  const delays = [1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelay(n, { jitter: 0 }));
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
});

test("jitter takes at most its share off, never adds", () => {
  assert.equal(backoffDelay(3, { random: () => 0 }), 4000);
  assert.equal(backoffDelay(3, { random: () => 0.999999 }), 3000);
  assert.equal(backoffDelay(3, { jitter: 0.5, random: () => 1 }), 2000);
  for (let i = 0; i < 200; i++) {
    const d = backoffDelay(2, { baseMs: 100 });
    assert.ok(d >= 150 && d <= 200, `delay ${d}`);
  }
});

test("with default jitter each delay is longer than the one before, until the cap", () => {
  for (let trial = 0; trial < 100; trial++) {
    const delays = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, { baseMs: 10, capMs: 10_000 }));
    for (let i = 1; i < delays.length; i++) assert.ok(delays[i]! > delays[i - 1]!, delays.join(","));
  }
});

test("small values for tests; nonsense is refused", () => {
  assert.equal(backoffDelay(1, { baseMs: 5, capMs: 20, jitter: 0 }), 5);
  assert.equal(backoffDelay(4, { baseMs: 5, capMs: 20, jitter: 0 }), 20);
  assert.equal(backoffDelay(0, { baseMs: 5, jitter: 0 }), 5, "attempt numbers start at 1");
  assert.throws(() => checkBackoff({ baseMs: -1 }), RangeError);
  assert.throws(() => checkBackoff({ baseMs: 100, capMs: 10 }), RangeError);
  assert.throws(() => checkBackoff({ jitter: 1 }), RangeError);
  assert.deepEqual(checkBackoff({ baseMs: 50_000 }), { baseMs: 50_000, capMs: 50_000, jitter: 0.25 });
});
