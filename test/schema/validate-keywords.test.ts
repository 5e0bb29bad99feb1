// Keyword semantics: type, object/array/number/string keywords, enum/const, combinators, boolean schemas.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSchema, formatSchemaErrors } from "../../src/schema/validate.ts";
import { bad, ok, where } from "./validate-helpers.ts";

describe("type", () => {
  it("checks single and array types, and tells integer from number", () => {
    ok({ type: "string" }, "a");
    bad({ type: "string" }, 1, "type");
    for (const v of [1, 1.0, -5, 0, 1e20]) ok({ type: "integer" }, v);
    for (const v of [1.5, -0.1, "1", NaN, Infinity]) bad({ type: "integer" }, v, "type");
    ok({ type: "number" }, 1.5);
    ok({ type: "number" }, 2);
    bad({ type: "number" }, NaN, "type");
    bad({ type: "object" }, [], "type");
    bad({ type: "array" }, {}, "type");
    bad({ type: "object" }, null, "type");
    ok({ type: "null" }, null);
    ok({ type: "boolean" }, false);
    ok({ type: ["string", "null"] }, null);
    const r = bad({ type: ["string", "null"] }, 1);
    assert.equal(r.errors[0].message, "must be string or null");
    assert.equal(r.errors[0].schemaPath, "#/type");
  });
});

describe("object keywords", () => {
  it("properties and required report paths of the offending property", () => {
    const schema = { type: "object", properties: { a: { type: "integer" } }, required: ["b"] };
    const r = bad(schema, { a: 1.5 });
    assert.deepEqual(where(r), ["/a type", "/b required"]);
    assert.equal(formatSchemaErrors(r.errors), "/a: must be integer; /b: required property missing");
    ok(schema, { a: 2, b: null });
  });

  it("required and properties look at own properties only", () => {
    bad({ required: ["toString"] }, {}, "required");
    bad({ required: ["constructor"] }, {}, "required");
    const proto = JSON.parse('{"__proto__": 5}') as unknown;
    bad(JSON.parse('{"properties": {"__proto__": {"type": "string"}}}'), proto, "type");
    bad({ additionalProperties: false }, proto, "additionalProperties");
  });

  it("additionalProperties as boolean and as schema, with patternProperties", () => {
    const closed = { properties: { a: {} }, additionalProperties: false };
    ok(closed, { a: 1 });
    const r = bad(closed, { a: 1, b: 2, "c/d": 3 });
    assert.deepEqual(where(r), ["/b additionalProperties", "/c~1d additionalProperties"]);
    const typed = bad({ additionalProperties: { type: "number" } }, { a: 1, b: "x" });
    assert.deepEqual(where(typed), ["/b type"]);
    assert.equal(typed.errors[0].schemaPath, "#/additionalProperties/type");
    const pat = { patternProperties: { "^x-": { type: "string" } }, additionalProperties: false };
    ok(pat, { "x-a": "s" });
    assert.deepEqual(where(bad(pat, { "x-a": 1 })), ["/x-a type"]);
    assert.deepEqual(where(bad(pat, { y: 1 })), ["/y additionalProperties"]);
    ok({ additionalProperties: false }, "not an object");
  });

  it("minProperties, maxProperties, propertyNames, dependentRequired, dependentSchemas", () => {
    ok({ minProperties: 1, maxProperties: 2 }, { a: 1 });
    bad({ minProperties: 1 }, {}, "minProperties");
    bad({ maxProperties: 1 }, { a: 1, b: 2 }, "maxProperties");
    ok({ propertyNames: { maxLength: 3 } }, { abc: 1 });
    assert.deepEqual(where(bad({ propertyNames: { maxLength: 3 } }, { abcd: 1 })), ["/abcd propertyNames"]);
    const dr = { dependentRequired: { card: ["billing"] } };
    ok(dr, { name: 1 });
    ok(dr, { card: 1, billing: 2 });
    assert.deepEqual(where(bad(dr, { card: 1 })), ["/billing dependentRequired"]);
    const ds = { dependentSchemas: { card: { required: ["billing"] } } };
    ok(ds, {});
    bad(ds, { card: 1 }, "required");
  });
});

describe("array keywords", () => {
  it("items, prefixItems and items: false", () => {
    assert.deepEqual(where(bad({ items: { type: "number" } }, [1, "x"])), ["/1 type"]);
    const tuple = { prefixItems: [{ type: "string" }, { type: "number" }], items: false };
    ok(tuple, ["a", 1]);
    ok(tuple, ["a"]);
    const r = bad(tuple, ["a", 1, 2], "items");
    assert.equal(r.errors[0].message, "must have at most 2 items");
    assert.deepEqual(where(bad(tuple, [1])), ["/0 type"]);
    ok({ prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, 2]);
    bad({ prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, "b"], "type");
  });

  it("minItems, maxItems, contains with minContains and maxContains", () => {
    ok({ minItems: 1, maxItems: 2 }, [1]);
    bad({ minItems: 1 }, [], "minItems");
    bad({ maxItems: 1 }, [1, 2], "maxItems");
    ok({ contains: { type: "string" } }, [1, "a"]);
    bad({ contains: { type: "string" } }, [1, 2], "contains");
    bad({ contains: { type: "string" } }, [], "contains");
    ok({ contains: { type: "string" }, minContains: 2, maxContains: 2 }, ["a", 1, "b"]);
    bad({ contains: { type: "string" }, minContains: 2 }, ["a", 1], "contains");
    bad({ contains: { type: "string" }, maxContains: 1 }, ["a", "b"], "maxContains");
    ok({ contains: { type: "string" }, minContains: 0 }, [1]);
  });

  it("uniqueItems compares deeply, ignoring object key order", () => {
    const u = { uniqueItems: true };
    const r = bad(u, [{ a: 1, b: 2 }, { b: 2, a: 1 }], "uniqueItems");
    assert.match(r.errors[0].message, /\(0 and 1 are equal\)/);
    bad(u, [[1, { x: [null] }], [1, { x: [null] }]], "uniqueItems");
    bad(u, [1, 1.0], "uniqueItems");
    ok(u, [1, "1", true, null, [1], { a: 1 }, { a: "1" }]);
    ok(u, [{ a: 1 }, { a: 2 }]);
    ok({ uniqueItems: false }, [1, 1]);
  });
});

describe("enum and const", () => {
  it("compare deeply", () => {
    const e = { enum: ["a", 1, null, { x: [1, 2] }] };
    ok(e, { x: [1, 2] });
    ok(e, 1.0);
    ok(e, null);
    bad(e, { x: [2, 1] }, "enum");
    bad(e, "b", "enum");
    bad(e, "1", "enum");
    const c = { const: { a: 1, b: { c: [true] } } };
    ok(c, { b: { c: [true] }, a: 1 });
    bad(c, { a: 1, b: { c: [false] } }, "const");
    bad(c, { a: 1, b: { c: [true] }, d: 1 }, "const");
    bad({ const: false }, 0, "const");
    ok({ const: null }, null);
  });
});

describe("numbers", () => {
  it("bounds and exclusive bounds", () => {
    ok({ minimum: 5, maximum: 10 }, 5);
    ok({ minimum: 5, maximum: 10 }, 10);
    bad({ minimum: 5 }, 4.9, "minimum");
    bad({ maximum: 10 }, 10.1, "maximum");
    bad({ exclusiveMinimum: 5 }, 5, "exclusiveMinimum");
    ok({ exclusiveMinimum: 5 }, 5.01);
    bad({ exclusiveMaximum: 10 }, 10, "exclusiveMaximum");
    ok({ minimum: 5 }, "not a number");
  });

  it("multipleOf is float-safe", () => {
    ok({ multipleOf: 0.1 }, 0.3);
    ok({ multipleOf: 0.01 }, 7);
    ok({ multipleOf: 0.0001 }, 0.0075);
    ok({ multipleOf: 1.5 }, 4.5);
    ok({ multipleOf: 1e-8 }, 1e-7);
    bad({ multipleOf: 0.1 }, 0.35, "multipleOf");
    bad({ multipleOf: 2 }, 7, "multipleOf");
    bad({ type: "integer", multipleOf: 0.123456789 }, 1e308, "multipleOf");
    bad({ multipleOf: 0 }, 1, "multipleOf");
  });

  it("multipleOf is exact at extreme ratios: decimal arithmetic, never a float-division artefact", () => {
    ok({ multipleOf: 5e-324 }, 1);
    ok({ multipleOf: 1e-308 }, 1e308);
    ok({ multipleOf: 1e-300 }, 4.5e-200);
    ok({ multipleOf: 0.1 }, 0.3);
    ok({ multipleOf: 0.1 }, -0.6);
    ok({ multipleOf: 0.01 }, 3.25);
    ok({ multipleOf: 1e20 }, 1e21);
    ok({ multipleOf: 1e-301 }, 1.1e-300);
    ok({ multipleOf: 0.5 }, -0);
    // 1e17 / 3 is 33333333333333332 in floating point (an integer), but 3 does not divide 10^17.
    bad({ multipleOf: 3 }, 1e17, "multipleOf");
    bad({ multipleOf: 0.1 }, 0.30000000000000004, "multipleOf");
    bad({ multipleOf: 1e-323 }, 5e-324, "multipleOf");
    bad({ multipleOf: 0.123456789 }, 1e308, "multipleOf");
    bad({ multipleOf: 7 }, 1.5, "multipleOf");
    bad({ multipleOf: 0.25 }, 0.3, "multipleOf");
  });
});

describe("strings", () => {
  it("minLength and maxLength count code points", () => {
    ok({ maxLength: 2 }, "😀😀");
    bad({ maxLength: 1 }, "😀😀", "maxLength");
    ok({ minLength: 2 }, "😀😀");
    bad({ minLength: 3 }, "😀😀", "minLength");
    ok({ minLength: 2, maxLength: 2 }, "e\u0301");
    ok({ maxLength: 1 }, "\ud800");
    ok({ minLength: 3, maxLength: 3 }, "a😀b");
    ok({ maxLength: 0 }, "");
  });

  it("pattern is unanchored and uses the u flag; a bad pattern is a schema problem", () => {
    ok({ pattern: "b" }, "abc");
    bad({ pattern: "^b" }, "abc", "pattern");
    ok({ pattern: "^\\p{Lu}" }, "Été");
    bad({ pattern: "^\\p{Lu}" }, "été", "pattern");
    ok({ pattern: "^.$" }, "😀");
    ok({ pattern: "^b" }, 12);
    const r = bad({ pattern: "(" }, "x", "pattern");
    assert.match(r.errors[0].message, /^invalid schema: /);
    bad({ patternProperties: { "[": {} } }, {}, "patternProperties");
  });
});

describe("combinators", () => {
  it("anyOf reports its own error then each branch's", () => {
    const s = { anyOf: [{ type: "string" }, { type: "number" }] };
    ok(s, "a");
    ok(s, 1);
    const r = bad(s, null);
    assert.deepEqual(where(r), [" anyOf", " type", " type"]);
    assert.deepEqual(r.errors.map((e) => e.schemaPath), ["#/anyOf", "#/anyOf/0/type", "#/anyOf/1/type"]);
  });

  it("oneOf needs exactly one match", () => {
    const s = { oneOf: [{ type: "number" }, { type: "integer" }] };
    ok(s, 1.5);
    assert.match(bad(s, 1, "oneOf").errors[0].message, /matches 0 and 1/);
    bad(s, "x", "oneOf");
  });

  it("allOf, not, if/then/else", () => {
    const all = { allOf: [{ minimum: 1 }, { maximum: 3 }] };
    ok(all, 2);
    bad(all, 4, "maximum");
    ok({ not: { type: "string" } }, 1);
    bad({ not: { type: "string" } }, "a", "not");
    const cond = {
      if: { properties: { kind: { const: "a" } } },
      then: { required: ["x"] },
      else: { required: ["y"] },
    };
    ok(cond, { kind: "a", x: 1 });
    ok(cond, { kind: "b", y: 1 });
    assert.deepEqual(where(bad(cond, { kind: "a", y: 1 })), ["/x required"]);
    assert.deepEqual(where(bad(cond, { kind: "b", x: 1 })), ["/y required"]);
    ok({ if: { type: "string" } }, 1);
    ok({ then: false }, 1);
  });
});

describe("boolean schemas", () => {
  it("true accepts anything and false nothing, at the root and nested", () => {
    for (const v of [null, 0, "", [], {}, [{ a: 1 }]]) {
      ok(true, v);
      bad(false, v, "false");
    }
    ok({ properties: { a: true } }, { a: 1 });
    assert.deepEqual(where(bad({ properties: { a: false } }, { a: 1 })), ["/a false"]);
    ok({ properties: { a: false } }, { b: 1 });
  });
});

it("patterns that only compile without the u flag (identity escapes) still validate", () => {
  const v = compileSchema({ type: "string", pattern: "^\\d{3}\\-\\d{4}$" });
  assert.equal(v("555-1234").valid, true);
  assert.equal(v("5551234").valid, false);
});
