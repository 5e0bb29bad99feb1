/**
 * Parser of the ECMAScript patterns of JSON Schema (`pattern`, `patternProperties`) into a small
 * tree, for regex-safety.ts to judge and the matcher of pattern.ts to run. It reads only patterns the engine
 * has already compiled with the same flags, so it does not diagnose syntax errors: whatever it
 * does not expect throws, and the caller then treats the pattern as one it cannot analyse.
 * Those throws are plain Errors: compilePattern catches every one, and none reaches a caller.
 *
 * Single-character matchers (literals, classes, escapes, `.`) keep their source text: the
 * virtual machine tests one character against the engine's own RegExp of that text, so their
 * meaning is the engine's, and only the structure around them is ours.
 */

/** An approximation of a set of characters: exact below 128, and "may contain others" above. */
export interface CharSet {
  /** Bits of the ASCII characters, 32 per word. */
  readonly ascii: readonly [number, number, number, number];
  /** The set may contain a character above U+007F. */
  readonly other: boolean;
}

export type RegexNode =
  | { readonly kind: "char"; readonly src: string; readonly set: CharSet }
  | { readonly kind: "seq"; readonly items: RegexNode[] }
  | { readonly kind: "alt"; readonly alts: RegexNode[] }
  | { readonly kind: "group"; readonly body: RegexNode; readonly index: number }
  | { readonly kind: "repeat"; readonly body: RegexNode; readonly min: number; readonly max: number }
  | { readonly kind: "assert"; readonly what: "^" | "$" | "b" | "B" }
  | { readonly kind: "look"; readonly body: RegexNode; readonly behind: boolean }
  | { readonly kind: "backref"; readonly ref: number | string };

export interface ParsedRegex {
  readonly root: RegexNode;
  /** Capturing groups by number (index 0 unused), and the numbers of named ones. */
  readonly groups: RegexNode[];
  readonly names: ReadonlyMap<string, number>;
}

const bitsOf = (codes: Iterable<number>): [number, number, number, number] => {
  const a: [number, number, number, number] = [0, 0, 0, 0];
  for (const c of codes) if (c < 128) a[c >> 5] |= 1 << (c & 31);
  return a;
};
const range = (lo: number, hi: number): number[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

export const EMPTY: CharSet = { ascii: [0, 0, 0, 0], other: false };
export const ANY: CharSet = { ascii: [-1, -1, -1, -1], other: true };
const DIGIT: CharSet = { ascii: bitsOf(range(48, 57)), other: false };
const WORD: CharSet = { ascii: bitsOf([...range(48, 57), ...range(65, 90), 95, ...range(97, 122)]), other: false };
const SPACE: CharSet = { ascii: bitsOf([9, 10, 11, 12, 13, 32]), other: true };
const DOT: CharSet = { ascii: complement(bitsOf([10, 13])), other: true };

function complement(a: readonly number[]): [number, number, number, number] {
  return [~a[0], ~a[1], ~a[2], ~a[3]];
}

export function union(x: CharSet, y: CharSet): CharSet {
  const a = x.ascii;
  const b = y.ascii;
  return { ascii: [a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]], other: x.other || y.other };
}

export function overlaps(x: CharSet, y: CharSet): boolean {
  const a = x.ascii;
  const b = y.ascii;
  return (a[0] & b[0]) !== 0 || (a[1] & b[1]) !== 0 || (a[2] & b[2]) !== 0 || (a[3] & b[3]) !== 0 || (x.other && y.other);
}

const single = (code: number): CharSet => (code < 128 ? { ascii: bitsOf([code]), other: false } : { ascii: [0, 0, 0, 0], other: true });
const negated = (s: CharSet): CharSet => ({ ascii: complement(s.ascii), other: true });

/** The class escapes: `\d \D \w \W \s \S`. */
const CLASS_ESCAPES: Record<string, CharSet> = { d: DIGIT, D: negated(DIGIT), w: WORD, W: negated(WORD), s: SPACE, S: negated(SPACE) };
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

const isHex = (s: string): boolean => /^[0-9a-fA-F]+$/.test(s);
const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= "0" && ch <= "9";

/** Parses `source` as compiled with the `u` flag (`unicode`) or without flags. Throws on surprises. */
export function parseRegex(source: string, unicode: boolean): ParsedRegex {
  return new Parser(source, unicode).parse();
}

/** One character (or class) read by an escape or literal: its source, set, and code if single. */
interface CharRead {
  set: CharSet;
  /** The code point of a single character; undefined for classes like `\d`. */
  code: number | undefined;
  /** The set is exact (false for `\p{...}`, whose members are not known here). */
  exact: boolean;
}

class Parser {
  private i = 0;
  private readonly src: string;
  private readonly u: boolean;
  private readonly groupCount: number;
  private readonly hasNames: boolean;
  private readonly groups: RegexNode[] = [];
  private readonly names = new Map<string, number>();
  private nextGroup = 1;

  constructor(src: string, unicode: boolean) {
    this.src = src;
    this.u = unicode;
    const { count, named } = countGroups(src);
    this.groupCount = count;
    this.hasNames = named;
  }

  parse(): ParsedRegex {
    const root = this.disjunction();
    if (this.i !== this.src.length) throw new Error(`unexpected ${this.src[this.i]} at ${this.i}`);
    return { root, groups: this.groups, names: this.names };
  }

  private disjunction(): RegexNode {
    const alts = [this.alternative()];
    while (this.src[this.i] === "|") {
      this.i++;
      alts.push(this.alternative());
    }
    return alts.length === 1 ? alts[0] : { kind: "alt", alts };
  }

  private alternative(): RegexNode {
    const items: RegexNode[] = [];
    while (this.i < this.src.length && this.src[this.i] !== "|" && this.src[this.i] !== ")") {
      const term = this.term();
      items.push(this.quantified(term));
    }
    return items.length === 1 ? items[0] : { kind: "seq", items };
  }

  /** An assertion or an atom, before any quantifier. */
  private term(): RegexNode {
    const s = this.src;
    const ch = s[this.i];
    if (ch === "^" || ch === "$") {
      this.i++;
      return { kind: "assert", what: ch };
    }
    if (ch === "\\" && (s[this.i + 1] === "b" || s[this.i + 1] === "B")) {
      this.i += 2;
      return { kind: "assert", what: s[this.i - 1] as "b" | "B" };
    }
    if (ch === "(") return this.group();
    if (ch === "[") return this.charClass();
    if (ch === ".") {
      this.i++;
      return { kind: "char", src: ".", set: DOT };
    }
    if (ch === "\\") return this.escape();
    if (ch === "*" || ch === "+" || ch === "?" || (ch === "{" && this.u)) throw new Error(`nothing to repeat at ${this.i}`);
    const start = this.i;
    const code = this.u ? s.codePointAt(start)! : s.charCodeAt(start);
    this.i += code > 0xffff ? 2 : 1;
    return { kind: "char", src: s.slice(start, this.i), set: single(code) };
  }

  private group(): RegexNode {
    const s = this.src;
    let look: { behind: boolean } | undefined;
    let index = 0;
    if (s.startsWith("(?:", this.i)) this.i += 3;
    else if (s.startsWith("(?=", this.i) || s.startsWith("(?!", this.i)) {
      look = { behind: false };
      this.i += 3;
    } else if (s.startsWith("(?<=", this.i) || s.startsWith("(?<!", this.i)) {
      look = { behind: true };
      this.i += 4;
    } else if (s.startsWith("(?<", this.i)) {
      const end = s.indexOf(">", this.i);
      if (end < 0) throw new Error("unterminated group name");
      index = this.nextGroup++;
      this.names.set(s.slice(this.i + 3, end), index);
      this.i = end + 1;
    } else if (s.startsWith("(?", this.i)) throw new Error(`unknown group syntax at ${this.i}`);
    else {
      this.i++;
      index = this.nextGroup++;
    }
    const body = this.disjunction();
    if (s[this.i] !== ")") throw new Error("unterminated group");
    this.i++;
    if (look) return { kind: "look", body, behind: look.behind };
    const node: RegexNode = { kind: "group", body, index };
    if (index > 0) this.groups[index] = node;
    return node;
  }

  /** A quantifier after `atom`, if any. Lazy quantifiers match the same strings. */
  private quantified(atom: RegexNode): RegexNode {
    const s = this.src;
    let min: number;
    let max: number;
    const ch = s[this.i];
    if (ch === "*") [min, max] = [0, Infinity];
    else if (ch === "+") [min, max] = [1, Infinity];
    else if (ch === "?") [min, max] = [0, 1];
    else if (ch === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(s.slice(this.i, this.i + 400));
      if (!m) {
        if (this.u) throw new Error(`bad quantifier at ${this.i}`);
        return atom; // Annex B: a `{` that starts no quantifier is a literal, read as the next atom
      }
      min = toCount(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : toCount(m[3]);
      this.i += m[0].length - 1;
    } else return atom;
    if (atom.kind === "assert" || (atom.kind === "look" && (this.u || atom.behind))) throw new Error("quantified assertion");
    this.i++;
    if (s[this.i] === "?") this.i++;
    return { kind: "repeat", body: atom, min, max };
  }

  private escape(): RegexNode {
    const s = this.src;
    const start = this.i;
    const c = s[this.i + 1];
    if (c === undefined) throw new Error("trailing backslash");
    if (c >= "1" && c <= "9") {
      const digits = /^\d+/.exec(s.slice(this.i + 1))![0];
      if (this.u || Number(digits) <= this.groupCount) {
        this.i += 1 + digits.length;
        return { kind: "backref", ref: Number(digits) };
      }
    }
    if (c === "k" && (this.u || this.hasNames)) {
      const end = s.indexOf(">", this.i);
      if (s[this.i + 2] !== "<" || end < 0) throw new Error("bad \\k");
      this.i = end + 1;
      return { kind: "backref", ref: s.slice(start + 3, end) };
    }
    const read = this.escapeChar(false);
    // Annex B `\c` + non-letter was read as a lone backslash, which is no pattern on its own.
    const text = this.i - start === 1 ? "\\\\" : s.slice(start, this.i);
    return { kind: "char", src: text, set: read.set };
  }

  /** Moves past `length` units that read as the single character `code`. */
  private take(length: number, code: number): CharRead {
    this.i += length;
    return { set: single(code), code, exact: true };
  }

  /** Reads the escape at `this.i` (a backslash) as one character or class escape. */
  private escapeChar(inClass: boolean): CharRead {
    const s = this.src;
    const c = s[this.i + 1];
    const one = (code: number, length: number): CharRead => this.take(length, code);
    if (c === undefined) throw new Error("trailing backslash");
    const cls = CLASS_ESCAPES[c];
    if (cls) {
      this.i += 2;
      return { set: cls, code: undefined, exact: true };
    }
    if ((c === "p" || c === "P") && this.u) {
      const end = s.indexOf("}", this.i);
      if (s[this.i + 2] !== "{" || end < 0) throw new Error("bad property escape");
      this.i = end + 1;
      return { set: ANY, code: undefined, exact: false };
    }
    if (CONTROL_ESCAPES[c] !== undefined) return one(CONTROL_ESCAPES[c], 2);
    if (c === "b" && inClass) return one(8, 2);
    if (c === "c") {
      const letter = s[this.i + 2];
      if (letter !== undefined && /[A-Za-z]/.test(letter)) return one(letter.charCodeAt(0) % 32, 3);
      if (this.u) throw new Error("bad \\c");
      // Annex B: outside a class `\c` is a literal backslash (the `c` is read next).
      return one(92, 1);
    }
    if (c === "x") {
      const hex = s.slice(this.i + 2, this.i + 4);
      if (hex.length === 2 && isHex(hex)) return one(parseInt(hex, 16), 4);
      if (this.u) throw new Error("bad \\x");
      return one(120, 2);
    }
    if (c === "u") return this.unicodeEscape();
    if (c === "0" && !isDigit(s[this.i + 2])) return one(0, 2);
    if (c >= "0" && c <= "7" && !this.u) {
      // Annex B legacy octal: up to three digits, at most 0o377.
      const digits = /^[0-7]{1,3}/.exec(s.slice(this.i + 1))![0];
      const use = parseInt(digits, 8) > 0o377 ? digits.slice(0, 2) : digits;
      return one(parseInt(use, 8), 1 + use.length);
    }
    if (this.u && /[0-9]/.test(c)) throw new Error("bad escape");
    const code = this.u ? s.codePointAt(this.i + 1)! : s.charCodeAt(this.i + 1);
    return one(code, code > 0xffff ? 3 : 2);
  }

  private unicodeEscape(): CharRead {
    const s = this.src;
    const read = (code: number, length: number): CharRead => this.take(length, code);
    if (this.u && s[this.i + 2] === "{") {
      const end = s.indexOf("}", this.i);
      const hex = s.slice(this.i + 3, end);
      if (end < 0 || !isHex(hex)) throw new Error("bad \\u{}");
      return read(parseInt(hex, 16), end + 1 - this.i);
    }
    const hex = s.slice(this.i + 2, this.i + 6);
    if (hex.length !== 4 || !isHex(hex)) {
      if (this.u) throw new Error("bad \\u");
      return read(117, 2);
    }
    const code = parseInt(hex, 16);
    // With the u flag, an escaped surrogate pair is one character.
    if (this.u && code >= 0xd800 && code <= 0xdbff && s.startsWith("\\u", this.i + 6)) {
      const low = s.slice(this.i + 8, this.i + 12);
      const lo = low.length === 4 && isHex(low) ? parseInt(low, 16) : 0;
      if (lo >= 0xdc00 && lo <= 0xdfff) return read(0x10000 + ((code - 0xd800) << 10) + (lo - 0xdc00), 12);
    }
    return read(code, 6);
  }

  private charClass(): RegexNode {
    const s = this.src;
    const start = this.i;
    this.i++;
    const negate = s[this.i] === "^";
    if (negate) this.i++;
    let set = EMPTY;
    let exact = true;
    while (s[this.i] !== "]") {
      if (this.i >= s.length) throw new Error("unterminated class");
      const lo = this.classAtom();
      if (s[this.i] === "-" && s[this.i + 1] !== "]" && this.i + 1 < s.length) {
        this.i++;
        const hi = this.classAtom();
        if (lo.code !== undefined && hi.code !== undefined) {
          const top = Math.min(hi.code, 127);
          set = union(set, { ascii: bitsOf(range(lo.code, Math.max(lo.code - 1, top))), other: hi.code > 127 });
          continue;
        }
        if (this.u) throw new Error("class escape in a range");
        // Annex B: `[\d-x]` is `\d`, `-` and `x`.
        set = union(union(union(set, lo.set), hi.set), single(45));
        exact &&= lo.exact && hi.exact;
        continue;
      }
      set = union(set, lo.set);
      exact &&= lo.exact;
    }
    this.i++;
    if (negate) set = exact ? negated(set) : ANY;
    return { kind: "char", src: s.slice(start, this.i), set };
  }

  private classAtom(): CharRead {
    const s = this.src;
    if (s[this.i] === "\\") {
      // Inside a class `\-` is a dash with the u flag. Annex B: `\c` + digit or `_` is a
      // control, `\c` otherwise a backslash (the `c` is read next); `\k`, `\8`, `\9` are themselves.
      const d = s[this.i + 1];
      if (d === "-") return this.take(2, 45);
      if (!this.u && d === "c") return /[0-9_]/.test(s[this.i + 2] ?? "") ? this.take(3, s.charCodeAt(this.i + 2) % 32) : this.take(1, 92);
      if (!this.u && (d === "k" || d === "8" || d === "9")) return this.take(2, d.charCodeAt(0));
      return this.escapeChar(true);
    }
    const code = this.u ? s.codePointAt(this.i)! : s.charCodeAt(this.i);
    return this.take(code > 0xffff ? 2 : 1, code);
  }
}

/** Counts `{1,1000000000}`-style numbers; beyond a billion is as good as unbounded here. */
function toCount(digits: string): number {
  const n = Number(digits);
  return n > 1e9 ? Infinity : n;
}

/** How many capturing groups `src` has, and whether any is named (decides `\1` and `\k`). */
function countGroups(src: string): { count: number; named: boolean } {
  let count = 0;
  let named = false;
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i];
    if (ch === "\\") i++;
    else if (inClass) inClass = ch !== "]";
    else if (ch === "[") inClass = true;
    else if (ch === "(") {
      if (src[i + 1] !== "?") count++;
      else if (src[i + 2] === "<" && src[i + 3] !== "=" && src[i + 3] !== "!") {
        count++;
        named = true;
      }
    }
  }
  return { count, named };
}
