import { test } from "node:test";
import assert from "node:assert/strict";
import { IdTable } from "../../src/jsonrpc/message.ts";

test("IdTable keeps number and string ids apart and counts what it holds", () => {
  const t = new IdTable<string>();
  t.set(1, "number one");
  t.set("1", "string one");
  t.set(0, "zero");
  assert.equal(t.size, 3);
  assert.equal(t.get(1), "number one");
  assert.equal(t.get("1"), "string one");
  assert.equal(t.get(0), "zero", "id 0 is an id like any other");
  assert.equal(t.get(2), undefined);
  t.set(1, "replaced");
  assert.equal(t.size, 3, "setting an existing id does not count twice");
  assert.equal(t.delete("1"), true);
  assert.equal(t.delete("1"), false);
  assert.equal(t.has(1), true);
  assert.equal(t.has("1"), false);
  assert.deepEqual(t.values().sort(), ["replaced", "zero"]);
  t.clear();
  assert.equal(t.size, 0);
  assert.deepEqual(t.values(), []);
});

test("IdTable takes ids that are names of Object.prototype members as plain keys", () => {
  const t = new IdTable<number>();
  for (const [i, id] of ["__proto__", "constructor", "toString", "hasOwnProperty"].entries()) t.set(id, i);
  assert.equal(t.size, 4);
  assert.equal(t.get("__proto__"), 0);
  assert.equal(t.get("constructor"), 1);
  assert.equal(new IdTable<number>().get("toString"), undefined, "nothing inherited");
  assert.equal(t.delete("__proto__"), true);
  assert.equal(t.get("__proto__"), undefined);
  assert.equal(t.size, 3);
});

test("IdTable stays correct through many adds and removes (in-flight churn)", () => {
  const t = new IdTable<number>();
  const live = new Set<number>();
  for (let i = 0; i < 20_000; i++) {
    t.set(i, i);
    live.add(i);
    if (i >= 64) {
      t.delete(i - 64);
      live.delete(i - 64);
    }
  }
  assert.equal(t.size, 64);
  assert.deepEqual(t.values().sort((a, b) => a - b), [...live]);
});
