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

test("IdTable: an entry kept in fields and entries in the dictionaries behave alike", () => {
  const t = new IdTable<string>();
  t.set(7, "first"); // kept in fields
  t.set(8, "second"); // in the number dictionary
  t.set("7", "string seven");
  assert.equal(t.delete(7), true, "the field entry is removed");
  assert.equal(t.get(7), undefined);
  assert.equal(t.has("7"), true, "a string id never matches the number in the fields");
  t.set(8, "second again"); // still in the dictionary while the fields are free
  assert.equal(t.size, 2, "a dictionary entry set again is not counted twice");
  t.set(9, "third"); // the free fields take it
  assert.equal(t.get(8), "second again");
  assert.equal(t.get(9), "third");
  assert.equal(t.size, 3);
  assert.deepEqual(t.values().sort(), ["second again", "string seven", "third"]);
  assert.equal(t.delete(8), true);
  assert.equal(t.delete(8), false);
  assert.equal(t.delete(10), false, "an id never set");
  t.set(9, "third replaced");
  assert.equal(t.size, 2);
  assert.deepEqual(t.values().sort(), ["string seven", "third replaced"]);
});
