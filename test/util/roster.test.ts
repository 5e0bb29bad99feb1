/** Roster: the live-object list that sessions and per-POST transports join and leave. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Roster } from "../../src/util/roster.ts";

test("members join and leave in any order; leaving twice changes nothing; toArray is a copy", () => {
  const roster = new Roster<string>();
  const leaveA = roster.add("a");
  const leaveB = roster.add("b");
  const leaveC = roster.add("c");
  assert.equal(roster.size, 3);
  assert.deepEqual(roster.toArray().sort(), ["a", "b", "c"]);
  leaveB();
  leaveB();
  assert.equal(roster.size, 2);
  assert.deepEqual(roster.toArray().sort(), ["a", "c"]);
  const copy = roster.toArray();
  leaveC();
  assert.deepEqual(copy.sort(), ["a", "c"], "a copy taken before a member left keeps it");
  assert.deepEqual(roster.toArray(), ["a"]);
  leaveA();
  assert.equal(roster.size, 0);
  assert.deepEqual(roster.toArray(), []);
  roster.add("d");
  assert.deepEqual(roster.toArray(), ["d"]);
});

test("the same value may join twice, and each leave takes off its own entry", () => {
  const roster = new Roster<object>();
  const item = {};
  const first = roster.add(item);
  roster.add(item);
  first();
  assert.equal(roster.size, 1);
  assert.deepEqual(roster.toArray(), [item]);
});

test("a member can leave while the roster is walked through a copy (as close() does)", () => {
  const roster = new Roster<number>();
  const leaves = new Map<number, () => void>();
  for (let i = 0; i < 5; i++) leaves.set(i, roster.add(i));
  for (const n of roster.toArray()) leaves.get(n)!();
  assert.equal(roster.size, 0);
});
