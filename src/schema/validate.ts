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
import { buildArrayAssertions, buildGeneric, buildNumber, buildObjectAssertions } from "./runtime.ts";
import { buildString, Ctx, escapeSegment, evalChild, evalNode, isPlainObject, MAX_DEPTH } from "./runtime.ts";
import { nonNegInt, preview, quiet, truncate, type Builder, type Check, type Node } from "./runtime.ts";

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

/** Keywords this validator knows; the last two lines are annotations, never asserted. */
const KNOWN = new Set(
  `type enum const minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength
  pattern items prefixItems additionalItems contains minContains maxContains minItems maxItems
  uniqueItems properties patternProperties additionalProperties required dependentRequired
  dependentSchemas dependencies propertyNames minProperties maxProperties allOf anyOf oneOf not if
  then else $ref $defs definitions $anchor $id $schema $comment $vocabulary title description default
  examples deprecated readOnly writeOnly format contentMediaType contentEncoding contentSchema`.split(/\s+/),
);

type Sub = (value: unknown, ...segs: string[]) => Node;
type RefSlot = { target?: Node; problem?: string };

const has = (o: object, k: string): boolean => Object.hasOwn(o, k);

function problemCheck(at: string, keyword: string, message: string): Check {
  const msg = "invalid schema: " + message;
  return (_v, c) => c.fatalError(at, keyword, msg);
}

function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "unknown error";
  }
}

/** Compiles one schema document; `$ref`s are resolved after the walk, once anchors are known. */
class Compiler {
  readonly unknown: string[] = [];
  private readonly memo = new Map<object, Node>();
  private readonly anchors = new Map<string, Node>();
  private readonly refs: Array<{ slot: RefSlot; ref: string }> = [];
  private readonly regexes = new Map<string, RegExp | string>();
  private readonly baseId: string;

  constructor(private readonly root: unknown) {
    const id = isPlainObject(root) && typeof root.$id === "string" ? root.$id : "";
    this.baseId = id.split("#")[0];
  }

  compile(schema: unknown, path: string, depth: number): Node {
    if (schema === true) return { path, checks: [], bool: true };
    if (schema === false) {
      return { path, checks: [(_v, c) => c.fail(path, "false", "no value is allowed here")], bool: false };
    }
    if (!isPlainObject(schema)) {
      return { path, checks: [problemCheck(path, "schema", "a schema must be an object or a boolean")] };
    }
    const seen = this.memo.get(schema);
    if (seen) return seen;
    const node: Node = { path, checks: [] };
    this.memo.set(schema, node);
    if (depth > MAX_DEPTH) {
      node.checks.push(problemCheck(path, "schema", `nested deeper than ${MAX_DEPTH} levels`));
      return node;
    }
    const at = (k: string): string => path + "/" + escapeSegment(k);
    for (const k of Object.keys(schema)) if (!KNOWN.has(k)) this.unknown.push(at(k));
    const b: Builder = {
      s: schema,
      at,
      regex: (src) => this.regex(src),
      check: (c) => void node.checks.push(c),
      problem: (k, message) => void node.checks.push(problemCheck(at(k), k, message)),
    };
    const sub: Sub = (v, ...segs) => {
      return this.compile(v, path + segs.map((g) => "/" + escapeSegment(g)).join(""), depth + 1);
    };
    buildGeneric(b);
    buildNumber(b);
    buildString(b);
    buildArrayAssertions(b);
    this.core(b, sub, node);
    buildItems(b, sub);
    buildProperties(b, sub);
    buildObjectAssertions(b);
    buildLogic(b, sub);
    return node;
  }

  /** Resolves every `$ref` met so far, including those found in targets compiled on the way. */
  resolveRefs(): void {
    for (let i = 0; i < this.refs.length; i++) {
      const { slot, ref } = this.refs[i];
      const r = this.resolve(ref);
      if (typeof r === "string") slot.problem = r;
      else slot.target = r;
    }
  }

  private core(b: Builder, sub: Sub, node: Node): void {
    const s = b.s;
    for (const k of ["$defs", "definitions"]) {
      if (!has(s, k)) continue;
      const defs = s[k];
      if (!isPlainObject(defs)) b.problem(k, `${k} must be an object`);
      else for (const name of Object.keys(defs)) sub(defs[name], k, name);
    }
    if (has(s, "$anchor")) {
      if (typeof s.$anchor === "string") this.anchors.set(s.$anchor, node);
      else b.problem("$anchor", "$anchor must be a string");
    }
    // draft-07 spelled an anchor as a fragment-only $id.
    const id = s.$id;
    if (typeof id === "string" && id.startsWith("#") && id.length > 1) this.anchors.set(id.slice(1), node);
    if (!has(s, "$ref")) return;
    const ref = s.$ref;
    if (typeof ref !== "string") return b.problem("$ref", "$ref must be a string");
    const slot: RefSlot = {};
    this.refs.push({ slot, ref });
    const at = b.at("$ref");
    b.check((v, c) => {
      return slot.target ? c.followRef(slot.target, v, at) : c.fatalError(at, "$ref", slot.problem ?? "");
    });
  }

  private resolve(ref: string): Node | string {
    const shown = preview(ref);
    let r = ref;
    if (this.baseId !== "" && r.startsWith(this.baseId)) {
      const rest = r.slice(this.baseId.length);
      if (rest === "" || rest.startsWith("#")) r = rest;
    }
    if (r === "" || r === "#") return this.compile(this.root, "#", 0);
    if (!r.startsWith("#")) return `$ref ${shown} is not local; remote schemas are not fetched`;
    let fragment: string;
    try {
      fragment = decodeURIComponent(r.slice(1));
    } catch {
      return `$ref ${shown} has invalid percent-encoding`;
    }
    if (!fragment.startsWith("/")) return this.anchors.get(fragment) ?? `$ref ${shown}: no such anchor`;
    let cur: unknown = this.root;
    let path = "#";
    const segs = fragment.slice(1).split("/");
    for (const raw of segs) {
      const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
      const index = Array.isArray(cur) && /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : -1;
      if (Array.isArray(cur) && index >= 0 && index < cur.length) cur = cur[index];
      else if (isPlainObject(cur) && has(cur, seg)) cur = cur[seg];
      else return `$ref ${shown} does not resolve`;
      path += "/" + escapeSegment(seg);
    }
    return this.compile(cur, path, segs.length);
  }

  private regex(src: unknown): RegExp | string {
    if (typeof src !== "string") return "pattern must be a string";
    let r = this.regexes.get(src);
    if (r === undefined) {
      try {
        r = new RegExp(src, "u");
      } catch {
        // Patterns written for other engines (Python, Java) often use identity escapes such
        // as `\-` or `\:` that the `u` flag rejects; they mean the same without it.
        try {
          r = new RegExp(src);
        } catch (e) {
          r = truncate(describe(e), 200);
        }
      }
      this.regexes.set(src, r);
    }
    return r;
  }
}

function schemaList(b: Builder, sub: Sub, k: string): Node[] | undefined {
  if (!has(b.s, k)) return undefined;
  const list = b.s[k];
  if (Array.isArray(list)) return list.map((x, i) => sub(x, k, String(i)));
  b.problem(k, `${k} must be an array of schemas`);
  return undefined;
}

/** The subschemas of a keyword whose value maps names to schemas, as parallel arrays. */
function schemaMap(b: Builder, sub: Sub, k: string): { keys: string[]; nodes: Node[] } {
  const map = has(b.s, k) ? b.s[k] : {};
  if (!isPlainObject(map)) b.problem(k, `${k} must be an object`);
  const keys = isPlainObject(map) ? Object.keys(map) : [];
  return { keys, nodes: keys.map((key) => sub((map as Record<string, unknown>)[key], k, key)) };
}

/** `prefixItems` and `items`, or draft-07 tuple `items` with `additionalItems`; `contains`. */
function buildItems(b: Builder, sub: Sub): void {
  const s = b.s;
  let prefix = schemaList(b, sub, "prefixItems") ?? [];
  let rest: Node | undefined;
  let restKw = "items";
  if (has(s, "items")) {
    if (!Array.isArray(s.items)) rest = sub(s.items, "items");
    else if (prefix.length > 0) b.problem("items", "items cannot be an array next to prefixItems");
    else {
      prefix = schemaList(b, sub, "items") ?? [];
      if (has(s, "additionalItems")) rest = sub(s.additionalItems, (restKw = "additionalItems"));
    }
  }
  if (prefix.length > 0 || (rest !== undefined && rest.bool !== true)) {
    const at = b.at(restKw);
    const tooMany = `must have at most ${prefix.length} item${prefix.length === 1 ? "" : "s"}`;
    b.check((v, c) => {
      if (!Array.isArray(v)) return true;
      let ok = true;
      for (let i = 0; i < v.length; i++) {
        const node = i < prefix.length ? prefix[i] : rest;
        if (node === undefined) break;
        if (node.bool === false && i >= prefix.length) return c.fail(at, restKw, tooMany);
        if (node.checks.length > 0 && !evalChild(node, v[i], i, c)) {
          ok = false;
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  if (!has(s, "contains")) return;
  const node = sub(s.contains, "contains");
  const min = nonNegInt(b, "minContains") ?? 1;
  const max = nonNegInt(b, "maxContains");
  const at = b.at("contains");
  const atMax = b.at("maxContains");
  const few = `must contain at least ${min} item(s) matching contains`;
  const many = `must contain at most ${max} item(s) matching contains`;
  b.check((v, c) => {
    if (!Array.isArray(v)) return true;
    let n = 0;
    for (let i = 0; i < v.length && (max !== undefined || n < min); i++) {
      c.path.push(i);
      if (quiet(node, v[i], c)) n++;
      c.path.pop();
    }
    if (n < min) return c.fail(at, "contains", few);
    return max === undefined || n <= max || c.fail(atMax, "maxContains", many);
  });
}

/** `properties`, `patternProperties`, `additionalProperties`, `propertyNames`,
 * `dependentSchemas` and the schema form of draft-07 `dependencies`. */
function buildProperties(b: Builder, sub: Sub): void {
  const s = b.s;
  const named = schemaMap(b, sub, "properties");
  const names = new Set(named.keys);
  if (names.size > 0) {
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      let ok = true;
      for (let i = 0; i < named.keys.length; i++) {
        const k = named.keys[i];
        if (has(v, k) && named.nodes[i].bool !== true && !evalChild(named.nodes[i], v[k], k, c)) {
          ok = false;
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  const patterned = schemaMap(b, sub, "patternProperties");
  const regexes: RegExp[] = [];
  const patternNodes: Node[] = [];
  patterned.keys.forEach((src, i) => {
    const re = b.regex(src);
    if (typeof re === "string") return b.problem("patternProperties", re);
    regexes.push(re);
    patternNodes.push(patterned.nodes[i]);
  });
  const extra = has(s, "additionalProperties") ? sub(s.additionalProperties, "additionalProperties") : undefined;
  if (regexes.length > 0 || (extra !== undefined && extra.bool !== true)) {
    const KW = "additionalProperties";
    const at = b.at(KW);
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      let ok = true;
      const keys = Object.keys(v);
      for (let j = 0; j < keys.length; j++) {
        const k = keys[j];
        let matched = false;
        for (let i = 0; i < regexes.length; i++) {
          if (!regexes[i].test(k)) continue;
          matched = true;
          if (!evalChild(patternNodes[i], v[k], k, c)) {
            ok = false;
            if (c.stop()) return false;
          }
        }
        if (matched || extra === undefined || names.has(k)) continue;
        const r = extra.bool === false ? c.fail(at, KW, "property not allowed", k) : evalChild(extra, v[k], k, c);
        if (!r) {
          ok = false;
          if (c.stop()) return false;
        }
      }
      return ok;
    });
  }
  if (has(s, "propertyNames")) {
    const node = sub(s.propertyNames, "propertyNames");
    const at = b.at("propertyNames");
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      let ok = true;
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        c.path.push(k);
        const r = quiet(node, k, c);
        c.path.pop();
        if (!r) {
          ok = c.fail(at, "propertyNames", "property name not allowed by propertyNames", k);
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  const deps = schemaMap(b, sub, "dependentSchemas");
  const draft07 = has(s, "dependencies") && isPlainObject(s.dependencies) ? s.dependencies : {};
  for (const [k, d] of Object.entries(draft07)) {
    if (Array.isArray(d)) continue; // the array form is dependentRequired (runtime.ts)
    deps.keys.push(k);
    deps.nodes.push(sub(d, "dependencies", k));
  }
  deps.keys.forEach((k, i) => {
    b.check((v, c) => !isPlainObject(v) || !has(v, k) || evalNode(deps.nodes[i], v, c));
  });
}

/** `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`. A failed anyOf/oneOf with no match
 * reports its own error followed by each branch's errors. */
function buildLogic(b: Builder, sub: Sub): void {
  const s = b.s;
  for (const node of schemaList(b, sub, "allOf") ?? []) b.check((v, c) => evalNode(node, v, c));
  for (const k of ["anyOf", "oneOf"]) {
    const nodes = schemaList(b, sub, k);
    if (nodes === undefined) continue;
    if (nodes.length === 0) {
      b.problem(k, `${k} must not be empty`);
      continue;
    }
    const at = b.at(k);
    const any = k === "anyOf";
    const none = `must match ${any ? "at least" : "exactly"} one schema in ${k}`;
    b.check((v, c) => {
      let first = -1;
      for (let i = 0; i < nodes.length; i++) {
        if (!quiet(nodes[i], v, c)) continue;
        if (any) return true;
        if (first >= 0) return c.fail(at, k, c.collect ? `${none} (matches ${first} and ${i})` : "");
        first = i;
      }
      if (first >= 0) return true;
      if (c.collect) {
        c.fail(at, k, none);
        for (const n of nodes) evalNode(n, v, c);
      }
      return false;
    });
  }
  if (has(s, "not")) {
    const node = sub(s.not, "not");
    const at = b.at("not");
    b.check((v, c) => !quiet(node, v, c) || c.fail(at, "not", "must not match the schema in not"));
  }
  if (!has(s, "if")) return;
  const cond = sub(s.if, "if");
  const then = has(s, "then") ? sub(s.then, "then") : undefined;
  const otherwise = has(s, "else") ? sub(s.else, "else") : undefined;
  if (then === undefined && otherwise === undefined) return;
  b.check((v, c) => {
    const branch = quiet(cond, v, c) ? then : otherwise;
    return branch === undefined || evalNode(branch, v, c);
  });
}

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
