import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RateLimiter, type RateLimitResult } from "../../src/security/rate-limit.ts";

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms), set: (ms: number) => void (now = ms) };
}

function takeMany(limiter: RateLimiter, key: string, n: number): number {
  let ok = 0;
  for (let i = 0; i < n; i++) if (limiter.take(key).ok) ok++;
  return ok;
}

function refusal(result: RateLimitResult): { retryAfterMs: number; message: string } {
  assert.equal(result.ok, false);
  if (result.ok) throw new Error("unreachable");
  return result;
}

describe("RateLimiter", () => {
  test("defaults: 100 calls at once, then one every 600 ms", () => {
    const c = clock();
    const limiter = new RateLimiter({ now: c.now });
    assert.equal(takeMany(limiter, "fs", 100), 100);
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 600);
    c.advance(599);
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 1);
    c.advance(1);
    assert.deepEqual(limiter.take("fs"), { ok: true });
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 600);
  });

  test("the refusal names the server and what to do", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 1, now: c.now });
    assert.ok(limiter.take("github").ok);
    const { message, retryAfterMs } = refusal(limiter.take("github"));
    assert.equal(retryAfterMs, 60_000);
    assert.match(message, /^server "github": rate limit of 1 calls per minute reached; retry in 60000 ms/);
  });

  test("keys have separate buckets", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 2, now: c.now });
    assert.equal(takeMany(limiter, "a", 5), 2);
    assert.equal(takeMany(limiter, "b", 5), 2);
  });

  test("burst sets the capacity independently of the rate", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 60, burst: 5, now: c.now });
    assert.equal(takeMany(limiter, "fs", 10), 5);
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 1000);
    c.advance(3000);
    assert.equal(takeMany(limiter, "fs", 10), 3);
  });

  test("a long quiet spell refills only up to the capacity", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 10, now: c.now });
    assert.equal(takeMany(limiter, "fs", 10), 10);
    c.advance(60 * 60_000);
    assert.equal(takeMany(limiter, "fs", 50), 10);
  });

  test("refill accumulates exactly across many small steps", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 100, now: c.now });
    takeMany(limiter, "fs", 100);
    for (let i = 0; i < 6; i++) {
      c.advance(100);
      assert.equal(limiter.take("fs").ok, i === 5, `step ${i}`);
    }
  });

  test("a clock stepping backwards neither refills nor breaks the bucket", () => {
    const c = clock(10_000_000);
    const limiter = new RateLimiter({ callsPerMinute: 60, now: c.now });
    assert.equal(takeMany(limiter, "fs", 60), 60);
    c.set(5_000_000);
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 1000);
    c.advance(1000);
    assert.ok(limiter.take("fs").ok);
  });

  test("delete forgets a key", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 1, now: c.now });
    assert.ok(limiter.take("fs").ok);
    assert.equal(limiter.take("fs").ok, false);
    limiter.delete("fs");
    assert.ok(limiter.take("fs").ok);
  });

  test("fractional rates still refuse and recover", () => {
    const c = clock();
    const limiter = new RateLimiter({ callsPerMinute: 0.5, burst: 1, now: c.now });
    assert.ok(limiter.take("fs").ok);
    assert.equal(refusal(limiter.take("fs")).retryAfterMs, 120_000);
    c.advance(120_000);
    assert.ok(limiter.take("fs").ok);
  });

  test("invalid options are refused", () => {
    assert.throws(() => new RateLimiter({ callsPerMinute: 0 }), RangeError);
    assert.throws(() => new RateLimiter({ callsPerMinute: -1 }), RangeError);
    assert.throws(() => new RateLimiter({ callsPerMinute: Number.NaN }), RangeError);
    assert.throws(() => new RateLimiter({ callsPerMinute: Number.POSITIVE_INFINITY }), RangeError);
    assert.throws(() => new RateLimiter({ burst: 0.5 }), RangeError);
  });
});
