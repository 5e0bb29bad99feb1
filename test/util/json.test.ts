/** safeJson and sameJson: values that do not serialise never throw and never compare equal. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { safeJson, sameJson } from "../../src/util/json.ts";

test("safeJson serialises plain values and gives \"\" for what JSON cannot hold", () => {
  assert.equal(safeJson({ a: [1, "x", null] }), '{"a":[1,"x",null]}');
  assert.equal(safeJson("text"), '"text"');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(safeJson(cyclic), "");
  assert.equal(safeJson({ n: 1n }), "");
  assert.equal(safeJson(undefined), "");
  assert.equal(safeJson(() => 1), "");
});

test("sameJson compares serialised text, and an unserialisable value equals nothing", () => {
  assert.equal(sameJson({ name: "echo", inputSchema: { type: "object" } }, { name: "echo", inputSchema: { type: "object" } }), true);
  assert.equal(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 }), false, "key order counts");
  assert.equal(sameJson([1], [2]), false);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(sameJson(cyclic, cyclic), false);
  assert.equal(sameJson(undefined, undefined), false);
});
