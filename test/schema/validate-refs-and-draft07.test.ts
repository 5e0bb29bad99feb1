// $ref / $defs / anchor resolution, reference cycles, and draft-07 keyword forms.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileSchema, validateSchema } from "../../src/schema/validate.ts";
import { bad, ok, where } from "./validate-helpers.ts";

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
