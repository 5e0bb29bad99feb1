import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  compileSchema,
  formatSchemaErrors,
  MAX_DEPTH,
  MAX_ERRORS,
  validateSchema,
  type ValidationResult,
} from "../../src/schema/validate.ts";

function ok(schema: unknown, value: unknown): ValidationResult {
  const r = validateSchema(schema, value);
  assert.equal(r.valid, true, `expected valid, got: ${formatSchemaErrors(r.errors)}`);
  assert.deepEqual(r.errors, []);
  return r;
}

function bad(schema: unknown, value: unknown, keyword?: string): ValidationResult {
  const r = validateSchema(schema, value);
  if (r.valid) assert.fail(`expected invalid: ${String(JSON.stringify(value)).slice(0, 200)}`);
  assert.ok(r.errors.length > 0);
  if (keyword !== undefined) {
    assert.ok(
      r.errors.some((e) => e.keyword === keyword),
      `expected a "${keyword}" error, got ${JSON.stringify(r.errors)}`,
    );
  }
  return r;
}

/** The error list as "instancePath keyword" strings, for exact comparisons. */
const where = (r: ValidationResult): string[] => r.errors.map((e) => `${e.instancePath} ${e.keyword}`);

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

describe("$ref", () => {
  it("resolves $defs, definitions and the root", () => {
    ok({ $defs: { n: { type: "number" } }, $ref: "#/$defs/n" }, 1);
    bad({ $defs: { n: { type: "number" } }, $ref: "#/$defs/n" }, "x", "type");
    const old = { definitions: { n: { type: "number" } }, properties: { a: { $ref: "#/definitions/n" } } };
    bad(old, { a: "x" }, "type");
    const tree = {
      type: "object",
      properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["name"],
    };
    ok(tree, { name: "r", children: [{ name: "a" }, { name: "b", children: [{ name: "c" }] }] });
    const r = bad(tree, { name: "r", children: [{ name: "a", children: [{ name: 1 }] }] });
    assert.deepEqual(where(r), ["/children/0/children/0/name type"]);
    assert.equal(r.errors[0].schemaPath, "#/properties/name/type");
  });

  it("decodes ~0, ~1 and percent-encoding, and follows anchors and the root $id", () => {
    const s = {
      $id: "https://example.com/tool.json",
      $defs: {
        "a/b": { type: "string" },
        "c~d": { type: "number" },
        "e%f": { type: "boolean" },
        named: { $anchor: "named", const: 1 },
        old: { $id: "#old", const: 2 },
      },
      prefixItems: [
        { $ref: "#/$defs/a~1b" },
        { $ref: "#/$defs/c~0d" },
        { $ref: "#/$defs/e%25f" },
        { $ref: "#named" },
        { $ref: "#old" },
        { $ref: "https://example.com/tool.json#/$defs/c~0d" },
        { $ref: "#/prefixItems/0" },
      ],
    };
    ok(s, ["x", 1, true, 1, 2, 3, "y"]);
    assert.deepEqual(where(bad(s, [1, "x", 1, 2, 1, "z", 0])), [
      "/0 type", "/1 type", "/2 type", "/3 const", "/4 const", "/5 type", "/6 type",
    ]);
    assert.equal(compileSchema(s)([]).unknownKeywords.length, 0);
  });

  it("cycles that consume no input terminate with an error", () => {
    for (const schema of [
      { $ref: "#" },
      { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" },
      { anyOf: [{ $ref: "#" }, { type: "string" }] },
      { not: { $ref: "#" } },
      { properties: { a: { $ref: "#/properties/a" } } },
    ]) {
      const r = validateSchema(schema, { a: "x" });
      assert.equal(r.valid, false, JSON.stringify(schema));
      assert.ok(r.errors.some((e) => e.message.includes("cycle")), JSON.stringify(r.errors));
    }
  });

  it("an unresolvable or remote $ref is an error where it is used, never a throw", () => {
    const missing = { properties: { a: { $ref: "#/$defs/missing" } } };
    ok(missing, {});
    const r = bad(missing, { a: 1 }, "$ref");
    assert.equal(r.errors[0].schemaPath, "#/properties/a/$ref");
    assert.match(bad({ $ref: "https://example.com/s.json" }, 1, "$ref").errors[0].message, /not fetched/);
    bad({ $ref: "other.json#/x" }, 1, "$ref");
    bad({ $ref: "#nowhere" }, 1, "$ref");
    bad({ $ref: "#/%zz" }, 1, "$ref");
    bad({ $ref: "#/items/5" }, 1, "$ref");
    bad({ $ref: 7 }, 1, "$ref");
    // A broken $ref fails the value even where a combinator would otherwise discard the failure.
    bad({ not: { $ref: "#/nope" } }, 1, "$ref");
    bad({ anyOf: [{ $ref: "#/nope" }, true] }, 1, "$ref");
  });

  it("cyclic schema objects built in JavaScript terminate", () => {
    const list: Record<string, unknown> = { type: "array" };
    list.items = list;
    ok(list, [[[]], []]);
    bad(list, [[1]], "type");
    const selfNot: Record<string, unknown> = {};
    selfNot.not = selfNot;
    bad(selfNot, 1, "depth");
  });
});

describe("draft-07 forms", () => {
  it("items array with additionalItems", () => {
    const s = { items: [{ type: "string" }, { type: "number" }], additionalItems: false };
    ok(s, ["a", 1]);
    assert.equal(bad(s, ["a", 1, 2], "additionalItems").errors[0].schemaPath, "#/additionalItems");
    bad(s, [1], "type");
    ok({ items: [{ type: "string" }], additionalItems: { type: "number" } }, ["a", 1, 2]);
    bad({ items: [{ type: "string" }], additionalItems: { type: "number" } }, ["a", 1, "b"], "type");
    ok({ items: [{ type: "string" }] }, ["a", 1, null]);
  });

  it("dependencies in both forms, definitions, boolean exclusive bounds", () => {
    const d = { dependencies: { a: ["b"], c: { required: ["d"] } } };
    ok(d, { a: 1, b: 1, c: 1, d: 1 });
    bad(d, { a: 1 }, "dependencies");
    bad(d, { c: 1 }, "required");
    bad({ minimum: 5, exclusiveMinimum: true }, 5, "minimum");
    ok({ minimum: 5, exclusiveMinimum: true }, 5.5);
    ok({ minimum: 5, exclusiveMinimum: false }, 5);
    bad({ maximum: 5, exclusiveMaximum: true }, 5, "maximum");
    ok({ maximum: 5, exclusiveMaximum: false }, 5);
    const r = compileSchema({ minimum: 5, exclusiveMinimum: true })(6);
    assert.deepEqual(r.unknownKeywords, []);
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

describe("keyword reporting", () => {
  it("lists unknown keywords by schema path without failing the value", () => {
    const s = {
      type: "object",
      foo: 1,
      "a/b": 2,
      properties: { a: { type: "string", "x-ui": {} } },
      $defs: { d: { bar: true } },
      unevaluatedProperties: false,
    };
    const r = ok(s, { a: "x", extra: 1 });
    assert.deepEqual([...r.unknownKeywords].sort(), [
      "#/$defs/d/bar", "#/a~1b", "#/foo", "#/properties/a/x-ui", "#/unevaluatedProperties",
    ]);
    assert.deepEqual(bad(s, { a: 1 }).unknownKeywords, r.unknownKeywords);
  });

  it("ignores annotations; format never fails", () => {
    const s = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/x",
      $comment: "c",
      title: "t",
      description: "d",
      default: 5,
      examples: [1],
      deprecated: true,
      readOnly: true,
      writeOnly: false,
      format: "email",
      contentMediaType: "text/plain",
      contentEncoding: "base64",
      contentSchema: { type: "number" },
      $defs: {},
      definitions: {},
    };
    assert.deepEqual(ok(s, "not an email").unknownKeywords, []);
    ok({ type: "string", format: "date-time" }, "yesterday");
  });

  it("reports garbage keyword values as schema problems", () => {
    for (const [schema, keyword] of [
      [{ minimum: "x" }, "minimum"],
      [{ maxLength: -1 }, "maxLength"],
      [{ minItems: 1.5 }, "minItems"],
      [{ required: "a" }, "required"],
      [{ required: [1] }, "required"],
      [{ type: 5 }, "type"],
      [{ type: "constructor" }, "type"],
      [{ type: [] }, "type"],
      [{ enum: "x" }, "enum"],
      [{ properties: [] }, "properties"],
      [{ anyOf: [] }, "anyOf"],
      [{ allOf: {} }, "allOf"],
      [{ uniqueItems: "yes" }, "uniqueItems"],
      [{ multipleOf: -2 }, "multipleOf"],
      [{ $defs: 3 }, "$defs"],
      [{ dependentRequired: { a: "b" } }, "dependentRequired"],
      [5, "schema"],
      [null, "schema"],
      ["string", "schema"],
      [[], "schema"],
      [{ properties: { a: 7 } }, "schema"],
    ] as const) {
      const r = bad(schema, { a: 1 }, keyword);
      assert.ok(r.errors.some((e) => e.message.startsWith("invalid schema")), JSON.stringify(r.errors));
    }
    // Also under combinators that would otherwise turn a failure into a pass.
    bad({ not: { minimum: "x" } }, 1, "minimum");
    bad({ anyOf: [{ maxLength: "x" }, true] }, "s", "maxLength");
  });
});

describe("errors", () => {
  it("carry JSON pointers into the value and into the schema", () => {
    const s = {
      properties: { a: { items: { properties: { b: { type: "string" } } } }, "x/~y": { type: "null" } },
    };
    const r = bad(s, { a: [{ b: 1 }], "x/~y": 0 });
    assert.deepEqual(r.errors.map((e) => [e.instancePath, e.schemaPath]), [
      ["/a/0/b", "#/properties/a/items/properties/b/type"],
      ["/x~1~0y", "#/properties/x~1~0y/type"],
    ]);
  });

  it("are capped", () => {
    const r = bad({ items: { type: "string" } }, Array.from({ length: 1000 }, (_, i) => i));
    assert.equal(r.errors.length, MAX_ERRORS);
    assert.equal(r.errors[MAX_ERRORS - 1].instancePath, `/${MAX_ERRORS - 1}`);
  });

  it("formatSchemaErrors makes one readable line", () => {
    const errors = [
      { instancePath: "", schemaPath: "#/type", keyword: "type", message: "must be object" },
      { instancePath: "/a\nb", schemaPath: "#", keyword: "x", message: "line1\nline2" },
      { instancePath: "/c", schemaPath: "#", keyword: "x", message: "m" },
    ];
    assert.equal(formatSchemaErrors(errors), "(root): must be object; /a\\u000ab: line1\\u000aline2; /c: m");
    assert.equal(formatSchemaErrors(errors, 1), "(root): must be object; and 2 more");
    assert.equal(formatSchemaErrors([]), "");
  });
});

describe("limits", () => {
  function nested(depth: number, leaf: unknown): unknown {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = [v];
    return v;
  }

  it("deep recursion is cut off with an error, not a stack overflow", () => {
    const s = { items: { $ref: "#" } };
    ok(s, nested(50, 1));
    for (const depth of [MAX_DEPTH, 1000, 100_000]) {
      const r = bad(s, nested(depth, 1), "depth");
      assert.equal(r.errors.length, 1);
    }
    ok({}, nested(100_000, 1));
    ok({ type: "array" }, nested(100_000, 1));
    bad({ const: [1] }, nested(100_000, 1), "const");
    bad({ enum: [[1]] }, nested(100_000, 1), "enum");
    bad({ uniqueItems: true }, [nested(100_000, 1), 2], "uniqueItems");
  });

  it("deeply nested schemas compile and fail cleanly", () => {
    let s: unknown = { type: "string" };
    for (let i = 0; i < 50_000; i++) s = { not: { not: s } };
    const r = validateSchema(s, "x");
    assert.equal(r.valid, false);
    assert.ok(r.errors.some((e) => e.message.includes("deeper than")), JSON.stringify(r.errors[0]));
  });
});

describe("never throws", () => {
  it("on values whose getters throw or that are not JSON", () => {
    const boom = (): never => {
      throw new Error("boom");
    };
    const hostile = new Proxy({}, { ownKeys: boom, getOwnPropertyDescriptor: boom });
    const r = validateSchema({ additionalProperties: false, required: ["a"] }, hostile);
    assert.equal(r.valid, false);
    assert.equal(r.errors[0].keyword, "internal");
    // None of these is in the enum (a Map compares as {}), so all are invalid, without a throw.
    const s = { type: ["string", "object", "array"], enum: [1, [1]], uniqueItems: true, items: { const: 1 } };
    for (const v of [undefined, 10n, Symbol("s"), () => 1, new Map(), [undefined, , 1], [1, 1]]) {
      assert.equal(validateSchema(s, v).valid, false);
    }
    ok(s, [1]);
    const throwingSchema = Object.defineProperty({}, "type", { enumerable: true, get: boom });
    assert.equal(validateSchema(throwingSchema, 1).valid, false);
  });

  it("on a few hundred random schema/value pairs", () => {
    let seed = 0x5eed;
    const rand = (): number => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const keywords = [
      "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
      "minLength", "maxLength", "pattern", "items", "prefixItems", "additionalItems", "contains", "minContains",
      "maxContains", "minItems", "maxItems", "uniqueItems", "properties", "patternProperties",
      "additionalProperties", "required", "dependentRequired", "dependentSchemas", "dependencies",
      "propertyNames", "minProperties", "maxProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
      "$ref", "$defs", "definitions", "$anchor", "$id", "format", "unevaluatedItems", "bogus",
    ];
    const atoms: unknown[] = [
      null, true, false, 0, -1, 1.5, 0.1, 3, 1e308, -0, "", "a", "😀", "(", "^[a-z]+$", "#", "#/$defs/a",
      "#/definitions/b", "#/properties/a", "#/%7e", "#a", "http://x", "string", "integer", "object", "array",
    ];
    const value = (d: number): unknown => {
      const r = rand();
      if (d <= 0 || r < 0.5) return pick(atoms);
      if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => value(d - 1));
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 4); i > 0; i--) {
        // defineProperty, so "__proto__" becomes an own key as JSON.parse makes it.
        const key = pick(["a", "b", "c", "__proto__", "x-1", "😀"]);
        Object.defineProperty(o, key, { value: value(d - 1), enumerable: true, writable: true, configurable: true });
      }
      return o;
    };
    const schema = (d: number): unknown => {
      if (d <= 0 || rand() < 0.15) return pick([true, false, {}, pick(atoms)]);
      const s: Record<string, unknown> = {};
      for (let i = 1 + Math.floor(rand() * 4); i > 0; i--) {
        const k = pick(keywords);
        const r = rand();
        s[k] = r < 0.3 ? pick(atoms) : r < 0.5 ? schema(d - 1) : r < 0.7 ? [schema(d - 1), schema(d - 1)]
          : r < 0.85 ? { a: schema(d - 1), b: schema(d - 1) } : value(2);
      }
      return s;
    };
    let valid = 0;
    for (let i = 0; i < 400; i++) {
      const s = schema(4);
      const check = compileSchema(s);
      for (let j = 0; j < 3; j++) {
        const v = value(4);
        const r = check(v);
        assert.equal(typeof r.valid, "boolean");
        if (r.valid !== (r.errors.length === 0)) assert.fail(JSON.stringify({ s, v, r }));
        assert.ok(r.errors.length <= MAX_ERRORS);
        for (const e of r.errors) {
          for (const f of [e.instancePath, e.schemaPath, e.keyword, e.message]) {
            assert.equal(typeof f, "string");
          }
          assert.ok(e.schemaPath.startsWith("#"));
          assert.ok(e.instancePath === "" || e.instancePath.startsWith("/"));
        }
        for (const u of r.unknownKeywords) assert.ok(u.startsWith("#/"));
        assert.ok(!formatSchemaErrors(r.errors).includes("\n"));
        if (r.valid) valid++;
      }
    }
    // The generator must exercise both outcomes, or it tests nothing.
    assert.ok(valid > 50 && valid < 1150, `valid count ${valid}`);
  });
});

describe("compiled validators", () => {
  it("share one frozen valid result and survive re-entry from a getter", () => {
    const check = compileSchema({ type: "object", properties: { a: { type: "number" } } });
    const first = check({ a: 1 });
    assert.equal(check({ a: 2 }), first);
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.errors));
    let inner: ValidationResult | undefined;
    const tricky = {
      get a(): number {
        inner = check({ a: "x" });
        return 1;
      },
    };
    assert.equal(check(tricky).valid, true);
    assert.equal(inner?.valid, false);
    assert.deepEqual(where(inner!), ["/a type"]);
    const failed = check({ a: "y" });
    assert.equal(failed.valid, false);
    assert.notEqual(check({ a: "z" }).errors, failed.errors);
  });
});

it("patterns that only compile without the u flag (identity escapes) still validate", () => {
  const v = compileSchema({ type: "string", pattern: "^\\d{3}\\-\\d{4}$" });
  assert.equal(v("555-1234").valid, true);
  assert.equal(v("5551234").valid, false);
});
