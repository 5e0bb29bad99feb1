/**
 * Evaluator core of the JSON Schema validator: the compiled node, the evaluation context, value
 * helpers, and the `Builder` handed to keyword builders. compiler.ts walks the schema and calls
 * the builders in assertion-keywords.ts (keywords that never look at a subschema) and
 * applicator-keywords.ts (`properties`, `anyOf`, ...); `$ref` is built by compiler.ts.
 *
 * A check is `(value, ctx) => boolean`. Evaluation runs quietly first (no error objects); only a
 * failed value is evaluated again with `ctx.collect` on, so a valid value allocates nothing.
 */
import type { SchemaError } from "./validate.ts";

/** Errors reported per validation, at most. */
export const MAX_ERRORS = 100;
/** Nesting of subschema evaluation (each subschema and each `$ref` hop is one level). */
export const MAX_DEPTH = 256;

export type Check = (value: unknown, ctx: Ctx) => boolean;

/** One compiled schema location. `bool` is set for the boolean schemas `true` and `false`. */
export interface Node {
  readonly path: string;
  readonly checks: Check[];
  readonly bool?: boolean;
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
  /** Depth overflow: every further check fails at once. */
  abort = false;
  depth = 0;
  busy = false;
  /** Instance location, one segment per level; its length is the instance depth. */
  readonly path: Array<string | number> = [];
  private fatalSeen: Set<string> | null = null;
  /** Active `$ref` targets and the instance depth each was entered at. */
  private readonly refNodes: Node[] = [];
  private readonly refDepths: number[] = [];

  /** Starts a pass. `depth`, `path` and the `$ref` stack need no reset: every evaluation leaves
   * them as it found them, and a context that saw an exception is discarded by its owner. */
  start(report: boolean): void {
    this.report = this.collect = report;
    if (report) this.errors = [];
    this.fatal = this.abort = false;
    this.fatalSeen = null;
  }

  /** After a failed check: true when the remaining siblings need not run (quiet, or error cap). */
  stop(): boolean {
    return !this.collect || this.errors.length >= MAX_ERRORS;
  }

  /** Records a normal error (only when collecting) and returns false. */
  fail(schemaPath: string, keyword: string, message: string, key?: string | number): false {
    if (!this.collect || this.errors.length >= MAX_ERRORS) return false;
    this.errors.push({ instancePath: pointer(this.path, key), schemaPath, keyword, message });
    return false;
  }

  /** Records a fatal error once per schema location, even inside quiet sub-evaluations. */
  fatalError(schemaPath: string, keyword: string, message: string): false {
    this.fatal = true;
    if (this.report && this.errors.length < MAX_ERRORS) {
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
    for (let i = this.refNodes.length - 1; i >= 0 && this.refDepths[i] === here; i--) {
      if (this.refNodes[i] === target) return this.fatalError(at, "$ref", "$ref cycle consuming no input");
    }
    this.refNodes.push(target);
    this.refDepths.push(here);
    const ok = evalNode(target, value, this);
    this.refNodes.pop();
    this.refDepths.pop();
    return ok;
  }
}

export function evalNode(node: Node, value: unknown, ctx: Ctx): boolean {
  if (ctx.abort) return false;
  if (ctx.depth >= MAX_DEPTH) {
    ctx.fatalError(node.path, "depth", `schema evaluation nested deeper than ${MAX_DEPTH} levels`);
    ctx.abort = true;
    return false;
  }
  ctx.depth++;
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

export function escapeSegment(seg: string | number): string {
  return typeof seg === "number" ? String(seg) : seg.replace(/~/g, "~0").replace(/\//g, "~1");
}

function pointer(path: ReadonlyArray<string | number>, key?: string | number): string {
  let s = "";
  for (let i = 0; i < path.length; i++) s += "/" + escapeSegment(path[i]);
  return key === undefined ? s : s + "/" + escapeSegment(key);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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
  /** A compiled `u`-flag RegExp, or the message saying why `source` is not one. */
  regex(source: unknown): RegExp | string;
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
