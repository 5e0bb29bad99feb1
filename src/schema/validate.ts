/**
 * JSON Schema validation for MCP tool arguments (`inputSchema`) and `structuredContent`
 * (`outputSchema`): the 2020-12 keywords tools use, tolerant of draft-07 forms, no dependencies.
 *
 * Contract:
 * - Never throws, whatever the schema or the value. A broken keyword (`minimum: "x"`, a pattern
 *   that does not compile, an unresolvable or remote `$ref`) is an error in the result, and it
 *   fails the validation even under `not` or an `anyOf` branch: a broken schema never passes.
 * - Unknown keywords (including the unsupported `unevaluated*` and `$dynamicRef`) are listed in
 *   `unknownKeywords` and do not by themselves make a value invalid. `format` never fails.
 * - `$ref` resolves against the root document only (`#`, `#/json/pointer`, `#anchor`, or the
 *   root `$id` followed by one of those); nested `$id`s do not change the base, nothing is fetched.
 * - Bounded work: at most {@link MAX_ERRORS} errors, evaluation nested at most {@link MAX_DEPTH}
 *   levels (overflow is an error), and a `$ref` cycle that consumes no input is an error.
 */
import { Compiler, describe, problemCheck } from "./compiler.ts";
import { Ctx, evalNode, truncate, type Node } from "./runtime.ts";

export { MAX_DEPTH, MAX_ERRORS } from "./runtime.ts";

export interface SchemaError {
  /** JSON pointer into the value: "" is the value itself, "/a/0/b" a nested one. */
  instancePath: string;
  /** Location of the failing keyword in the schema: "#/properties/a/type". */
  schemaPath: string;
  keyword: string;
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  errors: SchemaError[];
  /** Schema paths of keywords this validator does not know, e.g. "#/properties/a/foo". */
  unknownKeywords: string[];
}

/** A compiled schema. Results are frozen where shared: every valid result of one validator is
 * the same object, and `unknownKeywords` is one frozen array. */
export type CompiledValidator = (value: unknown) => ValidationResult;

/**
 * Compiles `schema` once (patterns, `$ref` targets, enum keys) into a validator to call on
 * every value. Never throws.
 *
 * ```ts
 * const check = compileSchema(tool.inputSchema);
 * const r = check(args); // r.valid, r.errors, r.unknownKeywords
 * ```
 */
export function compileSchema(schema: unknown): CompiledValidator {
  let root: Node;
  let unknown: string[] = [];
  try {
    const compiler = new Compiler(schema);
    root = compiler.compile(schema, "#", 0);
    compiler.resolveRefs();
    unknown = compiler.unknown;
  } catch (e) {
    root = { path: "#", checks: [problemCheck("#", "schema", "could not be compiled: " + describe(e))] };
  }
  const unknownKeywords = Object.freeze(unknown) as string[];
  const validResult: ValidationResult = Object.freeze({
    valid: true,
    errors: Object.freeze([] as SchemaError[]) as SchemaError[],
    unknownKeywords,
  });
  let shared = new Ctx();
  return (value) => {
    // A value's getter could call this validator again; only then is a second context made.
    const c = shared.busy ? new Ctx() : shared;
    c.busy = true;
    try {
      c.start(false);
      if (evalNode(root, value, c) && !c.fatal) return validResult;
      c.start(true);
      evalNode(root, value, c);
      if (c.errors.length === 0) c.fail("#", "schema", "value is invalid");
      return { valid: false, errors: c.errors, unknownKeywords };
    } catch (e) {
      if (c === shared) shared = new Ctx();
      const message = "validation failed: " + truncate(describe(e), 200);
      const errors = [{ instancePath: "", schemaPath: "#", keyword: "internal", message }];
      return { valid: false, errors, unknownKeywords };
    } finally {
      c.busy = false;
    }
  };
}

/** Compiles and runs `schema` on `value` once. Prefer {@link compileSchema} for repeated use. */
export function validateSchema(schema: unknown, value: unknown): ValidationResult {
  return compileSchema(schema)(value);
}

/** One line summary of errors for people: "/a: must be integer; /b: required property missing".
 * Shows at most `max` errors (default 10); control characters are escaped. */
export function formatSchemaErrors(errors: readonly SchemaError[], max = 10): string {
  const n = Number.isFinite(max) ? Math.max(1, Math.floor(max)) : 10;
  const parts: string[] = [];
  for (let i = 0; i < errors.length && i < n; i++) {
    const e = errors[i];
    const where = e.instancePath === "" ? "(root)" : oneLine(e.instancePath, 120);
    parts.push(`${where}: ${oneLine(e.message, 300)}`);
  }
  if (errors.length > n) parts.push(`and ${errors.length - n} more`);
  return parts.join("; ");
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function oneLine(s: string, max: number): string {
  return truncate(s.replace(CONTROL, (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0")), max);
}
