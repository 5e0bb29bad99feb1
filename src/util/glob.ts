/**
 * Glob matching for tool-name allow/deny lists and resource URI filters.
 *
 * Syntax (whole-string match, case-sensitive, per Unicode code point):
 * - `*` any run of characters, including none and including `/` (names and URIs are matched
 *   as flat strings; `**` means the same as `*`);
 * - `?` exactly one character;
 * - `[abc]`, `[a-z]`, `[!a-z]` or `[^a-z]` one character in (or not in) the set; a `]` right
 *   after the opening `[` (or `[!`) is a member; an unterminated `[` is a literal `[`;
 * - `\x` the character `x` literally, inside or outside a set.
 *
 * Patterns compile to a token list walked by a small matcher; no RegExp is ever built from a
 * pattern, so no input can inject regex syntax or trigger catastrophic backtracking. Matching
 * is O(pattern × input) in the worst case.
 */

/** Decides whether a whole string matches. */
export type GlobMatcher = (input: string) => boolean;

type Range = { lo: number; hi: number };

type CharToken = { kind: "char"; cp: number };

type Token =
  | CharToken
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "set"; negated: boolean; ranges: Range[] };

/** Compiles one pattern. Never throws: malformed syntax is read literally. */
export function compileGlob(pattern: string): GlobMatcher {
  const tokens = tokenize(pattern);
  if (tokens.length === 1 && tokens[0]!.kind === "star") return () => true;
  if (tokens.every((t): t is CharToken => t.kind === "char")) {
    const literal = tokens.map((t) => String.fromCodePoint(t.cp)).join("");
    return (input) => input === literal;
  }
  return (input) => matchTokens(tokens, codePoints(input));
}

/** A matcher true when any pattern matches; an empty list matches nothing. */
export function compileGlobs(patterns: readonly string[]): GlobMatcher {
  const matchers = patterns.map(compileGlob);
  if (matchers.length === 0) return () => false;
  return (input) => matchers.some((m) => m(input));
}

function codePoints(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0)!);
  return out;
}

function tokenize(pattern: string): Token[] {
  const cps = codePoints(pattern);
  const tokens: Token[] = [];
  const BACKSLASH = 0x5c;
  let i = 0;
  while (i < cps.length) {
    const cp = cps[i]!;
    if (cp === 0x2a /* * */) {
      // Runs of stars collapse: they match exactly what one star matches.
      if (tokens.at(-1)?.kind !== "star") tokens.push({ kind: "star" });
      i++;
    } else if (cp === 0x3f /* ? */) {
      tokens.push({ kind: "any" });
      i++;
    } else if (cp === 0x5b /* [ */) {
      const parsed = parseSet(cps, i);
      if (parsed) {
        tokens.push(parsed.token);
        i = parsed.next;
      } else {
        tokens.push({ kind: "char", cp });
        i++;
      }
    } else if (cp === BACKSLASH && i + 1 < cps.length) {
      tokens.push({ kind: "char", cp: cps[i + 1]! });
      i += 2;
    } else {
      tokens.push({ kind: "char", cp });
      i++;
    }
  }
  return tokens;
}

/** Parses `[...]` starting at `start`; undefined when there is no closing `]`. */
function parseSet(cps: readonly number[], start: number): { token: Token; next: number } | undefined {
  let i = start + 1;
  let negated = false;
  if (cps[i] === 0x21 /* ! */ || cps[i] === 0x5e /* ^ */) {
    negated = true;
    i++;
  }
  const ranges: Range[] = [];
  let first = true;
  while (i < cps.length) {
    let cp = cps[i]!;
    if (cp === 0x5d /* ] */ && !first) return { token: { kind: "set", negated, ranges }, next: i + 1 };
    first = false;
    if (cp === 0x5c /* \ */ && i + 1 < cps.length) cp = cps[++i]!;
    i++;
    // `a-z` is a range unless the `-` is last in the set (`[a-]` holds `a` and `-`).
    if (cps[i] === 0x2d /* - */ && i + 1 < cps.length && cps[i + 1] !== 0x5d) {
      let hi = cps[i + 1]!;
      i += 2;
      if (hi === 0x5c && i < cps.length) hi = cps[i++]!;
      if (hi >= cp) ranges.push({ lo: cp, hi });
      // A reversed range (`[z-a]`) matches nothing, as in POSIX shells.
    } else {
      ranges.push({ lo: cp, hi: cp });
    }
  }
  return undefined;
}

function matchOne(token: Token, cp: number): boolean {
  switch (token.kind) {
    case "char":
      return token.cp === cp;
    case "any":
      return true;
    case "set": {
      const inSet = token.ranges.some((r) => cp >= r.lo && cp <= r.hi);
      return inSet !== token.negated;
    }
    case "star":
      return false;
  }
}

/**
 * The classic wildcard walk: every token but `*` consumes exactly one character, so on a
 * mismatch it is enough to retry from the most recent `*` with one more character swallowed.
 */
function matchTokens(tokens: readonly Token[], input: readonly number[]): boolean {
  let t = 0;
  let s = 0;
  let starT = -1;
  let starS = 0;
  while (s < input.length) {
    const token = tokens[t];
    if (token !== undefined && token.kind === "star") {
      starT = t++;
      starS = s;
    } else if (token !== undefined && matchOne(token, input[s]!)) {
      t++;
      s++;
    } else if (starT >= 0) {
      t = starT + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (t < tokens.length && tokens[t]!.kind === "star") t++;
  return t === tokens.length;
}
