/**
 * Builders of the assertion keywords of the JSON Schema validator: those that never look at a
 * subschema (`type`, `enum`, `const`, number and string bounds, `pattern`, array and object sizes,
 * `uniqueItems`, `required`, `dependentRequired`), with the value helpers only they use.
 */
import { escapeSegment, has, isPlainObject, MAX_DEPTH, nonNegInt, preview } from "./runtime.ts";
import type { Builder, Ctx } from "./runtime.ts";

/** Values visited when building a comparison key for `enum`, `const` or `uniqueItems`. */
const KEY_BUDGET = 1_000_000;

const TYPE_NAMES = ["null", "boolean", "object", "array", "number", "integer", "string"];
const T_NUMBER = 1 << 4;
const T_INTEGER = 1 << 5;

/** Bits (positions in TYPE_NAMES) of the JSON type of `v`: an integer has the number bit too;
 * values JSON cannot carry (NaN, Infinity, undefined, bigint, functions) have none. */
function typeBits(v: unknown): number {
  const t = typeof v;
  if (t === "string") return 1 << 6;
  if (t === "boolean") return 1 << 1;
  if (t === "number") return Number.isInteger(v) ? T_NUMBER | T_INTEGER : Number.isFinite(v) ? T_NUMBER : 0;
  if (t === "object") return v === null ? 1 : Array.isArray(v) ? 1 << 3 : 1 << 2;
  return 0;
}

/** Length in Unicode code points: a surrogate pair counts once, a lone surrogate once. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 0xd800 && c <= 0xdbff ? s.charCodeAt(i + 1) : 0;
    if (d >= 0xdc00 && d <= 0xdfff) {
      n--;
      i++;
    }
  }
  return n;
}

/** Digits after the decimal point in the shortest printed form of `x` (1e-7 has 7). */
function decimals(x: number): number {
  const s = String(Math.abs(x));
  const e = s.indexOf("e");
  const mantissa = e < 0 ? s : s.slice(0, e);
  const dot = mantissa.indexOf(".");
  const frac = dot < 0 ? 0 : mantissa.length - dot - 1;
  return Math.max(0, frac - (e < 0 ? 0 : Number(s.slice(e + 1))));
}

/** `v` is a multiple of `m` (> 0) in decimal terms: 0.3 is a multiple of 0.1 although
 * 0.3 / 0.1 is 2.9999999999999996 in binary floating point. */
export function isMultipleOf(v: number, m: number): boolean {
  const q = v / m;
  if (!Number.isFinite(q)) return false;
  if (Number.isInteger(q)) return true;
  const scale = Math.max(decimals(v), decimals(m));
  if (scale > 300) return false;
  const f = 10 ** scale;
  const a = Math.round(v * f);
  const b = Math.round(m * f);
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) && b !== 0 && a % b === 0;
}

let keyBudget = 0;

/** A string equal for JSON-equal values (object key order ignored, 1 equals 1.0), or undefined
 * when the value is too deep or too large to compare. */
export function canonicalKey(v: unknown): string | undefined {
  keyBudget = KEY_BUDGET;
  return keyOf(v, 0);
}

function keyOf(v: unknown, depth: number): string | undefined {
  if (--keyBudget < 0) return undefined;
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || v == null) return String(v);
  if (typeof v !== "object") return typeof v; // not JSON: bigint, symbol, function
  if (depth >= MAX_DEPTH) return undefined;
  const o = v as Record<string, unknown>;
  const keys = Array.isArray(v) ? null : Object.keys(o).sort();
  const n = keys ? keys.length : (v as unknown[]).length;
  let s = keys ? "{" : "[";
  for (let i = 0; i < n; i++) {
    const k = keyOf(keys ? o[keys[i]] : o[i], depth + 1);
    if (k === undefined) return undefined;
    s += (i === 0 ? "" : ",") + (keys ? JSON.stringify(keys[i]) + ":" : "") + k;
  }
  return s + (keys ? "}" : "]");
}

/** Builds a membership test for `enum` / `const`: primitives by identity, objects by key. */
function memberOf(b: Builder, k: string, values: unknown[], message: string): void {
  const prims = new Set<unknown>();
  const keys = new Set<string>();
  for (const e of values) {
    if (typeof e !== "object" || e === null) prims.add(e);
    else {
      const key = canonicalKey(e);
      if (key === undefined) return b.problem(k, `${k} value is too deep or too large`);
      keys.add(key);
    }
  }
  const at = b.at(k);
  b.check((v, c) => {
    if (typeof v !== "object" || v === null) return prims.has(v) || c.fail(at, k, message);
    if (keys.size === 0) return c.fail(at, k, message);
    const key = canonicalKey(v);
    if (key === undefined) return c.fatalError(at, k, "value too deep or too large to compare");
    return keys.has(key) || c.fail(at, k, message);
  });
}

/** `type`, `enum`, `const`. */
export function buildGeneric(b: Builder): void {
  const s = b.s;
  if (has(s, "type")) {
    const names = Array.isArray(s.type) ? (s.type as unknown[]) : [s.type];
    let mask = 0;
    for (const n of names) {
      const i = typeof n === "string" ? TYPE_NAMES.indexOf(n) : -1;
      if (i < 0) mask = -1;
      else if (mask >= 0) mask |= 1 << i;
    }
    if (mask <= 0) b.problem("type", `type must be one of ${TYPE_NAMES.join(", ")}, or an array of them`);
    else {
      const at = b.at("type");
      const message = "must be " + names.join(" or ");
      b.check((v, c) => (typeBits(v) & mask) !== 0 || c.fail(at, "type", message));
    }
  }
  const list = has(s, "enum") ? s.enum : [];
  if (!Array.isArray(list)) b.problem("enum", "enum must be an array");
  else if (has(s, "enum")) {
    const shown = list.slice(0, 8).map((x) => preview(x, 40)).join(", ");
    memberOf(b, "enum", list, `must be one of: ${shown}${list.length > 8 ? ", …" : ""}`);
  }
  if (has(s, "const")) memberOf(b, "const", [s.const], "must be equal to " + preview(s.const));
}

/** `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (number, or draft-04 boolean
 * modifying minimum/maximum), `multipleOf`. */
export function buildNumber(b: Builder): void {
  const s = b.s;
  const num = (k: string): number | undefined => {
    if (!has(s, k) || typeof s[k] === "boolean") return undefined;
    const n = s[k];
    if (typeof n === "number" && Number.isFinite(n)) return n;
    b.problem(k, `${k} must be a number`);
    return undefined;
  };
  const bound = (k: string, n: number | undefined, op: ">=" | ">" | "<=" | "<"): void => {
    if (n === undefined) return;
    const at = b.at(k);
    const msg = `must be ${op} ${n}`;
    const test: (v: number) => boolean =
      op === ">=" ? (v) => v >= n : op === ">" ? (v) => v > n : op === "<=" ? (v) => v <= n : (v) => v < n;
    b.check((v, c) => typeof v !== "number" || test(v) || c.fail(at, k, msg));
  };
  bound("minimum", num("minimum"), s.exclusiveMinimum === true ? ">" : ">=");
  bound("maximum", num("maximum"), s.exclusiveMaximum === true ? "<" : "<=");
  bound("exclusiveMinimum", num("exclusiveMinimum"), ">");
  bound("exclusiveMaximum", num("exclusiveMaximum"), "<");
  const m = num("multipleOf");
  if (m === undefined) return;
  if (m <= 0) return b.problem("multipleOf", "multipleOf must be greater than 0");
  const at = b.at("multipleOf");
  const msg = `must be a multiple of ${m}`;
  b.check((v, c) => typeof v !== "number" || isMultipleOf(v, m) || c.fail(at, "multipleOf", msg));
}

/** `minLength`, `maxLength` (in code points), `pattern`. */
export function buildString(b: Builder): void {
  sizeBound(b, "minLength", stringLength, true, "character");
  sizeBound(b, "maxLength", stringLength, false, "character");
  if (!has(b.s, "pattern")) return;
  const re = b.regex(b.s.pattern);
  if (typeof re === "string") return b.problem("pattern", re);
  const at = b.at("pattern");
  const msg = "must match pattern " + preview(re.source);
  b.check((v, c) => typeof v !== "string" || re.test(v) || c.fail(at, "pattern", msg));
}

/** Checks `size(v)` against the bound in keyword `k`; size -1 means the keyword does not apply. */
function sizeBound(b: Builder, k: string, size: (v: unknown, n: number) => number, atLeast: boolean, what: string) {
  const n = nonNegInt(b, k);
  if (n === undefined) return;
  const at = b.at(k);
  const noun = n === 1 ? what : what === "property" ? "properties" : what + "s";
  const msg = `must have ${atLeast ? "at least" : "at most"} ${n} ${noun}`;
  b.check((v, c) => {
    const len = size(v, n);
    return len < 0 || (atLeast ? len >= n : len <= n) || c.fail(at, k, msg);
  });
}

/** Code points, counted only when the UTF-16 length (between 1 and 2 units per code point)
 * cannot decide the comparison with `bound`; otherwise the UTF-16 length, which compares alike. */
function stringLength(v: unknown, bound: number): number {
  if (typeof v !== "string") return -1;
  return v.length < bound || v.length > 2 * bound ? v.length : codePointLength(v);
}

const arrayLength = (v: unknown): number => (Array.isArray(v) ? v.length : -1);

const propertyCount = (v: unknown): number => (isPlainObject(v) ? Object.keys(v).length : -1);

/** `minItems`, `maxItems`, `uniqueItems`. */
export function buildArrayAssertions(b: Builder): void {
  sizeBound(b, "minItems", arrayLength, true, "item");
  sizeBound(b, "maxItems", arrayLength, false, "item");
  if (!has(b.s, "uniqueItems")) return;
  const u = b.s.uniqueItems;
  if (typeof u !== "boolean") return b.problem("uniqueItems", "uniqueItems must be a boolean");
  const at = b.at("uniqueItems");
  if (u) b.check((v, c) => !Array.isArray(v) || v.length < 2 || allUnique(v, c, at));
}

function allUnique(v: unknown[], c: Ctx, at: string): boolean {
  const prims = new Map<unknown, number>();
  let objects: Map<string, number> | undefined;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    let first: number | undefined;
    if (typeof x !== "object" || x === null) {
      first = prims.get(x);
      if (first === undefined) prims.set(x, i);
    } else {
      const key = canonicalKey(x);
      if (key === undefined) return c.fatalError(at, "uniqueItems", "item too deep or too large to compare");
      objects ??= new Map();
      first = objects.get(key);
      if (first === undefined) objects.set(key, i);
    }
    if (first === undefined) continue;
    const msg = c.collect ? `must not contain duplicate items (${first} and ${i} are equal)` : "";
    return c.fail(at, "uniqueItems", msg);
  }
  return true;
}

function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;
}

function requireAll(v: object, names: string[], c: Ctx, at: string, k: string, msg: string): boolean {
  let ok = true;
  for (let i = 0; i < names.length; i++) {
    if (!has(v, names[i])) {
      ok = c.fail(at, k, msg, names[i]);
      if (c.stop()) break;
    }
  }
  return ok;
}

/** `required`, `dependentRequired` (and the array form of draft-07 `dependencies`),
 * `minProperties`, `maxProperties`. A required property is reported at its own path. */
export function buildObjectAssertions(b: Builder): void {
  const s = b.s;
  if (has(s, "required")) {
    const names = stringList(s.required);
    const at = b.at("required");
    const msg = "required property missing";
    if (!names) b.problem("required", "required must be an array of strings");
    else if (names.length > 0) b.check((v, c) => !isPlainObject(v) || requireAll(v, names, c, at, "required", msg));
  }
  for (const k of ["dependentRequired", "dependencies"]) {
    const deps = has(s, k) ? s[k] : {};
    if (!isPlainObject(deps)) b.problem(k, `${k} must be an object`);
    else {
      for (const prop of Object.keys(deps)) {
        // The schema form of `dependencies` is an applicator; applicator-keywords.ts builds it.
        if (k === "dependencies" && !Array.isArray(deps[prop])) continue;
        const names = stringList(deps[prop]);
        const at = b.at(k) + "/" + escapeSegment(prop);
        const msg = `required property missing (because ${preview(prop)} is present)`;
        if (!names) b.problem(k, `${k} values must be arrays of strings`);
        else b.check((v, c) => !isPlainObject(v) || !has(v, prop) || requireAll(v, names, c, at, k, msg));
      }
    }
  }
  sizeBound(b, "minProperties", propertyCount, true, "property");
  sizeBound(b, "maxProperties", propertyCount, false, "property");
}
