/**
 * A JSON Schema pattern as the validator runs it. Schemas come from servers, so a pattern is
 * judged when the schema is compiled (regex-safety.ts): one that cannot backtrack badly runs on
 * V8's RegExp; a risky one runs on the matcher below, in linear time and under the validation
 * budget; a risky one that needs lookarounds or back-references is not run at all ("could not
 * validate"). See docs/decisions.md 54.
 *
 * The matcher is a Thompson NFA ("Pike VM"): it answers what `RegExp.prototype.test` would, in
 * time linear in the string times the program's size, and pays for each step from the budget.
 * Only the structure is ours: each single-character matcher (literal, class, escape, `.`) is
 * tested with V8's own RegExp of its source text, so `\p{L}` or `[^\s]` mean what they mean to
 * the engine.
 *
 * The plain Errors thrown while building a program ("too big", an unsupported node) never
 * leave this file: `test` catches them and the pattern is then not run.
 */
import { parseRegex, type ParsedRegex, type RegexNode } from "./regex-parse.ts";
import { backtrackRisk, needsBacktracking } from "./regex-safety.ts";
import { COST, preview } from "./runtime.ts";

/** What the matcher pays its steps from: `charge` returns false once the budget is spent. */
export interface Budget {
  charge(steps: number): boolean;
}

/** Instructions at most in one program; counted repetitions (`x{2,50}`) are unrolled. */
const MAX_PROGRAM = 10_000;

const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;
const ASSERTIONS = ["^", "$", "b", "B"] as const;

/** Results of one single-character matcher, cached: 0 unknown, 1 matches, 2 does not. */
class Atom {
  private re: RegExp | undefined;
  private readonly ascii = new Uint8Array(128);
  private others: Map<number, boolean> | undefined;
  private readonly src: string;
  private readonly flags: string;

  constructor(src: string, flags: string) {
    this.src = src;
    this.flags = flags;
  }

  test(code: number): boolean {
    if (code < 128 && this.ascii[code] !== 0) return this.ascii[code] === 1;
    const known = this.others?.get(code);
    if (known !== undefined) return known;
    this.re ??= new RegExp("^(?:" + this.src + ")$", this.flags);
    const r = this.re.test(String.fromCodePoint(code));
    if (code < 128) this.ascii[code] = r ? 1 : 2;
    else if ((this.others ??= new Map()).size < 1024) this.others.set(code, r);
    return r;
  }
}

/** A compiled program: parallel arrays of opcode and two operands per instruction. */
export class RegexProgram {
  private readonly op: number[] = [];
  private readonly x: number[] = [];
  private readonly y: number[] = [];
  private readonly atoms: Atom[] = [];
  private readonly atomIndex = new Map<string, number>();
  private readonly unicode: boolean;

  /** Compiles `root` (parsed with the `u` flag when `unicode`). Throws when it cannot. */
  constructor(root: RegexNode, unicode: boolean) {
    this.unicode = unicode;
    this.emit(root);
    this.push(MATCH, 0, 0);
  }

  private push(op: number, x: number, y: number): number {
    if (this.op.length >= MAX_PROGRAM) throw new Error(`pattern needs more than ${MAX_PROGRAM} instructions`);
    this.op.push(op);
    this.x.push(x);
    this.y.push(y);
    return this.op.length - 1;
  }

  private emit(node: RegexNode): void {
    switch (node.kind) {
      case "char": {
        let k = this.atomIndex.get(node.src);
        if (k === undefined) {
          k = this.atoms.push(new Atom(node.src, this.unicode ? "u" : "")) - 1;
          this.atomIndex.set(node.src, k);
        }
        this.push(CHAR, k, 0);
        return;
      }
      case "seq":
        for (const item of node.items) this.emit(item);
        return;
      case "group":
        return this.emit(node.body);
      case "assert":
        this.push(ASSERT, ASSERTIONS.indexOf(node.what), 0);
        return;
      case "alt": {
        const jumps: number[] = [];
        for (let k = 0; k < node.alts.length - 1; k++) {
          const split = this.push(SPLIT, this.op.length + 1, 0);
          this.emit(node.alts[k]);
          jumps.push(this.push(JMP, 0, 0));
          this.y[split] = this.op.length;
        }
        this.emit(node.alts[node.alts.length - 1]);
        for (const j of jumps) this.x[j] = this.op.length;
        return;
      }
      case "repeat":
        return this.repeat(node.body, node.min, node.max);
      default:
        throw new Error(`${node.kind} is not supported`);
    }
  }

  private repeat(body: RegexNode, min: number, max: number): void {
    for (let k = 0; k < min; k++) {
      const before = this.op.length;
      this.emit(body);
      if (this.op.length === before) return; // an empty body: repeating it adds nothing
    }
    if (max === Infinity) {
      const loop = this.push(SPLIT, this.op.length + 1, 0);
      this.emit(body);
      this.push(JMP, loop, 0);
      this.y[loop] = this.op.length;
      return;
    }
    const exits: number[] = [];
    for (let k = min; k < max; k++) {
      exits.push(this.push(SPLIT, this.op.length + 1, 0));
      this.emit(body);
    }
    for (const e of exits) this.y[e] = this.op.length;
  }

  /**
   * Whether `s` has a match anywhere, as `RegExp.prototype.test`; undefined when `budget` ran
   * out first. Each character costs `COST.thread` per instruction its threads went through.
   */
  test(s: string, budget: Budget): boolean | undefined {
    const { op, x, y, atoms } = this;
    const size = op.length;
    const n = s.length;
    let list = new Int32Array(size);
    let next = new Int32Array(size);
    const mark = new Int32Array(size).fill(-1);
    const stack: number[] = [];
    let gen = 0;
    let matched = false;
    let work = 0; // instructions visited since the last charge
    const isWord = (i: number): boolean => {
      if (i < 0 || i >= n) return false;
      const c = s.charCodeAt(i);
      return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95 || (c >= 97 && c <= 122);
    };
    const holds = (what: number, pos: number): boolean => {
      if (what === 0) return pos === 0;
      if (what === 1) return pos === n;
      return (isWord(pos - 1) !== isWord(pos)) === (what === 2);
    };
    /** Adds the thread at `start` and all it reaches without consuming; returns the new length. */
    const add = (into: Int32Array, length: number, start: number, pos: number): number => {
      stack.push(start);
      while (stack.length > 0) {
        const pc = stack.pop()!;
        if (mark[pc] === gen) continue;
        mark[pc] = gen;
        work++;
        const o = op[pc];
        if (o === CHAR) into[length++] = pc;
        else if (o === JMP) stack.push(x[pc]);
        else if (o === SPLIT) stack.push(y[pc], x[pc]);
        else if (o === ASSERT) {
          if (holds(x[pc], pos)) stack.push(pc + 1);
        } else matched = true;
      }
      return length;
    };
    let count = add(list, 0, 0, 0);
    for (let pos = 0; !matched && pos < n; ) {
      const code = this.unicode ? s.codePointAt(pos)! : s.charCodeAt(pos);
      const after = pos + (code > 0xffff ? 2 : 1);
      if (!budget.charge((1 + work) * COST.thread)) return undefined;
      work = 0;
      gen++;
      let nextCount = 0;
      for (let k = 0; k < count; k++) {
        const pc = list[k];
        if (atoms[x[pc]].test(code)) nextCount = add(next, nextCount, pc + 1, after);
      }
      // A match may also start at the next position (the search is unanchored).
      nextCount = add(next, nextCount, 0, after);
      [list, next] = [next, list];
      count = nextCount;
      pos = after;
    }
    return matched;
  }
}

export interface Pattern {
  readonly source: string;
  /** Why the pattern does not run on V8's RegExp (it may backtrack catastrophically), if so. */
  readonly risk: string | undefined;
  /** Whether `s` matches (anywhere, as `RegExp.prototype.test`); undefined when the budget ran
   * out or the pattern cannot be run safely. Never throws. */
  test(s: string, budget: Budget): boolean | undefined;
}

/**
 * Compiles `source` with the `u` flag, or without it for patterns written for other engines
 * (identity escapes like `\-`, which the `u` flag rejects). Returns the engine's message for a
 * pattern that compiles neither way.
 */
export function compilePattern(source: string): Pattern | string {
  let re: RegExp;
  let unicode = true;
  try {
    re = new RegExp(source, "u");
  } catch {
    try {
      re = new RegExp(source);
      unicode = false;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
  let parsed: ParsedRegex | undefined;
  let risk: string | undefined;
  try {
    parsed = parseRegex(source, unicode);
    risk = backtrackRisk(parsed);
  } catch {
    risk = "it uses syntax the pattern checker does not know";
  }
  if (risk === undefined) return nativePattern(source, re);
  const root = parsed !== undefined && !needsBacktracking(parsed.root) ? parsed.root : undefined;
  let program: RegexProgram | null | undefined; // built on first use; null: cannot be
  return {
    source,
    risk,
    test(s, budget) {
      if (program === undefined) {
        try {
          program = root ? new RegexProgram(root, unicode) : null;
        } catch {
          program = null; // too big
        }
      }
      return program === null ? undefined : program.test(s, budget);
    },
  };
}

/** The message of a pattern that could not be run safely ({@link Pattern.test} gave undefined
 * with steps left). */
export function notRunMessage(p: Pattern): string {
  return `could not validate: pattern ${preview(p.source)} may backtrack catastrophically (${p.risk}) and cannot be run in linear time`;
}

function nativePattern(source: string, re: RegExp): Pattern {
  return {
    source,
    risk: undefined,
    test(s, budget) {
      if (!budget.charge(1 + Math.floor(s.length / COST.charsPerStep))) return undefined;
      try {
        return re.test(s);
      } catch {
        return undefined; // V8 may refuse a huge pattern at its first run ("too large")
      }
    },
  };
}
