/** isPlainObject, the one object guard every layer shares, and copyFields, the spread without its Node 20 cost. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { copyFields, isPlainObject } from "../../src/util/object.ts";

test("isPlainObject accepts JSON objects and refuses null, arrays and primitives", () => {
  const values: unknown[] = [{}, { a: 1 }, JSON.parse('{"__proto__":{"x":1}}'), Object.create(null), null, [], [1], "x", 1, true, undefined];
  assert.deepEqual(
    values.map((v) => isPlainObject(v)),
    [true, true, true, true, false, false, false, false, false, false, false],
  );
});

test("copyFields copies own enumerable fields over the target's, as spread would, and returns the target", () => {
  const target: Record<string, unknown> = { a: 1, b: 2 };
  const source = Object.create({ inherited: true }) as Record<string, unknown>;
  source.b = 3;
  source.c = { deep: true };
  Object.defineProperty(source, "hidden", { value: 4, enumerable: false });
  const out = copyFields(target, source);
  assert.equal(out, target);
  assert.deepEqual(out, { a: 1, b: 3, c: { deep: true } });
  assert.equal(out.c, source.c, "a shallow copy");
  assert.deepEqual(out, { ...{ a: 1, b: 2 }, ...source });
});

test("copyFields defines a __proto__ key from parsed JSON as data: the copy's prototype stays Object.prototype", () => {
  const hostile = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
  const out = copyFields({} as Record<string, unknown>, hostile);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(out.polluted, undefined);
  assert.deepEqual(Object.keys(out), ["__proto__", "x"]);
  assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":true},"x":1}');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
