// Shared assertions for the validate*.test.ts files: run validateSchema and check the outcome.
import assert from "node:assert/strict";
import { formatSchemaErrors, validateSchema, type ValidationResult } from "../../src/schema/validate.ts";

export function ok(schema: unknown, value: unknown): ValidationResult {
  const r = validateSchema(schema, value);
  assert.equal(r.valid, true, `expected valid, got: ${formatSchemaErrors(r.errors)}`);
  assert.deepEqual(r.errors, []);
  return r;
}

export function bad(schema: unknown, value: unknown, keyword?: string): ValidationResult {
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
export const where = (r: ValidationResult): string[] => r.errors.map((e) => `${e.instancePath} ${e.keyword}`);
