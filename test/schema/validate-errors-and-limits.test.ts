// Unknown/garbage keyword reporting, error paths and formatting, depth and error limits, robustness.
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
import { seededRandom } from "../../scripts/bench/schema-corpus.ts";
import { bad, ok, where } from "./validate-helpers.ts";

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
    const rand = seededRandom(0x5eed);
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
