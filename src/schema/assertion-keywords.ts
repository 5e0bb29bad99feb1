/**
 * Builders of the assertion keywords of the JSON Schema validator: those that never look at a
 * subschema (`type`, `enum`, `const`, number and string bounds, `pattern`, array and object sizes,
 * `uniqueItems`, `required`, `dependentRequired`). Their value helpers are in values.ts.
 */
import { notRunMessage } from "./pattern.ts";
import { COST, escapeSegment, has, LONG_STRING, nonNegInt, preview, stringSteps } from "./runtime.ts";
import type { Builder, Ctx } from "./runtime.ts";
import { canonicalKey, codePointLength, firstDuplicate, isMultipleOf, StringSet, toDecimal } from "./values.ts";
import { isPlainObject } from "../util/object.ts";

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

/** Builds a membership test for `enum` / `const`: strings and other primitives by value,
 * objects by canonical key. */
function memberOf(b: Builder, k: string, values: unknown[], message: string): void {
  const prims = new Set<unknown>();
  const strings = new StringSet();
  const keys = new StringSet();
  let objects = 0;
  // A value whose key is longer than the longest key here equals none: its key is not finished.
  let longest = 0;
  for (const e of values) {
    if (typeof e === "string") strings.add(e);
    else if (typeof e !== "object" || e === null) prims.add(e);
    else {
      const key = canonicalKey(e);
      if (typeof key !== "string") return b.problem(k, `${k} value is too deep or too large`);
      keys.add(key);
      longest = Math.max(longest, key.length);
      objects++;
    }
  }
  const at = b.at(k);
  b.check((v, c) => {
    if (typeof v === "string") {
      if (v.length > LONG_STRING && !c.charge(stringSteps(v))) return false;
      return strings.has(v) || c.fail(at, k, message);
    }
    if (typeof v !== "object" || v === null) return prims.has(v) || c.fail(at, k, message);
    if (objects === 0) return c.fail(at, k, message);
    const key = canonicalKey(v, c, longest);
    if (key === undefined) return c.abort ? false : c.fatalError(at, k, "value too deep or too large to compare");
    return (key !== null && keys.has(key)) || c.fail(at, k, message);
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
  const md = toDecimal(m);
  b.check((v, c) => typeof v !== "number" || isMultipleOf(v, m, md, c) || c.fail(at, "multipleOf", msg));
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
  const stuck = notRunMessage(re);
  b.check((v, c) => {
    if (typeof v !== "string") return true;
    const r = re.test(v, c);
    if (r === undefined) return c.abort ? false : c.undecide(at, "pattern", stuck);
    return r || c.fail(at, "pattern", msg);
  });
}

/** Checks `size(v)` against the bound in keyword `k`; size -1 means the keyword does not apply. */
function sizeBound(b: Builder, k: string, size: (v: unknown, n: number, c: Ctx) => number, atLeast: boolean, what: string) {
  const n = nonNegInt(b, k);
  if (n === undefined) return;
  const at = b.at(k);
  const noun = n === 1 ? what : what === "property" ? "properties" : what + "s";
  const msg = `must have ${atLeast ? "at least" : "at most"} ${n} ${noun}`;
  b.check((v, c) => {
    const len = size(v, n, c);
    return len < 0 || (atLeast ? len >= n : len <= n) || c.fail(at, k, msg);
  });
}

/** Code points, counted only when the UTF-16 length (between 1 and 2 units per code point)
 * cannot decide the comparison with `bound`; otherwise the UTF-16 length, which compares alike. */
function stringLength(v: unknown, bound: number, c: Ctx): number {
  if (typeof v !== "string") return -1;
  if (v.length < bound || v.length > 2 * bound) return v.length;
  c.charge(stringSteps(v));
  return codePointLength(v);
}

const arrayLength = (v: unknown): number => (Array.isArray(v) ? v.length : -1);

/** Own enumerable keys. */
function propertyCount(v: unknown, _bound: number, c: Ctx): number {
  if (!isPlainObject(v)) return -1;
  const n = Object.keys(v).length;
  c.charge(n * COST.key);
  return n;
}

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

/** No two items of `v` are equal. */
function allUnique(v: unknown[], c: Ctx, at: string): boolean {
  let pair = c.uniqueness?.get(v);
  if (pair === undefined) {
    pair = firstEqualPair(v, c, at);
    if (pair === undefined) return false;
    if (v.length > 64) (c.uniqueness ??= new Map()).set(v, pair); // small ones are cheap to redo
  }
  if (pair === null) return true;
  const msg = c.collect ? `must not contain duplicate items (${pair[0]} and ${pair[1]} are equal)` : "";
  return c.fail(at, "uniqueItems", msg);
}

/** The indices of the first two equal items (by the later one), null if all differ, undefined
 * if that could not be found out (steps spent, an item too deep). Long strings and long keys are
 * compared by sorting, not hashing (see StringSet in values.ts). */
function firstEqualPair(v: unknown[], c: Ctx, at: string): [number, number] | null | undefined {
  if (!c.charge(v.length * COST.item)) return undefined;
  if (v.length > NUMBERS_SORTED_FROM && allDistinctNumbers(v)) return null;
  const prims = new Map<unknown, number>();
  let objects: Map<string, number> | undefined;
  const long: Array<[string, number]> = [];
  const longKeys: Array<[string, number]> = [];
  let pair: [number, number] | undefined;
  for (let i = 0; i < v.length && pair === undefined; i++) {
    const x = v[i];
    if (typeof x === "string" && x.length > LONG_STRING) long.push([x, i]); // paid for when sorted
    else if (typeof x !== "object" || x === null) {
      const first = prims.get(x);
      if (first === undefined) prims.set(x, i);
      else pair = [first, i];
    } else {
      const key = canonicalKey(x, c);
      if (typeof key !== "string") {
        if (!c.abort) c.fatalError(at, "uniqueItems", "item too deep or too large to compare");
        return undefined;
      }
      if (key.length > LONG_STRING) {
        longKeys.push([key, i]);
        continue;
      }
      objects ??= new Map();
      const first = objects.get(key);
      if (first === undefined) objects.set(key, i);
      else pair = [first, i];
    }
  }
  for (const entries of [long, longKeys]) {
    if (entries.length < 2) continue;
    // Sorting compares each string about log2(n) times, each comparison stopping at the first difference.
    let chars = 0;
    for (const e of entries) chars += e[0].length;
    if (!c.charge(Math.ceil(Math.log2(entries.length)) * Math.floor(chars / COST.compareCharsPerStep))) return undefined;
    const dup = firstDuplicate(entries);
    if (dup !== undefined && (pair === undefined || dup[1] < pair[1])) pair = dup;
  }
  return pair ?? null;
}

/** From this length on, an array of numbers is first checked by sorting a copy. */
const NUMBERS_SORTED_FROM = 256;

/**
 * True when every item is a number (never NaN) and no two are equal, found out by sorting a
 * Float64Array copy: a Map of 200k heap numbers costs several times as much (its rehashes and
 * their garbage). False means "not shown", so the Map above then finds the exact pair; -0 and 0
 * sort next to each other and count as equal there too.
 */
function allDistinctNumbers(v: unknown[]): boolean {
  const sorted = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "number" || x !== x) return false;
    sorted[i] = x;
  }
  sorted.sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return false;
  return true;
}

function stringList(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined;
}

function requireAll(v: object, names: string[], c: Ctx, at: string, k: string, msg: string): boolean {
  if (names.length > 8 && !c.charge(names.length * COST.lookup)) return false;
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
