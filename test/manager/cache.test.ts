/** TtlCache: expiry, invalidation, single-flight loads, invalidation racing a load. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { TtlCache } from "../../src/manager/cache.ts";

function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test("entries expire after the TTL; peek still sees them", () => {
  const c = clock();
  const cache = new TtlCache<string, number>({ ttlMs: 100, now: c.now });
  cache.set("a", 1);
  assert.equal(cache.get("a"), 1);
  c.advance(99);
  assert.equal(cache.has("a"), true);
  c.advance(1);
  assert.equal(cache.get("a"), undefined);
  assert.equal(cache.peek("a"), 1);
  cache.invalidate("a");
  assert.equal(cache.peek("a"), undefined);
});

test("getOrLoad: fresh values skip the loader, concurrent loads share one call, failures store nothing", async () => {
  const c = clock();
  const cache = new TtlCache<string, string>({ ttlMs: 100, now: c.now });
  let calls = 0;
  const load = async () => `v${++calls}`;
  const [x, y] = await Promise.all([cache.getOrLoad("k", load), cache.getOrLoad("k", load)]);
  assert.deepEqual([x, y, calls], ["v1", "v1", 1]);
  assert.equal(await cache.getOrLoad("k", load), "v1");
  c.advance(100);
  assert.equal(await cache.getOrLoad("k", load), "v2");
  cache.invalidate("k");
  await assert.rejects(cache.getOrLoad("k", () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(cache.peek("k"), undefined);
  assert.throws(() => new TtlCache({ ttlMs: -1 }), RangeError);
});

test("a synchronous throw in the loader is a rejection, not a crash", async () => {
  const cache = new TtlCache<string, string>();
  await assert.rejects(
    cache.getOrLoad("k", () => {
      throw new Error("sync");
    }),
    /sync/,
  );
});

test("an invalidation during a load wins: the stale result is returned but not stored", async () => {
  const cache = new TtlCache<string, string>();
  let resolve!: (v: string) => void;
  const pending = cache.getOrLoad("k", () => new Promise<string>((r) => (resolve = r)));
  await Promise.resolve();
  cache.invalidate("k");
  resolve("old");
  assert.equal(await pending, "old");
  assert.equal(cache.peek("k"), undefined);
  assert.equal(await cache.getOrLoad("k", async () => "new"), "new");
  assert.equal(cache.get("k"), "new");
});

test("a server's ttlMs hint shortens an entry's lifetime, never lengthens it; 0 changes nothing", async () => {
  const c = clock();
  const cache = new TtlCache<string, number>({ ttlMs: 100, now: c.now });
  cache.set("short", 1, 10);
  cache.set("long", 2, 10_000);
  cache.set("zero", 3, 0);
  await cache.getOrLoad("loaded", async () => 4, () => 20);
  c.advance(10);
  assert.deepEqual(["short", "long", "zero", "loaded"].map((k) => cache.has(k)), [false, true, true, true]);
  c.advance(10);
  assert.deepEqual(["long", "zero", "loaded"].map((k) => cache.has(k)), [true, true, false]);
  c.advance(80);
  assert.deepEqual(["long", "zero"].map((k) => cache.has(k)), [false, false]);
});
