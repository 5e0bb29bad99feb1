/**
 * Value helpers of the assertion keywords, each bounded whatever the value: string length in
 * code points, exact `multipleOf`, canonical keys for `enum`/`const`/`uniqueItems`, and a set of
 * strings that stays fast with many long strings.
 */
import { COST, LONG_STRING, MAX_DEPTH } from "./runtime.ts";
import type { Ctx } from "./runtime.ts";

/** Steps a comparison key for `enum` or `const` may take at compile time. */
const KEY_BUDGET = 4_000_000;

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

/** A finite number as an exact decimal, `digits × 10^exp`, read from its shortest printed form
 * (the form JSON text carries: 0.1 is 1 × 10^-1, not the binary fraction nearest to it).
 * `digits` has no leading or trailing zeros (trailing ones go into `exp`). */
export interface Decimal {
  digits: string;
  exp: number;
}

export function toDecimal(x: number): Decimal {
  const s = String(Math.abs(x)); // "123.45", "1.5e-7", "1e+308", "5e-324", "0.001"
  const e = s.indexOf("e");
  const end = e < 0 ? s.length : e;
  const dot = s.indexOf(".");
  let exp = e < 0 ? 0 : Number(s.slice(e + 1));
  let digits = dot < 0 || dot > end ? s.slice(0, end) : s.slice(0, dot) + s.slice(dot + 1, end);
  if (dot >= 0 && dot < end) exp -= end - dot - 1;
  let lead = 0;
  while (lead < digits.length - 1 && digits.charCodeAt(lead) === 48) lead++;
  let last = digits.length;
  while (last > lead + 1 && digits.charCodeAt(last - 1) === 48) last--;
  exp += digits.length - last;
  digits = digits.slice(lead, last);
  return { digits, exp };
}

/**
 * Whether `v` is an integer multiple of `m` (> 0), exactly, in decimal terms: 0.3 is a multiple
 * of 0.1, 1 of 5e-324 and 1e308 of 1e-308, though no quotient of theirs is an integer in binary
 * floating point. `md` is `toDecimal(m)`, computed once per schema. With `c`, the work is paid
 * from its steps (false once they are spent: the pass is then aborted anyway).
 */
export function isMultipleOf(v: number, m: number, md: Decimal, c?: Ctx): boolean {
  if (v === 0) return true;
  if (Number.isSafeInteger(v) && Number.isSafeInteger(m)) return v % m === 0;
  // A non-integer double prints as a non-integer, and an integer m only divides integers.
  if (md.exp >= 0 && !Number.isInteger(v)) return false;
  if (md.exp < 0 && md.exp >= -22 && md.digits.length <= 15) {
    // m = b / 10^k. If t / 10^k (t an integer below 2^52; both exact, the division correctly
    // rounded) gives v, then v prints as t / 10^k: two decimals with at most k places cannot
    // both round to v when v's neighbours are closer than 10^-k, as they are below 2^52 / 10^k.
    const p = 10 ** -md.exp;
    const t = Math.round(v * p);
    if (Math.abs(t) < 2 ** 52 && t / p === v) return t % Number(md.digits) === 0;
  }
  if (c && !c.charge(COST.item)) return false;
  const vd = toDecimal(v);
  // v / m = (vd.digits / md.digits) × 10^shift, and the exponents of doubles keep |shift| < 700.
  const shift = vd.exp - md.exp;
  const up = Math.max(shift, 0);
  const down = Math.max(-shift, 0);
  if (vd.digits.length + up <= 15 && md.digits.length + down <= 15) {
    // Both sides are integers below 10^15, so double arithmetic is exact.
    return (Number(vd.digits) * 10 ** up) % (Number(md.digits) * 10 ** down) === 0;
  }
  if (c && !c.charge(COST.bigDecimal)) return false;
  return (BigInt(vd.digits) * 10n ** BigInt(up)) % (BigInt(md.digits) * 10n ** BigInt(down)) === 0n;
}

/**
 * A string equal for JSON-equal values (object key order ignored, 1 equals 1.0), or undefined
 * when the value is too deep or too large to compare, or null when the key would be longer than
 * `limit` (so the value equals none of the keys it is compared with). With `c`, the work is
 * paid from its steps; out of steps, `c` is aborted and the key is undefined.
 */
export function canonicalKey(v: unknown, c?: Ctx, limit = Infinity): string | null | undefined {
  const state: KeyState = { steps: c ? c.steps : KEY_BUDGET, limit, over: false };
  const key = keyOf(v, 0, state);
  if (c !== undefined) {
    c.steps = state.steps;
    if (state.steps < 0) {
      c.outOfSteps();
      return undefined;
    }
  }
  return state.over ? null : key;
}

interface KeyState {
  steps: number;
  readonly limit: number;
  over: boolean;
}

function keyOf(v: unknown, depth: number, state: KeyState): string | undefined {
  if ((state.steps -= COST.keyValue) < 0) return undefined;
  if (typeof v === "string") {
    state.steps -= Math.floor(v.length / COST.charsPerStep);
    return JSON.stringify(v);
  }
  if (typeof v === "number" || typeof v === "boolean" || v == null) return String(v);
  if (typeof v !== "object") return typeof v; // not JSON: bigint, symbol, function
  if (depth >= MAX_DEPTH) return undefined;
  const o = v as Record<string, unknown>;
  const keys = Array.isArray(v) ? null : Object.keys(o).sort();
  const n = keys ? keys.length : (v as unknown[]).length;
  if (keys) state.steps -= keys.length * COST.key;
  let s = keys ? "{" : "[";
  for (let i = 0; i < n; i++) {
    const k = keyOf(keys ? o[keys[i]] : o[i], depth + 1, state);
    if (k === undefined) return undefined;
    s += (i === 0 ? "" : ",") + (keys ? JSON.stringify(keys[i]) + ":" : "") + k;
    if (s.length > state.limit) {
      state.over = true;
      return undefined;
    }
  }
  return s + (keys ? "}" : "]");
}

/**
 * A set of strings that stays fast when it holds many long strings. V8 hashes a string longer
 * than 16383 units by its length alone, so in a plain Set such strings of one length would be
 * compared with each other on every lookup; here long strings are kept sorted and found by
 * halving (each comparison stops at the first difference).
 */
export class StringSet {
  private readonly short = new Set<string>();
  private readonly long: string[] = [];
  private sorted = true;

  add(s: string): void {
    if (s.length <= LONG_STRING) this.short.add(s);
    else {
      this.long.push(s);
      this.sorted = false;
    }
  }

  has(s: string): boolean {
    if (s.length <= LONG_STRING) return this.short.has(s);
    const long = this.long;
    if (!this.sorted) {
      long.sort();
      this.sorted = true;
    }
    let lo = 0;
    let hi = long.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (long[mid] < s) lo = mid + 1;
      else hi = mid;
    }
    return lo < long.length && long[lo] === s;
  }
}

/**
 * The first pair of equal long strings among `entries` ([string, index] in index order), as
 * the indices `[first, second]` with the smallest second index; undefined if all differ. Sorts
 * instead of hashing, for the reason given at {@link StringSet}.
 */
export function firstDuplicate(entries: Array<[string, number]>): [number, number] | undefined {
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  let best: [number, number] | undefined;
  let run = 0; // where the run of equal strings that entries[i] belongs to starts
  for (let i = 1; i < entries.length; i++) {
    if (entries[i][0] !== entries[i - 1][0]) run = i;
    else if (best === undefined || entries[i][1] < best[1]) best = [entries[run][1], entries[i][1]];
  }
  return best;
}
