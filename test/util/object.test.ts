/** isPlainObject: the one object guard every layer shares. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { isPlainObject } from "../../src/util/object.ts";

test("isPlainObject accepts JSON objects and refuses null, arrays and primitives", () => {
  const values: unknown[] = [{}, { a: 1 }, JSON.parse('{"__proto__":{"x":1}}'), Object.create(null), null, [], [1], "x", 1, true, undefined];
  assert.deepEqual(
    values.map((v) => isPlainObject(v)),
    [true, true, true, true, false, false, false, false, false, false, false],
  );
});
