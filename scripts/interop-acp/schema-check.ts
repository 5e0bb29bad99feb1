/**
 * Checks the messages our agent wrote against the ACP SDK's JSON Schema (schema/v1/schema.json)
 * with OUR validator (src/schema/validate.ts). The SDK's client drops or repairs a malformed
 * notification without a word, so this check is the only thing that catches one.
 *
 * Each definition is validated through a wrapper `{ $ref: "#/$defs/<Name>", $defs }`, so
 * that every `$ref` inside the SDK's schema resolves as it does in the original document.
 *
 * Keywords our validator does not know are never allowed to hide a failure: for each
 * definition, the unknown keywords it can reach (following `$ref`s) are classified, and any
 * that could assert something is reported as unsupported, which fails the check.
 */
import { compileSchema, formatSchemaErrors, type CompiledValidator, type SchemaError } from "../../src/schema/validate.ts";

/** An unknown keyword reachable from a checked definition, and why it is (or is not) harmless. */
export interface UnknownKeyword {
  path: string;
  keyword: string;
  /** True when the keyword asserts nothing (an annotation), so ignoring it hides no failure. */
  harmless: boolean;
  why: string;
}

/** One message that failed its definition. */
export interface SchemaViolation {
  /** What the message was, e.g. `session/update #12 (tool_call_update)`. */
  message: string;
  definition: string;
  errors: SchemaError[];
  summary: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export class AcpSchemaChecker {
  private readonly defs: Json;
  private readonly compiled = new Map<string, { check: CompiledValidator; unknown: UnknownKeyword[] }>();
  /** Messages checked, per definition. */
  readonly counts = new Map<string, number>();
  readonly violations: SchemaViolation[] = [];

  constructor(schema: unknown) {
    if (!isObject(schema) || !isObject(schema.$defs)) throw new Error("the ACP schema has no $defs");
    this.defs = schema.$defs;
  }

  has(definition: string): boolean {
    return isObject(this.defs[definition]);
  }

  /** Validates `value` against `#/$defs/<definition>`; records the outcome. */
  check(definition: string, value: unknown, what: string): boolean {
    const v = this.validator(definition);
    this.counts.set(definition, (this.counts.get(definition) ?? 0) + 1);
    const result = v.check(value);
    if (result.valid) return true;
    const errors = this.focus(definition, value) ?? result.errors;
    const summary = errors
      .slice(0, 5)
      .map((e) => `${formatSchemaErrors([e], 1)} (schema ${e.schemaPath})`)
      .join("; ");
    this.violations.push({ message: what, definition, errors, summary: errors.length > 5 ? `${summary}; and ${errors.length - 5} more` : summary });
    return false;
  }

  /**
   * For a failed session/update, the errors against the one SessionUpdate variant its
   * `sessionUpdate` tag names (the oneOf's other branches only say "wrong tag"); undefined
   * when there is no such variant.
   */
  private focus(definition: string, value: unknown): SchemaError[] | undefined {
    if (definition !== "SessionNotification" || !isObject(value) || !isObject(value.update)) return undefined;
    const tag = value.update.sessionUpdate;
    const union = this.defs.SessionUpdate;
    const branches = isObject(union) && Array.isArray(union.oneOf) ? union.oneOf : [];
    const i = branches.findIndex((b) => isObject(b) && isObject(b.properties) && isObject(b.properties.sessionUpdate) && b.properties.sessionUpdate.const === tag);
    if (i === -1) return undefined;
    const r = compileSchema({ $ref: `#/$defs/SessionUpdate/oneOf/${i}`, $defs: this.defs })(value.update);
    return r.valid ? undefined : r.errors.map((e) => ({ ...e, instancePath: `/update${e.instancePath}` }));
  }

  /** The unknown keywords reachable from every definition checked so far, deduplicated. */
  unknownKeywords(): UnknownKeyword[] {
    const seen = new Map<string, UnknownKeyword>();
    for (const { unknown } of this.compiled.values()) for (const u of unknown) seen.set(u.path, u);
    return [...seen.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  private validator(definition: string): { check: CompiledValidator; unknown: UnknownKeyword[] } {
    let v = this.compiled.get(definition);
    if (v !== undefined) return v;
    if (!this.has(definition)) throw new Error(`the ACP schema has no definition ${definition}`);
    const check = compileSchema({ $ref: `#/$defs/${definition}`, $defs: this.defs });
    // The compiler lists the unknown keywords of the whole document; keep those the
    // definition can reach.
    const reachable = this.reachableDefs(definition);
    const listed = check(undefined).unknownKeywords;
    const unknown = listed
      .filter((path) => reachable.has(/^#\/\$defs\/([^/]+)/.exec(path)?.[1] ?? ""))
      .map((path) => this.classify(path));
    v = { check, unknown };
    this.compiled.set(definition, v);
    return v;
  }

  /** Names of the definitions `definition` refers to, directly or not, itself included. */
  private reachableDefs(definition: string): Set<string> {
    const found = new Set<string>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (!isObject(node)) return;
      const ref = node.$ref;
      if (typeof ref === "string") {
        const m = /^#\/\$defs\/([^/]+)$/.exec(ref);
        if (m !== null && !found.has(m[1]!)) {
          found.add(m[1]!);
          visit(this.defs[m[1]!]);
        }
      }
      for (const [key, child] of Object.entries(node)) if (key !== "$ref") visit(child);
    };
    found.add(definition);
    visit(this.defs[definition]);
    return found;
  }

  private classify(path: string): UnknownKeyword {
    const keyword = path.slice(path.lastIndexOf("/") + 1);
    if (keyword.startsWith("x-")) return { path, keyword, harmless: true, why: "vendor annotation (x-*), asserts nothing" };
    if (keyword === "discriminator") {
      const parent = this.at(path.slice(0, path.lastIndexOf("/")));
      const tagged = isObject(parent) && discriminatorIsAsserted(parent);
      return tagged
        ? { path, keyword, harmless: true, why: "OpenAPI annotation; every oneOf/anyOf branch asserts the tag with const and required" }
        : { path, keyword, harmless: false, why: "discriminator whose branches do not all assert the tag: our validator would not enforce it" };
    }
    return { path, keyword, harmless: false, why: "assertion keyword our validator does not support" };
  }

  /** The schema node at a `#/$defs/...` pointer of the wrapper. */
  private at(pointer: string): unknown {
    const segments = pointer.replace(/^#\//, "").split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    let node: unknown = { $defs: this.defs };
    for (const s of segments) node = Array.isArray(node) ? node[Number(s)] : isObject(node) ? node[s] : undefined;
    return node;
  }
}

/** True when each branch of the node's oneOf/anyOf requires the discriminator property with a const. */
function discriminatorIsAsserted(node: Json): boolean {
  const d = node.discriminator;
  const property = isObject(d) && typeof d.propertyName === "string" ? d.propertyName : undefined;
  const branches = Array.isArray(node.oneOf) ? node.oneOf : Array.isArray(node.anyOf) ? node.anyOf : undefined;
  if (property === undefined || branches === undefined || branches.length === 0) return false;
  return branches.every((b) => {
    if (!isObject(b) || !isObject(b.properties) || !Array.isArray(b.required)) return false;
    const p = b.properties[property];
    return b.required.includes(property) && isObject(p) && "const" in p;
  });
}

/** The definition each request or notification method our agent may send must match. */
const AGENT_MESSAGE_DEFS: Record<string, string> = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
};

/** The definition of the result our agent answers to each editor request. */
const RESPONSE_DEFS: Record<string, string> = {
  initialize: "InitializeResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/prompt": "PromptResponse",
  "session/close": "CloseSessionResponse",
};

/** A line the agent wrote, as captured before the SDK parsed it. */
export interface CapturedLine {
  index: number;
  value: unknown;
  error?: string;
}

/**
 * Checks every message the agent wrote: requests and notifications by method, responses by
 * the method of the editor request they answer (found in `sent`), errors against `Error`.
 * Returns the problems that are not schema violations (a line that is not JSON, a method
 * with no definition, an answer to nothing); violations land in `checker.violations`.
 */
export function checkAgentMessages(checker: AcpSchemaChecker, received: readonly CapturedLine[], sent: readonly unknown[]): string[] {
  const problems: string[] = [];
  const asked = new Map<string, string>();
  for (const m of sent) {
    if (isObject(m) && typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) asked.set(JSON.stringify(m.id), m.method);
  }
  for (const line of received) {
    const at = `line ${line.index + 1}`;
    const m = line.value;
    if (line.error !== undefined || !isObject(m)) {
      problems.push(`${at} is not a JSON-RPC message: ${line.error ?? JSON.stringify(m).slice(0, 200)}`);
      continue;
    }
    if (m.jsonrpc !== "2.0") problems.push(`${at}: "jsonrpc" is ${JSON.stringify(m.jsonrpc)}, not "2.0"`);
    if (typeof m.method === "string") {
      const def = AGENT_MESSAGE_DEFS[m.method];
      const kind = "id" in m ? "request" : "notification";
      if (def === undefined) {
        problems.push(`${at}: ${kind} ${m.method} has no definition to check it against`);
        continue;
      }
      const update = isObject(m.params) && isObject(m.params.update) ? ` (${String(m.params.update.sessionUpdate)})` : "";
      checker.check(def, m.params, `${m.method} ${kind}, ${at}${update}`);
      continue;
    }
    const method = asked.get(JSON.stringify(m.id));
    if (method === undefined) {
      problems.push(`${at}: a response to id ${JSON.stringify(m.id)}, which the editor never sent`);
    } else if ("error" in m) {
      checker.check("Error", m.error, `error answer to ${method}, ${at}`);
    } else {
      const def = RESPONSE_DEFS[method];
      if (def === undefined) problems.push(`${at}: answer to ${method}, which has no response definition here`);
      else checker.check(def, m.result, `${method} result, ${at}`);
    }
  }
  return problems;
}
