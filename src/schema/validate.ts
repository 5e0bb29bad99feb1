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
 * - Bounded work, whatever the schema (schemas come from servers): at most {@link MAX_ERRORS}
 *   errors, evaluation nested at most {@link MAX_DEPTH} levels (overflow is an error), a `$ref`
 *   cycle that consumes no input is an error, and each validation has a budget of steps
 *   ({@link CompileSchemaOptions.maxSteps}). Patterns that could backtrack catastrophically are
 *   found when the schema is compiled and run by a linear-time matcher under that budget.
 *   Running out of budget, or meeting a risky pattern that matcher cannot run, gives a result
 *   with `undecided: true`: "could not validate", which callers can tell from "invalid".
 */
import { Compiler, describe, problemCheck } from "./compiler.ts";
import { Ctx, DEFAULT_MAX_STEPS, evalNode, truncate, type Node } from "./runtime.ts";

export { DEFAULT_MAX_STEPS, MAX_DEPTH, MAX_ERRORS } from "./runtime.ts";

export interface SchemaError {
  /** JSON pointer into the value: "" is the value itself, "/a/0/b" a nested one. */
  instancePath: string;
  /** Location of the failing keyword in the schema: "#/properties/a/type". */
  schemaPath: string;
  keyword: string;
  message: string;
}

export interface ValidationResult {
  /** The value matches the schema. False when it does not, and when that could not be decided. */
  valid: boolean;
  /**
   * The validator stopped before a verdict ("could not validate"): its budget of steps ran out
   * (keyword `budget`), or a pattern that could backtrack catastrophically could not be run
   * safely (keyword `pattern`). `valid` is then false and `errors` holds that one error, saying
   * where it stopped. Not the same as invalid: the value may well be fine.
   */
  undecided: boolean;
  errors: SchemaError[];
  /** Schema paths of keywords this validator does not know, e.g. "#/properties/a/foo". */
  unknownKeywords: string[];
}

/** Options of {@link compileSchema}. */
export interface CompileSchemaOptions {
  /**
   * Work allowed per validation, in steps: one per subschema applied to a value, more for
   * long strings, patterns, `enum`/`const`/`uniqueItems` comparisons and `required` lists.
   * Default {@link DEFAULT_MAX_STEPS} (tens of milliseconds at most). Out of steps, the result
   * is `undecided`. A value found invalid gets a second pass with as many steps to list errors.
   */
  maxSteps?: number;
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
 * const r = check(args); // r.valid, r.undecided, r.errors, r.unknownKeywords
 * ```
 */
export function compileSchema(schema: unknown, options: CompileSchemaOptions = {}): CompiledValidator {
  const max = options.maxSteps;
  const maxSteps = typeof max === "number" && max >= 1 ? Math.floor(max) : DEFAULT_MAX_STEPS;
  let root: Node;
  let unknown: string[] = [];
  try {
    const compiler = new Compiler(schema);
    root = compiler.compile(schema, "#", 0);
    compiler.resolveRefs(root);
    unknown = compiler.unknown;
  } catch (e) {
    root = { path: "#", checks: [problemCheck("#", "schema", "could not be compiled: " + describe(e))] };
  }
  const unknownKeywords = Object.freeze(unknown) as string[];
  const validResult: ValidationResult = Object.freeze({
    valid: true,
    undecided: false,
    errors: Object.freeze([] as SchemaError[]) as SchemaError[],
    unknownKeywords,
  });
  let shared = new Ctx(maxSteps);
  return (value) => {
    // A value's getter could call this validator again; only then is a second context made.
    const c = shared.busy ? new Ctx(maxSteps) : shared;
    c.busy = true;
    try {
      c.start(false);
      const ok = evalNode(root, value, c);
      if (c.undecided) return { valid: false, undecided: true, errors: [c.undecided], unknownKeywords };
      if (ok && !c.fatal) return validResult;
      c.start(true);
      evalNode(root, value, c);
      if (c.errors.length === 0) c.fail("#", "schema", "value is invalid");
      if (c.cut) {
        const message = `further errors were not looked for: the validation budget of ${maxSteps} steps ran out`;
        c.errors.push({ instancePath: "", schemaPath: "#", keyword: "budget", message });
      }
      return { valid: false, undecided: false, errors: c.errors, unknownKeywords };
    } catch (e) {
      if (c === shared) shared = new Ctx(maxSteps);
      const message = "validation failed: " + truncate(describe(e), 200);
      const errors = [{ instancePath: "", schemaPath: "#", keyword: "internal", message }];
      return { valid: false, undecided: false, errors, unknownKeywords };
    } finally {
      c.finish();
      c.busy = false;
    }
  };
}

/** Compiles and runs `schema` on `value` once. Prefer {@link compileSchema} for repeated use. */
export function validateSchema(schema: unknown, value: unknown, options?: CompileSchemaOptions): ValidationResult {
  return compileSchema(schema, options)(value);
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
