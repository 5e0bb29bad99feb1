/**
 * Builders of the applicator keywords of the JSON Schema validator: those that evaluate
 * subschemas against the value or its parts (`items`, `contains`, `properties`, `allOf`, `not`,
 * `if`, ...). `$ref` and `$defs` are built by compiler.ts, which owns reference resolution.
 */
import { notRunMessage, type Pattern } from "./pattern.ts";
import { COST, evalChild, evalNode, has, nonNegInt, quiet } from "./runtime.ts";
import type { Builder, Node } from "./runtime.ts";
import { isPlainObject } from "../util/object.ts";

/** Compiles a subschema of the current node found under the keyword path `segs`. */
export type Sub = (value: unknown, ...segs: string[]) => Node;

function schemaList(b: Builder, sub: Sub, k: string): Node[] | undefined {
  if (!has(b.s, k)) return undefined;
  const list = b.s[k];
  if (Array.isArray(list)) return list.map((x, i) => sub(x, k, String(i)));
  b.problem(k, `${k} must be an array of schemas`);
  return undefined;
}

/** The subschemas of a keyword whose value maps names to schemas, as parallel arrays. */
function schemaMap(b: Builder, sub: Sub, k: string): { keys: string[]; nodes: Node[] } {
  const map = has(b.s, k) ? b.s[k] : {};
  if (!isPlainObject(map)) b.problem(k, `${k} must be an object`);
  const keys = isPlainObject(map) ? Object.keys(map) : [];
  return { keys, nodes: keys.map((key) => sub((map as Record<string, unknown>)[key], k, key)) };
}

/** `prefixItems` and `items`, or draft-07 tuple `items` with `additionalItems`; `contains`. */
export function buildItems(b: Builder, sub: Sub): void {
  const s = b.s;
  let prefix = schemaList(b, sub, "prefixItems") ?? [];
  let rest: Node | undefined;
  let restKw = "items";
  if (has(s, "items")) {
    if (!Array.isArray(s.items)) rest = sub(s.items, "items");
    else if (prefix.length > 0) b.problem("items", "items cannot be an array next to prefixItems");
    else {
      prefix = schemaList(b, sub, "items") ?? [];
      if (has(s, "additionalItems")) rest = sub(s.additionalItems, (restKw = "additionalItems"));
    }
  }
  if (prefix.length > 0 || (rest !== undefined && rest.bool !== true)) {
    const at = b.at(restKw);
    const tooMany = `must have at most ${prefix.length} item${prefix.length === 1 ? "" : "s"}`;
    b.check((v, c) => {
      if (!Array.isArray(v)) return true;
      if (v.length > 64 && !c.charge(v.length >> 3)) return false;
      let ok = true;
      for (let i = 0; i < v.length; i++) {
        const node = i < prefix.length ? prefix[i] : rest;
        if (node === undefined) break;
        if (node.bool === false && i >= prefix.length) return c.fail(at, restKw, tooMany);
        if (node.checks.length > 0 && !evalChild(node, v[i], i, c)) {
          ok = false;
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  if (!has(s, "contains")) return;
  const node = sub(s.contains, "contains");
  const min = nonNegInt(b, "minContains") ?? 1;
  const max = nonNegInt(b, "maxContains");
  const at = b.at("contains");
  const atMax = b.at("maxContains");
  const few = `must contain at least ${min} item(s) matching contains`;
  const many = `must contain at most ${max} item(s) matching contains`;
  b.check((v, c) => {
    if (!Array.isArray(v)) return true;
    if (!c.charge(v.length * 2)) return false; // on top of each item's evaluation: the quiet switch
    let n = 0;
    for (let i = 0; i < v.length && (max !== undefined || n < min); i++) {
      c.path.push(i);
      if (quiet(node, v[i], c)) n++;
      c.path.pop();
    }
    if (n < min) return c.fail(at, "contains", few);
    return max === undefined || n <= max || c.fail(atMax, "maxContains", many);
  });
}

/** `properties`, `patternProperties`, `additionalProperties`, `propertyNames`,
 * `dependentSchemas` and the schema form of draft-07 `dependencies`. */
export function buildProperties(b: Builder, sub: Sub): void {
  const s = b.s;
  const named = schemaMap(b, sub, "properties");
  const names = new Set(named.keys);
  if (names.size > 0) {
    const cost = (named.keys.length * COST.lookup) >> 1; // a lookup of a named property is cheap
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      if (cost > 0 && !c.charge(cost)) return false;
      let ok = true;
      for (let i = 0; i < named.keys.length; i++) {
        const k = named.keys[i];
        if (has(v, k) && named.nodes[i].bool !== true && !evalChild(named.nodes[i], v[k], k, c)) {
          ok = false;
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  const patterned = schemaMap(b, sub, "patternProperties");
  const regexes: Pattern[] = [];
  const patternNodes: Node[] = [];
  patterned.keys.forEach((src, i) => {
    const re = b.regex(src);
    if (typeof re === "string") return b.problem("patternProperties", re);
    regexes.push(re);
    patternNodes.push(patterned.nodes[i]);
  });
  const extra = has(s, "additionalProperties") ? sub(s.additionalProperties, "additionalProperties") : undefined;
  if (regexes.length > 0 || (extra !== undefined && extra.bool !== true)) {
    const KW = "additionalProperties";
    const at = b.at(KW);
    const atPattern = b.at("patternProperties");
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      let ok = true;
      const keys = Object.keys(v);
      if (!c.charge(keys.length * COST.key)) return false;
      for (let j = 0; j < keys.length; j++) {
        const k = keys[j];
        let matched = false;
        for (let i = 0; i < regexes.length; i++) {
          const hit = regexes[i].test(k, c);
          if (hit === undefined) return c.abort ? false : c.undecide(atPattern, "patternProperties", notRunMessage(regexes[i]));
          if (!hit) continue;
          matched = true;
          if (!evalChild(patternNodes[i], v[k], k, c)) {
            ok = false;
            if (c.stop()) return false;
          }
        }
        if (matched || extra === undefined || names.has(k)) continue;
        const r = extra.bool === false ? c.fail(at, KW, "property not allowed", k) : evalChild(extra, v[k], k, c);
        if (!r) {
          ok = false;
          if (c.stop()) return false;
        }
      }
      return ok;
    });
  }
  if (has(s, "propertyNames")) {
    const node = sub(s.propertyNames, "propertyNames");
    const at = b.at("propertyNames");
    b.check((v, c) => {
      if (!isPlainObject(v)) return true;
      let ok = true;
      const keys = Object.keys(v);
      if (!c.charge(keys.length * COST.key)) return false;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        c.path.push(k);
        const r = quiet(node, k, c);
        c.path.pop();
        if (!r) {
          ok = c.fail(at, "propertyNames", "property name not allowed by propertyNames", k);
          if (c.stop()) break;
        }
      }
      return ok;
    });
  }
  const deps = schemaMap(b, sub, "dependentSchemas");
  const draft07 = has(s, "dependencies") && isPlainObject(s.dependencies) ? s.dependencies : {};
  for (const [k, d] of Object.entries(draft07)) {
    if (Array.isArray(d)) continue; // the array form is dependentRequired (assertion-keywords.ts)
    deps.keys.push(k);
    deps.nodes.push(sub(d, "dependencies", k));
  }
  deps.keys.forEach((k, i) => {
    b.check((v, c) => !isPlainObject(v) || !has(v, k) || evalNode(deps.nodes[i], v, c));
  });
}

/** `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`. A failed anyOf/oneOf with no match
 * reports its own error followed by each branch's errors. */
export function buildLogic(b: Builder, sub: Sub): void {
  const s = b.s;
  for (const node of schemaList(b, sub, "allOf") ?? []) b.check((v, c) => evalNode(node, v, c));
  for (const k of ["anyOf", "oneOf"]) {
    const nodes = schemaList(b, sub, k);
    if (nodes === undefined) continue;
    if (nodes.length === 0) {
      b.problem(k, `${k} must not be empty`);
      continue;
    }
    const at = b.at(k);
    const any = k === "anyOf";
    const none = `must match ${any ? "at least" : "exactly"} one schema in ${k}`;
    b.check((v, c) => {
      let first = -1;
      for (let i = 0; i < nodes.length; i++) {
        if (!quiet(nodes[i], v, c)) continue;
        if (any) return true;
        if (first >= 0) return c.fail(at, k, c.collect ? `${none} (matches ${first} and ${i})` : "");
        first = i;
      }
      if (first >= 0) return true;
      if (c.collect) {
        c.fail(at, k, none);
        for (let i = 0; i < nodes.length && !c.stop(); i++) evalNode(nodes[i], v, c);
      }
      return false;
    });
  }
  if (has(s, "not")) {
    const node = sub(s.not, "not");
    const at = b.at("not");
    b.check((v, c) => !quiet(node, v, c) || c.fail(at, "not", "must not match the schema in not"));
  }
  if (!has(s, "if")) return;
  const cond = sub(s.if, "if");
  const then = has(s, "then") ? sub(s.then, "then") : undefined;
  const otherwise = has(s, "else") ? sub(s.else, "else") : undefined;
  if (then === undefined && otherwise === undefined) return;
  b.check((v, c) => {
    const branch = quiet(cond, v, c) ? then : otherwise;
    return branch === undefined || evalNode(branch, v, c);
  });
}
