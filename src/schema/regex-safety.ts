/**
 * Decides, when a schema is compiled, whether a pattern is safe for a backtracking engine such
 * as V8's: whether `RegExp.prototype.test` can take more than time linear in the string. A risky
 * pattern runs on the matcher of pattern.ts instead (linear time, under the validation budget).
 *
 * The judgement is conservative and structural, on the tree of regex-parse.ts with character
 * sets exact for ASCII and coarse above it. It flags:
 * - nested quantifiers: a repeated part that can match the empty string, or that has a variable
 *   length and no delimiter (a character at its start or end that nothing else in it matches),
 *   as in `(a+)+`, `(\w+\s?)*`, `(a?){30}`;
 * - overlapping alternation: alternatives that can start with the same character, under a
 *   repetition (`(a|ab)*`), or so many of them in sequence that the paths multiply;
 * - polynomial backtracking: two long quantified parts that can match the same characters with
 *   nothing between them to pin the first one's end (`\d+\.?\d*x`, `.*a.*b`), the implicit
 *   `.*?` in front of an unanchored pattern counting as the first (`\s+$`, `a+b`);
 * - lookarounds with a long body that run at many positions.
 * A false alarm costs speed (the VM is slower than V8 on short strings), never correctness.
 */
import { ANY, overlaps, union, EMPTY, type CharSet, type ParsedRegex, type RegexNode } from "./regex-parse.ts";

/** A quantified part that can match more than this many characters counts as long. */
const LONG = 16;
/** Paths through overlapping choices in sequence, at most, before a pattern counts as risky. */
const MAX_PATHS = 64;
/** Long parts in one sequence, at most, before a pattern counts as risky without a closer look. */
const MAX_LONG_ITEMS = 64;

interface Info {
  min: number;
  max: number;
  /** Every character the part can consume. */
  chars: CharSet;
  /** The characters a non-empty match can start with. */
  first: CharSet;
}

const NONE: Info = { min: 0, max: 0, chars: EMPTY, first: EMPTY };

/** Why `parsed` may make a backtracking engine work super-linearly, or undefined when it cannot. */
export function backtrackRisk(parsed: ParsedRegex): string | undefined {
  return new Analysis(parsed).run();
}

class Analysis {
  private readonly infos = new Map<RegexNode, Info>();
  private readonly parsed: ParsedRegex;
  private paths = 1;
  private risk: string | undefined;
  private anchoredEverywhere = true;

  constructor(parsed: ParsedRegex) {
    this.parsed = parsed;
  }

  run(): string | undefined {
    const root = this.parsed.root;
    const tops = root.kind === "alt" ? root.alts : [root];
    this.anchoredEverywhere = tops.every((t) => startsAnchored(flatten(t)));
    if (root.kind === "alt") this.alternation(root, false);
    for (const t of tops) this.sequence(t, false, true);
    return this.risk;
  }

  private flag(why: string): void {
    this.risk ??= why;
  }

  info(node: RegexNode): Info {
    let i = this.infos.get(node);
    if (i) return i;
    // A back-reference inside its own group: assume anything.
    this.infos.set(node, { min: 0, max: Infinity, chars: ANY, first: ANY });
    i = this.compute(node);
    this.infos.set(node, i);
    return i;
  }

  private compute(node: RegexNode): Info {
    switch (node.kind) {
      case "char":
        return { min: 1, max: 1, chars: node.set, first: node.set };
      case "assert":
      case "look":
        return NONE;
      case "group":
        return this.info(node.body);
      case "backref": {
        const index = typeof node.ref === "number" ? node.ref : this.parsed.names.get(node.ref);
        const group = index === undefined ? undefined : this.parsed.groups[index];
        return group ? { ...this.info(group), min: 0 } : NONE;
      }
      case "repeat": {
        const b = this.info(node.body);
        if (node.max === 0 || b.max === 0) return NONE;
        return { min: b.min * node.min, max: b.max * node.max, chars: b.chars, first: b.first };
      }
      case "alt": {
        const all = node.alts.map((a) => this.info(a));
        return all.reduce((x, y) => ({
          min: Math.min(x.min, y.min),
          max: Math.max(x.max, y.max),
          chars: union(x.chars, y.chars),
          first: union(x.first, y.first),
        }));
      }
      case "seq": {
        let min = 0;
        let max = 0;
        let chars = EMPTY;
        let first = EMPTY;
        let open = true;
        for (const item of node.items) {
          const i = this.info(item);
          min += i.min;
          max += i.max;
          chars = union(chars, i.chars);
          if (open) first = union(first, i.first);
          open &&= i.min === 0;
        }
        return { min, max, chars, first };
      }
    }
  }

  private walk(node: RegexNode, inRepeat: boolean): void {
    switch (node.kind) {
      case "alt":
        this.alternation(node, inRepeat);
        for (const a of node.alts) this.sequence(a, inRepeat, false);
        return;
      case "group":
        if (node.body.kind === "alt") this.walk(node.body, inRepeat);
        else this.sequence(node.body, inRepeat, false);
        return;
      case "repeat":
        if (node.max > 1) this.repetition(node);
        this.sequence(node.body, inRepeat || node.max > 1, false);
        return;
      case "look":
        if (this.info(node.body).max > LONG) this.flag("a lookaround with a long quantified part, tried at many positions");
        this.sequence(node.body, inRepeat, false);
        return;
      case "seq":
        this.sequence(node, inRepeat, false);
        return;
      default:
        return;
    }
  }

  /** Checks one sequence (a top-level alternative when `top`), then walks its items. */
  private sequence(node: RegexNode, inRepeat: boolean, top: boolean): void {
    const items = flatten(node);
    this.pairs(items, top);
    let before = false;
    for (let k = 0; k < items.length; k++) {
      const item = items[k];
      const next = items[k + 1];
      // Each overlapping optional part doubles the ways to split a string (`a?a?a?aaa`).
      const i = this.info(item);
      if (next && i.min !== i.max && overlaps(i.chars, this.info(next).first)) this.multiply(2);
      // A lookaround at the start of an anchored pattern runs once per match attempt.
      if (item.kind === "look" && top && !before && !inRepeat && this.anchoredEverywhere) {
        this.sequence(item.body, false, false);
      } else this.walk(item, inRepeat);
      // Lookarounds do not backtrack once passed; a part of variable length does.
      if (i.min !== i.max) before = true;
    }
  }

  private multiply(n: number): void {
    this.paths *= n;
    if (this.paths > MAX_PATHS) this.flag("many overlapping choices in sequence");
  }

  /** `x*`, `x{2,5}`: the repeated part must split a string into iterations one way only. */
  private repetition(node: RegexNode & { kind: "repeat" }): void {
    const b = this.info(node.body);
    if (b.max === 0) return;
    if (b.min === 0) return this.flag("a repeated part that can match the empty string");
    if (b.min === b.max) return;
    const items = flatten(node.body);
    const delimits = (d: RegexNode | undefined, rest: RegexNode[]): boolean =>
      d !== undefined && d.kind === "char" && rest.every((r) => !overlaps(d.set, this.info(r).chars));
    if (delimits(items[0], items.slice(1)) || delimits(items.at(-1), items.slice(0, -1))) return;
    this.flag("nested quantifiers: a repeated part of variable length without a delimiter");
  }

  private alternation(node: RegexNode & { kind: "alt" }, inRepeat: boolean): void {
    const firsts = node.alts.map((a) => this.info(a).first);
    let overlapping = 0;
    for (let a = 0; a < firsts.length; a++) {
      if (firsts.some((f, b) => b !== a && overlaps(f, firsts[a]))) overlapping++;
    }
    if (overlapping === 0) return;
    if (inRepeat) this.flag("repeated alternatives that can start with the same character");
    else this.multiply(overlapping);
  }

  /** Polynomial backtracking between two long parts of one sequence. */
  private pairs(items: RegexNode[], top: boolean): void {
    const long: number[] = [];
    for (let k = 0; k < items.length; k++) if (this.info(items[k]).max > LONG) long.push(k);
    if (long.length > MAX_LONG_ITEMS) return this.flag("too many long quantified parts to judge");
    // An unanchored pattern is tried at every start: as if `[^]*?` stood in front of it.
    if (top && !startsAnchored(items)) {
      for (const j of long) if (this.pinless(undefined, ANY, items.slice(0, j), items[j], items.slice(j + 1), top)) return;
    }
    for (let a = 0; a < long.length; a++) {
      for (let b = a + 1; b < long.length; b++) {
        const x = items[long[a]];
        const between = items.slice(long[a] + 1, long[b]);
        if (this.pinless(x, this.info(x).chars, between, items[long[b]], items.slice(long[b] + 1), top)) return;
      }
    }
  }

  /** Flags and returns true when what `x` gives back can be taken by `y` with nothing pinning `x`'s end. */
  private pinless(x: RegexNode | undefined, xChars: CharSet, between: RegexNode[], y: RegexNode, after: RegexNode[], top: boolean): boolean {
    const yi = this.info(y);
    if (!overlaps(yi.first, xChars)) return false;
    for (const s of between) {
      const si = this.info(s);
      if (si.min > 0 && (!overlaps(si.first, xChars) || !overlaps(si.first, yi.chars))) return false;
    }
    // A repeated part that must contain a character `y` cannot match gives back whole iterations.
    if (x?.kind === "repeat") {
      const must = flatten(x.body).filter((d) => d.kind === "char");
      if (must.some((d) => d.kind === "char" && !overlaps(d.set, yi.chars))) return false;
    }
    // At the end of the whole pattern, a `y` that repeats a short part succeeds (or fails)
    // within its first few iterations: nothing backtracks over a long stretch.
    const part = y.kind === "repeat" ? this.info(y.body).max : Infinity;
    const simple = y.kind === "repeat" && part <= LONG && y.min * part <= LONG;
    if (top && simple && !after.some((n) => this.info(n).min > 0 || hasAssertion(n))) return false;
    this.flag("two long quantified parts can match the same characters, one after the other");
    return true;
  }
}

/** The items of a sequence, with plain groups (no alternation) opened in place. */
function flatten(node: RegexNode): RegexNode[] {
  if (node.kind === "seq") return node.items.flatMap(flatten);
  if (node.kind === "group" && node.body.kind !== "alt") return flatten(node.body);
  return [node];
}

function startsAnchored(items: RegexNode[]): boolean {
  const first = items[0];
  return first !== undefined && first.kind === "assert" && first.what === "^";
}

/** Whether `test` holds for `node` or any node inside it. */
function someNode(node: RegexNode, test: (n: RegexNode) => boolean): boolean {
  if (test(node)) return true;
  switch (node.kind) {
    case "group":
    case "repeat":
    case "look":
      return someNode(node.body, test);
    case "seq":
      return node.items.some((n) => someNode(n, test));
    case "alt":
      return node.alts.some((n) => someNode(n, test));
    default:
      return false;
  }
}

function hasAssertion(node: RegexNode): boolean {
  return someNode(node, (n) => n.kind === "assert" || n.kind === "look");
}

/** Whether the pattern uses a lookaround or a back-reference (the matcher of pattern.ts runs neither). */
export function needsBacktracking(node: RegexNode): boolean {
  return someNode(node, (n) => n.kind === "look" || n.kind === "backref");
}
