/**
 * Values mirrored into HTTP headers in the stateless era (SEP-2243): `Mcp-Name`, and the
 * `Mcp-Param-{Name}` headers of tool parameters annotated with `x-mcp-header`. A server
 * checks each against the body, so that a proxy routing on a header and the server acting
 * on the body cannot be told two different things. Node-free: header bags are plain objects
 * (docs/decisions.md 110).
 */
import { isPlainObject } from "../util/object.ts";

/** Request headers by lower-case name, as node:http gives them. */
export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

/** Visible ASCII, space and tab: what a header value may hold. */
const HEADER_SAFE = /^[\t\x20-\x7e]*$/;

/** Strict Base64: whole quads, correct padding, standard alphabet. */
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const PREFIX = "=?base64?";
const SUFFIX = "?=";

/**
 * A mirrored header value as the body holds it: a `=?base64?...?=` value decoded (UTF-8),
 * anything else as sent (a value lacking the prefix or the suffix is literal). `undefined`
 * for characters no header may carry, or a sentinel whose Base64 or UTF-8 is malformed.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  if (!HEADER_SAFE.test(raw)) return undefined;
  if (!(raw.startsWith(PREFIX) && raw.endsWith(SUFFIX) && raw.length >= PREFIX.length + SUFFIX.length)) return raw;
  const b64 = raw.slice(PREFIX.length, raw.length - SUFFIX.length);
  if (!STRICT_BASE64.test(b64)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/**
 * A value as a client sends it in `Mcp-Name` or `Mcp-Param-*`: as is when it is printable
 * ASCII without leading or trailing whitespace, else (and when it looks like the sentinel)
 * `=?base64?...?=` of its UTF-8. The inverse of {@link decodeHeaderValue}.
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x20-\x7e]*$/.test(value) && value === value.trim() && !(value.startsWith(PREFIX) && value.endsWith(SUFFIX));
  if (plain) return value;
  let binary = "";
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${PREFIX}${btoa(binary)}${SUFFIX}`;
}

/**
 * The `Mcp-Param-*` headers (lower-case names) a client sends with a `tools/call` of a tool
 * with this `inputSchema`: one per annotated argument that is present and not null, its text
 * form encoded (integers in decimal, booleans `true`/`false`). Call only for a schema that
 * passed {@link xMcpHeaderProblem}.
 */
export function mirroredParamHeaders(inputSchema: unknown, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(args)) return out;
  for (const { path, header } of annotationsOf(inputSchema)) {
    const value = valueAt(args, path);
    if (typeof value === "string") out[`mcp-param-${header.toLowerCase()}`] = encodeHeaderValue(value);
    else if (typeof value === "number" || typeof value === "boolean") out[`mcp-param-${header.toLowerCase()}`] = String(value);
  }
  return out;
}

/** One `x-mcp-header` annotation: where the value sits in the arguments, and the header suffix. */
interface Annotation {
  readonly path: readonly string[];
  readonly header: string;
}

/**
 * Why the `Mcp-Param-*` headers of a `tools/call` disagree with its arguments, or
 * `undefined` when they agree. A value present in the arguments needs its header, equal after
 * decoding (integers compared as numbers); a header whose value is absent is a mismatch too.
 */
export function paramHeaderMismatch(inputSchema: unknown, args: Record<string, unknown>, headers: HeaderBag): string | undefined {
  for (const { path, header } of annotationsOf(inputSchema)) {
    const value = valueAt(args, path);
    const sent = headers[`mcp-param-${header.toLowerCase()}`];
    const raw = Array.isArray(sent) ? sent.join(", ") : sent;
    const where = `arguments.${path.join(".")}`;
    if (value === undefined || value === null) {
      if (raw !== undefined) return `Mcp-Param-${header} was sent but ${where} is absent`;
      continue;
    }
    if (raw === undefined) return `the Mcp-Param-${header} header is required when ${where} is given`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) return `the Mcp-Param-${header} header holds invalid characters or malformed Base64`;
    if (!same(decoded, value)) return `Mcp-Param-${header} header ${JSON.stringify(decoded)} does not match ${where} ${JSON.stringify(value)}`;
  }
  return undefined;
}

/** An HTTP field-name token (RFC 9110 5.1): what follows `Mcp-Param-`. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Types a mirrored parameter may have: `number` is excluded (its text form is not unique). */
const MIRRORABLE = new Set(["string", "integer", "boolean"]);

/**
 * Why a tool's `inputSchema` breaks the `x-mcp-header` rules (SEP-2243), or `undefined`: each
 * value a non-empty token, unique ignoring case, on a `string`, `integer` or `boolean`
 * property reachable from the root through `properties` alone. Clients drop such a tool, so
 * a server refuses to register it.
 */
export function xMcpHeaderProblem(inputSchema: unknown): string | undefined {
  const seen = new Set<string>();
  const visit = (node: unknown, onChain: boolean, at: string): string | undefined => {
    if (Array.isArray(node)) {
      for (const [i, item] of node.entries()) {
        const why = visit(item, false, `${at}/${i}`);
        if (why) return why;
      }
      return undefined;
    }
    if (!isPlainObject(node)) return undefined;
    const name = node["x-mcp-header"];
    if (name !== undefined) {
      if (!onChain) return `x-mcp-header at ${at || "/"} is not on a property reached through "properties" alone`;
      if (typeof name !== "string" || !TOKEN.test(name)) return `x-mcp-header at ${at} must be a non-empty header token, got ${JSON.stringify(name)}`;
      if (!MIRRORABLE.has(node.type as string)) return `x-mcp-header at ${at} is on a property of type ${JSON.stringify(node.type)} (string, integer or boolean only)`;
      if (seen.has(name.toLowerCase())) return `x-mcp-header ${JSON.stringify(name)} is used twice (names are compared ignoring case)`;
      seen.add(name.toLowerCase());
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === "properties" && isPlainObject(child) && (onChain || at === "")) {
        for (const [prop, sub] of Object.entries(child)) {
          const why = visit(sub, true, `${at}/properties/${prop}`);
          if (why) return why;
        }
      } else {
        const why = visit(child, false, `${at}/${key}`);
        if (why) return why;
      }
    }
    return undefined;
  };
  return visit(inputSchema, false, "");
}

/** Annotations reachable from the root through `properties` alone (the only place they count). */
/**
 * The annotations of a tool's `inputSchema`, found once per schema object: both sides look
 * them up on every `tools/call`, and a schema object is not changed once a tool is registered
 * or listed (a new registration or listing brings new objects).
 */
const annotationCache = new WeakMap<object, readonly Annotation[]>();

/** A schema with no annotation at all is the common case: the shared empty answer. */
const NONE: readonly Annotation[] = Object.freeze([]);

/** {@link annotations} of `schema`, from the cache when it is an object seen before. */
export function annotationsOf(schema: unknown): readonly Annotation[] {
  if (!isPlainObject(schema)) return NONE;
  let found = annotationCache.get(schema);
  if (found === undefined) {
    const list = annotations(schema, []);
    found = list.length === 0 ? NONE : list;
    annotationCache.set(schema, found);
  }
  return found;
}

function annotations(schema: unknown, prefix: readonly string[]): Annotation[] {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return [];
  const out: Annotation[] = [];
  for (const [key, sub] of Object.entries(schema.properties)) {
    if (!isPlainObject(sub)) continue;
    const path = [...prefix, key];
    if (typeof sub["x-mcp-header"] === "string") out.push({ path, header: sub["x-mcp-header"] });
    out.push(...annotations(sub, path));
  }
  return out;
}

function valueAt(args: Record<string, unknown>, path: readonly string[]): unknown {
  let at: unknown = args;
  for (const key of path) {
    if (!isPlainObject(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function same(header: string, value: unknown): boolean {
  if (typeof value === "string") return header === value;
  if (typeof value === "number") return header.trim() !== "" && Number(header) === value;
  if (typeof value === "boolean") return header === String(value);
  return false;
}
