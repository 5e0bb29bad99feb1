/**
 * Compiler of the JSON Schema validator: walks one schema document into `Node`s, records unknown
 * keywords, compiles patterns once, and resolves `$ref`s (root-local only) against the document.
 */
import { buildArrayAssertions, buildGeneric, buildNumber, buildObjectAssertions } from "./assertion-keywords.ts";
import { buildString } from "./assertion-keywords.ts";
import { buildItems, buildLogic, buildProperties, type Sub } from "./applicator-keywords.ts";
import { compilePattern, type Pattern } from "./pattern.ts";
import { escapeSegment, has, MAX_DEPTH, preview, truncate } from "./runtime.ts";
import type { Builder, Check, Node } from "./runtime.ts";
import { isPlainObject } from "../util/object.ts";

/** Keywords this validator knows; the last two lines are annotations, never asserted. */
const KNOWN = new Set(
  `type enum const minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength
  pattern items prefixItems additionalItems contains minContains maxContains minItems maxItems
  uniqueItems properties patternProperties additionalProperties required dependentRequired
  dependentSchemas dependencies propertyNames minProperties maxProperties allOf anyOf oneOf not if
  then else $ref $defs definitions $anchor $id $schema $comment $vocabulary title description default
  examples deprecated readOnly writeOnly format contentMediaType contentEncoding contentSchema`.split(/\s+/),
);

type RefSlot = { target?: Node; problem?: string };

export function problemCheck(at: string, keyword: string, message: string): Check {
  const msg = "invalid schema: " + message;
  return (_v, c) => c.fatalError(at, keyword, msg);
}

export function describe(e: unknown): string {
  try {
    return e instanceof Error ? e.message : String(e);
  } catch {
    return "unknown error";
  }
}

/** Compiles one schema document; `$ref`s are resolved after the walk, once anchors are known. */
export class Compiler {
  readonly unknown: string[] = [];
  private readonly memo = new Map<object, Node>();
  private readonly anchors = new Map<string, Node>();
  private readonly refs: Array<{ slot: RefSlot; ref: string }> = [];
  private readonly regexes = new Map<string, Pattern | string>();
  /** Places each node is evaluated from (subschema keywords, `$ref`s, the root). */
  private readonly edges = new Map<Node, number>();
  private readonly baseId: string;
  private readonly root: unknown;

  constructor(root: unknown) {
    this.root = root;
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
      return this.edge(this.compile(v, path + segs.map((g) => "/" + escapeSegment(g)).join(""), depth + 1));
    };
    buildGeneric(b);
    buildNumber(b);
    buildString(b);
    buildArrayAssertions(b);
    this.core(b, node, depth);
    buildItems(b, sub);
    buildProperties(b, sub);
    buildObjectAssertions(b);
    buildLogic(b, sub);
    return node;
  }

  /**
   * Resolves every `$ref` met so far, including those found in targets compiled on the way,
   * then marks the nodes evaluated from more than one place as shared (their results are
   * remembered per value: what keeps a chain of `anyOf`s over shared definitions linear).
   */
  resolveRefs(root: Node): void {
    for (let i = 0; i < this.refs.length; i++) {
      const { slot, ref } = this.refs[i];
      const r = this.resolve(ref);
      if (typeof r === "string") slot.problem = r;
      else slot.target = this.edge(r);
    }
    this.edge(root);
    for (const [node, n] of this.edges) if (n > 1) node.shared = true;
  }

  private edge(node: Node): Node {
    if (node.bool === undefined) this.edges.set(node, (this.edges.get(node) ?? 0) + 1);
    return node;
  }

  private core(b: Builder, node: Node, depth: number): void {
    const s = b.s;
    for (const k of ["$defs", "definitions"]) {
      if (!has(s, k)) continue;
      const defs = s[k];
      if (!isPlainObject(defs)) b.problem(k, `${k} must be an object`);
      // Compiled for their unknown keywords and anchors; being defined is no evaluation edge.
      else for (const name of Object.keys(defs)) this.compile(defs[name], b.at(k) + "/" + escapeSegment(name), depth + 1);
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

  private regex(src: unknown): Pattern | string {
    if (typeof src !== "string") return "pattern must be a string";
    let r = this.regexes.get(src);
    if (r === undefined) {
      r = compilePattern(src);
      if (typeof r === "string") r = truncate(r, 200);
      this.regexes.set(src, r);
    }
    return r;
  }
}
