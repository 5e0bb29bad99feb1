// Bounded validation work on untrusted schemas: remembered results of shared nodes, the step
// budget, and the "could not validate" result it ends in. No timing is asserted: a case that
// took exponential time before now finishes, and the outcomes say why.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSchema, DEFAULT_MAX_STEPS, formatSchemaErrors, validateSchema } from "../../src/schema/validate.ts";
import { refChain } from "../../scripts/bench/schema-corpus.ts";
import { bad, ok } from "./validate-helpers.ts";

/** The same chain as refChain, but every level written out: no shared node to remember. */
function inlineChain(depth: number, leaf: unknown): unknown {
  let s = leaf;
  for (let i = 0; i < depth; i++) s = { anyOf: [s, structuredClone(s)] };
  return s;
}

describe("shared definitions", () => {
  it("a 22-deep chain of anyOf over shared $defs (1.3 KB) decides both ways", () => {
    const chain = refChain(22, { type: "integer" });
    assert.ok(JSON.stringify(chain).length < 1500);
    ok(chain, 5);
    const r = bad(chain, "x", "type");
    assert.equal(r.undecided, false);
    // Deeper chains too, and the other combinators.
    ok(refChain(100, { type: "integer" }), 5);
    bad(refChain(100, { type: "integer" }), "x");
    ok(refChain(40, { type: "integer" }, "allOf"), 5);
    bad(refChain(40, { type: "integer" }, "oneOf"), 5, "oneOf"); // two equal branches: never exactly one
  });

  it("remembering results does not change them", () => {
    const leaf = { anyOf: [{ type: "integer", minimum: 3 }, { type: "string", pattern: "^a" }] };
    const shared = compileSchema(refChain(6, leaf));
    const inline = compileSchema(inlineChain(6, leaf));
    for (const v of [5, 1, "abc", "bcd", null, [5], { a: 1 }]) {
      const a = shared(v);
      const b = inline(v);
      assert.deepEqual([a.valid, a.undecided], [b.valid, b.undecided], JSON.stringify(v));
    }
  });

  it("remembers per value, also inside objects reached twice", () => {
    // Both branches of each level descend into the same property: 2^30 paths, 30 nodes.
    const defs: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) {
      const next = { properties: { a: { $ref: `#/$defs/d${i + 1}` } } };
      defs[`d${i}`] = { anyOf: [next, { ...next, required: ["a"] }] };
    }
    defs.d30 = { type: "integer" };
    let value: unknown = 7;
    for (let i = 0; i < 30; i++) value = { a: value };
    const check = compileSchema({ $defs: defs, $ref: "#/$defs/d0" });
    assert.equal(check(value).valid, true);
    let wrong: unknown = "x";
    for (let i = 0; i < 30; i++) wrong = { a: wrong };
    const r = check(wrong);
    assert.deepEqual([r.valid, r.undecided], [false, false]);
  });

  it("forgets what it remembered between validations", () => {
    const check = compileSchema(refChain(3, { type: "object", required: ["a"] }));
    const value: Record<string, unknown> = {};
    assert.equal(check(value).valid, false);
    value.a = 1; // the same object, now valid: nothing of the last call may stick
    assert.equal(check(value).valid, true);
  });
});

describe("the step budget", () => {
  it("ends in 'could not validate', which is not 'invalid'", () => {
    // Long strings are not remembered, so this chain really takes 2^22 paths: it runs out.
    const r = validateSchema(refChain(22, { type: "integer" }), "s".repeat(5000));
    assert.deepEqual([r.valid, r.undecided, r.errors.length], [false, true, 1]);
    assert.equal(r.errors[0].keyword, "budget");
    assert.match(r.errors[0].message, new RegExp(`^could not validate: the validation budget of ${DEFAULT_MAX_STEPS} steps ran out`));
    assert.match(r.errors[0].schemaPath, /^#\/\$defs\/d\d+/);
    assert.match(formatSchemaErrors(r.errors), /^\(root\): could not validate/);
  });

  it("is set per validator with maxSteps", () => {
    const schema = { type: "array", items: { type: "integer" } };
    const value = Array.from({ length: 1000 }, (_, i) => i);
    assert.equal(compileSchema(schema, { maxSteps: 100 })(value).undecided, true);
    assert.equal(compileSchema(schema, { maxSteps: 100_000 })(value).valid, true);
    // Nonsense falls back to the default.
    for (const maxSteps of [0, -1, Number.NaN]) assert.equal(compileSchema(schema, { maxSteps })(value).valid, true);
  });

  it("pays for keywords that multiply work, not only for nodes", () => {
    const names = Array.from({ length: 20_000 }, (_, i) => `p${i}`);
    const wide = Object.fromEntries(names.map((n) => [n, 1]));
    const schema = { items: { required: names } };
    const value = Array.from({ length: 2000 }, () => wide);
    assert.equal(validateSchema(schema, value).undecided, true);
    assert.equal(validateSchema(schema, value, { maxSteps: 1e9 }).valid, true);
    // Object.keys of big objects, uniqueItems, comparison keys, code point counts are paid too;
    // a const is decided early: a value whose key outgrows the constant's cannot equal it.
    const big = [
      [{ items: { minProperties: 1 } }, Array.from({ length: 200 }, () => wide)],
      [{ uniqueItems: true }, Array.from({ length: 50_000 }, (_, i) => ({ i, t: [i] }))],
      [{ const: [1] }, Array.from({ length: 100_000 }, (_, i) => i)],
      [{ items: { maxLength: 100_000 } }, Array.from({ length: 100 }, () => "😀".repeat(100_000))],
    ] as const;
    for (const [s, v] of big) {
      assert.equal(validateSchema(s, v, { maxSteps: 10_000 }).undecided, !("const" in s), JSON.stringify(s));
      assert.equal(validateSchema(s, v, { maxSteps: 1e9 }).undecided, false, JSON.stringify(s));
    }
  });

  it("a value found invalid keeps its verdict when listing the errors runs out", () => {
    // The first pass stops at the first error; listing all of them costs more than is left.
    const schema = { items: { type: "number", multipleOf: 1e-300 } };
    const value = ["first", ...Array.from({ length: 20_000 }, (_, i) => (i + 1) * 1.5e-200), "last"];
    const r = validateSchema(schema, value, { maxSteps: 40_000 });
    assert.deepEqual([r.valid, r.undecided, r.errors.length], [false, false, 2]);
    assert.deepEqual(r.errors[0], { instancePath: "/0", schemaPath: "#/items/type", keyword: "type", message: "must be number" });
    const last = r.errors[r.errors.length - 1];
    assert.equal(last.keyword, "budget");
    assert.match(last.message, /^further errors were not looked for/);
  });

  it("stops at what it meets first: a broken keyword (invalid) or the end of its budget", () => {
    const { $defs } = refChain(22, { type: "integer" });
    const chain = { $ref: "#/$defs/d0" };
    const late = validateSchema({ $defs, allOf: [chain, { minimum: "x" }] }, "s".repeat(5000));
    assert.deepEqual([late.valid, late.undecided], [false, true]);
    const early = validateSchema({ $defs, allOf: [{ minimum: "x" }, chain] }, "s".repeat(5000));
    assert.deepEqual([early.valid, early.undecided], [false, false]);
    assert.match(early.errors[0].message, /^invalid schema/);
  });
});

describe("uniqueItems of many numbers", () => {
  // Past a few hundred items, numbers are checked by sorting a copy first; a duplicate still
  // gets the exact pair the one-pass check reports.
  const many = Array.from({ length: 5000 }, (_, i) => i * 1.5 - 2000);

  it("all distinct: valid; a duplicate anywhere: the first pair by the later index", () => {
    ok({ uniqueItems: true }, many);
    assert.match(bad({ uniqueItems: true }, [...many, many[4321]], "uniqueItems").errors[0].message, /\(4321 and 5000 are equal\)/);
    const twice = [...many];
    twice[10] = twice[3000];
    twice[4000] = twice[20];
    assert.match(bad({ uniqueItems: true }, twice).errors[0].message, /\(10 and 3000 are equal\)/);
  });

  it("-0 and 0 are equal; a mixed array and a NaN (from JavaScript, not JSON) take the one-pass check", () => {
    assert.match(bad({ uniqueItems: true }, [...many, -0, 0]).errors[0].message, /\(5000 and 5001 are equal\)/);
    ok({ uniqueItems: true }, [...many, "0.25", 0.25]);
    bad({ uniqueItems: true }, [...many, "a", "a"], "uniqueItems");
    assert.match(bad({ uniqueItems: true }, [...many, NaN, NaN]).errors[0].message, /\(5000 and 5001 are equal\)/);
  });
});

describe("long strings", () => {
  // V8 hashes strings longer than 16383 units by their length alone; these must stay fast
  // and, above all, right.
  const long = Array.from({ length: 300 }, (_, i) => "x".repeat(20_000) + String(i).padStart(4, "0"));

  it("uniqueItems compares them by sorting", () => {
    ok({ uniqueItems: true }, long);
    const r = bad({ uniqueItems: true }, [...long, long[7]], "uniqueItems");
    assert.match(r.errors[0].message, /\(7 and 300 are equal\)/);
    // Short and long duplicates: the first pair by the later index is reported.
    const mixed = ["a", long[0], "b", long[0], "a"];
    assert.match(bad({ uniqueItems: true }, mixed).errors[0].message, /\(1 and 3 are equal\)/);
    // Objects with long comparison keys go the same way.
    const objects = long.slice(0, 20).map((s) => ({ s }));
    ok({ uniqueItems: true }, objects);
    assert.match(bad({ uniqueItems: true }, [...objects, { s: long[3] }]).errors[0].message, /\(3 and 20 are equal\)/);
  });

  it("enum and const find them", () => {
    ok({ enum: long }, long[299]);
    bad({ enum: long }, "x".repeat(20_000) + "9999", "enum");
    ok({ const: long[5] }, long[5]);
    ok({ enum: [{ k: long[1] }] }, { k: long[1] });
    bad({ enum: [{ k: long[1] }] }, { k: long[2] }, "enum");
  });
});
