/**
 * Evaluator core of the JSON Schema validator: the compiled node, the evaluation context, value
 * helpers, and the `Builder` handed to keyword builders. compiler.ts walks the schema and calls
 * the builders in assertion-keywords.ts (keywords that never look at a subschema) and
 * applicator-keywords.ts (`properties`, `anyOf`, ...); `$ref` is built by compiler.ts.
 *
 * A check is `(value, ctx) => boolean`. Evaluation runs quietly first (no error objects); only a
 * failed value is evaluated again with `ctx.collect` on, so a valid value allocates nothing.
 *
 * Work is bounded (docs/decisions.md 54): every pass has a budget of steps (one per node
 * evaluated, more for long strings, big comparisons and patterns), and the result of a node that
 * can be reached more than once (a `$ref` target) is remembered per value for the validation,
 * so `anyOf` chains over shared definitions cost their size, not 2^depth. A first pass that runs
 * out of steps, or meets a pattern it cannot run safely, ends "undecided", never in a hang.
 */
import type { Pattern } from "./pattern.ts";
import type { SchemaError } from "./validate.ts";

/** Errors reported per validation, at most. */
export const MAX_ERRORS = 100;
/** Nesting of subschema evaluation (each subschema and each `$ref` hop is one level). */
export const MAX_DEPTH = 256;
/** Steps one validation pass may take by default: tens of milliseconds of work at most. */
export const DEFAULT_MAX_STEPS = 1_000_000;
/**
 * What work costs, in steps. A step is about the time of evaluating one node (15-30 ns on a
 * 2020s x86 core); the other prices were set from measurements (the benchmark's section 10
 * prints ns per step for each kind of work) so that no kind of work costs much more per step.
 */
export const COST = {
  /** A property name looked up in an object (`required`, `properties`, `dependentRequired`). */
  lookup: 1,
  /** A key listed by `Object.keys` (slow on objects with thousands of keys). */
  key: 4,
  /** An item of `uniqueItems`; a non-integer read as a decimal for `multipleOf`. */
  item: 4,
  /** A value visited to build a comparison key (`enum`, `const`, `uniqueItems` of objects). */
  keyValue: 6,
  /** Characters scanned per step (code points, a safe RegExp's scan, a key's string). */
  charsPerStep: 8,
  /** Characters compared per step (sorting long strings: memcmp-like, faster than a scan). */
  compareCharsPerStep: 256,
  /** An instruction of the matcher of pattern.ts run at one position of the string. */
  thread: 1,
  /** An exact `multipleOf` on big integers (a non-integer, or an extreme ratio). */
  bigDecimal: 32,
  /** A result remembered for a shared node (a Map that grows with the values seen). */
  remember: 4,
  /** A `$ref` hop (with its check for a cycle), on top of the target's own step. */
  ref: 1,
} as const;

/** Strings longer than this are not remembered: V8 hashes a string longer than 16383 units by
 * its length alone, so many long strings in one Map would be compared with each other. */
export const LONG_STRING = 1024;

export type Check = (value: unknown, ctx: Ctx) => boolean;

/** One compiled schema location. `bool` is set for the boolean schemas `true` and `false`. */
export interface Node {
  readonly path: string;
  readonly checks: Check[];
  readonly bool?: boolean;
  /** Reachable from more than one place (a `$ref` target): results are remembered per value. */
  shared?: boolean;
}

/** State of one validation. Reused between calls of a compiled validator when not re-entered. */
export class Ctx {
  /** Second pass: error objects are built for the caller. */
  report = false;
  /** Errors wanted here: false inside quiet sub-evaluations (`not`, `if`, anyOf branches). */
  collect = false;
  errors: SchemaError[] = [];
  /** A schema problem, bad `$ref`, `$ref` cycle or depth overflow was met: the result is invalid
   * whatever combinator it sat under, so `not` cannot turn a broken schema into a pass. */
  fatal = false;
  /** Every further check fails at once: depth overflow, steps spent, or (first pass) a verdict
   * that can no longer change (a schema problem, or a pattern that cannot be run). */
  abort = false;
  depth = 0;
  busy = false;
  /** Steps left in this pass. */
  steps = 0;
  /** First pass only: why it stopped without a verdict (steps spent, a pattern not run). */
  undecided: SchemaError | undefined;
  /** Second pass ran out of steps: the errors found so far are all there is. */
  cut = false;
  /** Instance location, one segment per level; its length is the instance depth. */
  readonly path: Array<string | number> = [];
  readonly maxSteps: number;
  /** Schema location of the node entered last: where a budget overrun is reported. */
  private at = "#";
  private fatalSeen: Set<string> | null = null;
  /** Results of shared nodes per value, for one validation (both passes). */
  private memo: Map<Node, Map<unknown, boolean>> | null = null;
  /** The first equal pair of each array checked for `uniqueItems` (null: none), so the second
   * pass does not pay again for what is the costliest check. */
  uniqueness: Map<unknown[], [number, number] | null> | null = null;
  /** Active `$ref` targets and the instance depth each was entered at. */
  private readonly refNodes: Node[] = [];
  private readonly refDepths: number[] = [];

  constructor(maxSteps: number) {
    this.maxSteps = maxSteps;
  }

  /** Starts a pass. `depth`, `path` and the `$ref` stack need no reset: every evaluation leaves
   * them as it found them, and a context that saw an exception is discarded by its owner. */
  start(report: boolean): void {
    this.report = this.collect = report;
    if (report) this.errors = [];
    else this.undecided = undefined;
    this.fatal = this.abort = this.cut = false;
    this.fatalSeen = null;
    // The second pass gets what the first left, but at least a quarter: one validation takes
    // at most 1.25 budgets of work.
    this.steps = report ? Math.max(this.steps, Math.floor(this.maxSteps / 4)) : this.maxSteps;
  }

  /** Ends a validation: remembered results hold the caller's values and must not outlive it. */
  finish(): void {
    this.memo = this.uniqueness = null;
  }

  /** After a failed check: true when the remaining siblings need not run (quiet, or error cap). */
  stop(): boolean {
    return !this.collect || this.errors.length >= MAX_ERRORS;
  }

  /** Pays `n` steps; false (and every further check fails) once the pass has none left. */
  charge(n: number): boolean {
    return (this.steps -= n) >= 0 || this.outOfSteps();
  }

  outOfSteps(): false {
    this.abort = true;
    if (this.report) this.cut = true;
    else {
      const message = `could not validate: the validation budget of ${this.maxSteps} steps ran out (this schema and value need more work than allowed)`;
      this.undecided ??= { instancePath: pointer(this.path), schemaPath: this.at, keyword: "budget", message };
    }
    return false;
  }

  /** A check that cannot be decided (a pattern that cannot be run safely). The first pass ends
   * undecided; the second reports it as an error, once per schema location. */
  undecide(schemaPath: string, keyword: string, message: string): false {
    if (this.report) return this.fatalError(schemaPath, keyword, message, false);
    this.abort = true;
    this.undecided ??= { instancePath: pointer(this.path), schemaPath, keyword, message };
    return false;
  }

  /** Records a normal error (only when collecting, and not once the pass was cut short: a check
   * that could not pay for its work fails without being wrong) and returns false. */
  fail(schemaPath: string, keyword: string, message: string, key?: string | number): false {
    if (!this.collect || this.abort || this.errors.length >= MAX_ERRORS) return false;
    this.errors.push({ instancePath: pointer(this.path, key), schemaPath, keyword, message });
    return false;
  }

  /** Records a fatal error once per schema location, even inside quiet sub-evaluations. In the
   * first pass the verdict is then "invalid" whatever follows, so evaluation stops. */
  fatalError(schemaPath: string, keyword: string, message: string, fatal = true): false {
    if (fatal) this.fatal = true;
    if (!this.report) this.abort = true;
    else if (this.errors.length < MAX_ERRORS) {
      const seen = (this.fatalSeen ??= new Set());
      if (!seen.has(schemaPath)) {
        seen.add(schemaPath);
        this.errors.push({ instancePath: pointer(this.path), schemaPath, keyword, message });
      }
    }
    return false;
  }

  /** Follows a `$ref`. Reaching the same target again at the same instance location, with
   * no input consumed in between, would recurse forever: that is reported instead. */
  followRef(target: Node, value: unknown, at: string): boolean {
    const here = this.path.length;
    let i = this.refNodes.length - 1;
    for (; i >= 0 && this.refDepths[i] === here; i--) {
      if (this.refNodes[i] === target) return this.fatalError(at, "$ref", "$ref cycle consuming no input");
    }
    // The scan above grows with the chain of $refs taken without consuming input.
    if (!this.charge(COST.ref + ((this.refNodes.length - 1 - i) >> 2))) return false;
    this.refNodes.push(target);
    this.refDepths.push(here);
    const ok = evalNode(target, value, this);
    this.refNodes.pop();
    this.refDepths.pop();
    return ok;
  }

  /**
   * Evaluates a shared node quietly, once per value. Sound because a quiet result depends on
   * the node and the value alone: the instance path only labels errors, and what depends on
   * the way in (a `$ref` cycle, depth overflow, steps spent) aborts the pass, and a result
   * computed while aborting is not kept.
   */
  remembered(node: Node, value: unknown): boolean {
    if (typeof value === "string" && value.length > LONG_STRING) return runNode(node, value, this);
    const memo = (this.memo ??= new Map());
    let seen = memo.get(node);
    const known = seen?.get(value);
    if (known !== undefined) return --this.steps >= 0 ? known : this.outOfSteps(); // two lookups: a step
    const ok = runNode(node, value, this);
    if (!this.abort && this.charge(COST.remember)) {
      if (seen === undefined) memo.set(node, (seen = new Map()));
      seen.set(value, ok);
    }
    return ok;
  }

  /** Notes the node entered, for the message of a budget overrun. */
  enter(path: string): void {
    this.at = path;
  }
}

export function evalNode(node: Node, value: unknown, ctx: Ctx): boolean {
  if (ctx.abort) return false;
  if (--ctx.steps < 0) {
    ctx.enter(node.path);
    return ctx.outOfSteps();
  }
  if (node.shared === true && !ctx.collect) return ctx.remembered(node, value);
  return runNode(node, value, ctx);
}

function runNode(node: Node, value: unknown, ctx: Ctx): boolean {
  if (ctx.depth >= MAX_DEPTH) {
    ctx.fatalError(node.path, "depth", `schema evaluation nested deeper than ${MAX_DEPTH} levels`);
    ctx.abort = true;
    return false;
  }
  ctx.depth++;
  ctx.enter(node.path);
  const checks = node.checks;
  let ok = true;
  for (let i = 0; i < checks.length; i++) {
    if (!checks[i](value, ctx)) {
      ok = false;
      if (ctx.stop()) break;
    }
  }
  ctx.depth--;
  return ok;
}

export function quiet(node: Node, value: unknown, ctx: Ctx): boolean {
  const saved = ctx.collect;
  ctx.collect = false;
  const ok = evalNode(node, value, ctx);
  ctx.collect = saved;
  return ok;
}

export function evalChild(node: Node, value: unknown, key: string | number, ctx: Ctx): boolean {
  ctx.path.push(key);
  const ok = evalNode(node, value, ctx);
  ctx.path.pop();
  return ok;
}

// ---- value helpers ----

/** Steps to scan or compare string `s`. */
export const stringSteps = (s: string): number => Math.floor(s.length / COST.charsPerStep);

export function escapeSegment(seg: string | number): string {
  return typeof seg === "number" ? String(seg) : seg.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function pointer(path: ReadonlyArray<string | number>, key?: string | number): string {
  let s = "";
  for (let i = 0; i < path.length; i++) s += "/" + escapeSegment(path[i]);
  return key === undefined ? s : s + "/" + escapeSegment(key);
}

export const has = (o: object, k: string): boolean => Object.hasOwn(o, k);

export function truncate(s: string, max: number): string {
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

/** Short JSON of a schema value, for messages. */
export function preview(v: unknown, max = 60): string {
  try {
    return truncate(JSON.stringify(v) ?? typeof v, max);
  } catch {
    return "…";
  }
}

// ---- builders ----

/** What a keyword builder gets from the compiler for one schema object. */
export interface Builder {
  readonly s: Record<string, unknown>;
  /** Schema path of keyword `k` of this node. */
  at(k: string): string;
  /** A compiled pattern (see pattern.ts), or the message saying why `source` is not one. */
  regex(source: unknown): Pattern | string;
  check(c: Check): void;
  /** Adds a schema problem: a fatal error whenever this node is evaluated. */
  problem(k: string, message: string): void;
}

export function nonNegInt(b: Builder, k: string): number | undefined {
  if (!has(b.s, k)) return undefined;
  const n = b.s[k];
  if (typeof n === "number" && Number.isInteger(n) && n >= 0) return n;
  b.problem(k, `${k} must be a non-negative integer`);
  return undefined;
}
