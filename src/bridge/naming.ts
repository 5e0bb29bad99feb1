/**
 * Bridged tool names: `mcp__<server>__<tool>`, limited to `[A-Za-z0-9_-]` and 64 characters
 * (what LLM tool-calling APIs accept), unique across every server of a session.
 *
 * The contract that makes names safe to keep in a conversation:
 *
 * - A name is *plain* (`mcp__fs__read_file`) only when it spells its server part and tool
 *   exactly: nothing was replaced, nothing truncated, and the server part can be read back
 *   unambiguously (no `__` inside it, no `_` at its end). Two different tools can never spell
 *   the same plain name, so a plain name never moves to another tool when servers start in a
 *   different order, restart, or change their lists.
 * - Every other name is *hashed*: the sanitised, shortened candidate plus `_` and eight hex
 *   digits of a hash of the original server and tool names (`mcp__a_b__x_1f3a09c2`). The hash
 *   depends only on those two names, so the same tool gets the same name after a restart.
 * - What is left to arrival order: two servers sharing a `toolPrefix`, a custom naming
 *   function that maps two tools to one name, and a 32-bit hash collision. The tool that
 *   claimed the name first keeps it; the other gets a hash (salted further if needed).
 * - Names already handed out are never taken away by another server's assignment, and a
 *   server's re-assignment (after `list_changed`) keeps the names of tools it still has.
 *
 * The only way back from a bridged name is {@link ToolNamer.resolve}; names are never split.
 *
 * The same rules name a gateway's tools and prompts (`CompositeProvider`: `<namespace>__<name>`,
 * no `mcp__` lead), and {@link UriNamespaces} puts resource URIs under a namespace reversibly
 * (docs/decisions.md 126).
 */
import { describeType } from "../util/object.ts";

/** Default cap on a bridged name (OpenAI and Anthropic tool names allow 64 characters). */
export const DEFAULT_MAX_NAME_LENGTH = 64;

/** The smallest cap accepted: room for a hash suffix and some readable text before it. */
const MIN_MAX_NAME_LENGTH = 20;

const HASH_SUFFIX_LENGTH = 9; // "_" + 8 hex digits

/**
 * Builds the unsanitised name for a tool. `prefix` is the server's `toolPrefix`, or its name.
 * The result is still sanitised and capped; a result that needed either is hashed.
 */
export type NamingFunction = (prefix: string, tool: string, server: string) => string;

export interface ToolNamerOptions {
  /** Cap on bridged names, at least {@link MIN_MAX_NAME_LENGTH}. Default 64. */
  maxLength?: number;
  /**
   * What a name starts with, before the server part: `mcp__` (default), or `""` for a
   * gateway's `<namespace>__<name>`. Ignored when `naming` is given.
   */
  lead?: string;
  /** Replaces the `mcp__<prefix>__<tool>` scheme. */
  naming?: NamingFunction;
}

/** Where a bridged name leads. */
export interface ToolRef {
  server: string;
  tool: string;
}

interface ServerEntry {
  prefix: string;
  /** original tool name -> bridged name */
  names: Map<string, string>;
}

/**
 * Assigns and remembers bridged names for every server of a session.
 *
 * @example
 * const namer = new ToolNamer();
 * namer.assign("fs", [{ name: "read_file" }]).get("read_file"); // "mcp__fs__read_file"
 * namer.resolve("mcp__fs__read_file"); // { server: "fs", tool: "read_file" }
 */
export class ToolNamer {
  readonly maxLength: number;
  private readonly naming: NamingFunction | undefined;
  private readonly lead: string;
  private readonly owners = new Map<string, ToolRef>();
  private readonly servers = new Map<string, ServerEntry>();

  constructor(options: ToolNamerOptions = {}) {
    const max = options.maxLength ?? DEFAULT_MAX_NAME_LENGTH;
    if (!Number.isInteger(max) || max < MIN_MAX_NAME_LENGTH) {
      throw new RangeError(`ToolNamer: maxLength must be an integer >= ${MIN_MAX_NAME_LENGTH}, got ${max}`);
    }
    this.maxLength = max;
    if (options.naming !== undefined && typeof options.naming !== "function") {
      throw new TypeError(`ToolNamer: naming must be a function, got ${describeType(options.naming)}`);
    }
    this.naming = options.naming;
    this.lead = options.lead ?? "mcp__";
    if (sanitizeName(this.lead) !== this.lead) throw new RangeError(`ToolNamer: lead must use only [A-Za-z0-9_-], got ${JSON.stringify(this.lead)}`);
  }

  /**
   * Names a server's current tool list, replacing its previous assignment: tools it still
   * has keep their names, removed tools release theirs, new tools are named in sorted order
   * of their original names (so the outcome does not depend on the order the server listed
   * them). A repeated original name gets one entry. A changed `prefix` renames every tool of
   * this server. Returns original name -> bridged name, in first-listed order.
   */
  assign(server: string, tools: readonly { name: string }[], prefix?: string): Map<string, string> {
    const part = prefix ?? server;
    let previous = this.servers.get(server);
    if (previous !== undefined && previous.prefix !== part) {
      this.release(server);
      previous = undefined;
    }
    const listed: string[] = [];
    const seen = new Set<string>();
    for (const t of tools) {
      if (!seen.has(t.name)) {
        seen.add(t.name);
        listed.push(t.name);
      }
    }

    const names = new Map<string, string>();
    if (previous !== undefined) {
      for (const [tool, name] of previous.names) {
        if (seen.has(tool)) names.set(tool, name);
        else this.owners.delete(name);
      }
    }
    const fresh = listed.filter((t) => !names.has(t)).sort(compareCodeUnits);
    for (const tool of fresh) {
      const name = this.pick(server, part, tool);
      this.owners.set(name, { server, tool });
      names.set(tool, name);
    }
    this.servers.set(server, { prefix: part, names });

    const out = new Map<string, string>();
    for (const tool of listed) out.set(tool, names.get(tool)!);
    return out;
  }

  /** The server and original tool name behind a bridged name, if it is assigned. */
  resolve(bridged: string): ToolRef | undefined {
    const ref = this.owners.get(bridged);
    return ref === undefined ? undefined : { server: ref.server, tool: ref.tool };
  }

  /** The bridged name of a server's tool, if it is assigned. */
  nameOf(server: string, tool: string): string | undefined {
    return this.servers.get(server)?.names.get(tool);
  }

  /** Forgets every name of a server (it was removed or closed). */
  release(server: string): void {
    const entry = this.servers.get(server);
    if (entry === undefined) return;
    for (const name of entry.names.values()) this.owners.delete(name);
    this.servers.delete(server);
  }

  private pick(server: string, part: string, tool: string): string {
    const raw = this.naming ? this.naming(part, tool, server) : `${this.lead}${part}__${tool}`;
    const clean = sanitizeName(raw);
    const plain =
      clean === raw &&
      clean.length > 0 &&
      clean.length <= this.maxLength &&
      (this.naming !== undefined || (tool !== "" && isReadableServerPart(part)));
    if (plain && !this.owners.has(clean)) return clean;
    const base = clean.slice(0, this.maxLength - HASH_SUFFIX_LENGTH);
    for (let salt = 0; ; salt++) {
      const input = salt === 0 ? `${server}\u0000${tool}` : `${server}\u0000${tool}\u0000${salt}`;
      const name = `${base}_${stableHash(input)}`;
      if (!this.owners.has(name)) return name;
    }
  }
}

/** Replaces every code point outside `[A-Za-z0-9_-]` with one `_`. */
export function sanitizeName(name: string): string {
  let out = "";
  for (const ch of name) out += /^[A-Za-z0-9_-]$/.test(ch) ? ch : "_";
  return out;
}

/**
 * True when `<lead><part>__<tool>` can be read back unambiguously for any tool: the first
 * `__` after the lead must be the separator, so the part holds no `__` and does not end in `_`.
 * (An empty lead needs nothing more: the name then starts with the part.)
 */
function isReadableServerPart(part: string): boolean {
  return part !== "" && !part.includes("__") && !part.endsWith("_") && sanitizeName(part) === part;
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const utf8 = new TextEncoder();

/**
 * FNV-1a (32-bit) over the UTF-8 bytes of `text`, as 8 lowercase hex digits. Not a
 * cryptographic hash: it only has to be stable across runs and platforms and spread well.
 */
export function stableHash(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of utf8.encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

/** The scheme of a namespaced resource URI: `mcp-bridge://<namespace>/<original URI>`. */
export const NAMESPACED_URI_PREFIX = "mcp-bridge://";

/** Cap on a namespace's segment in a URI (a hash keeps longer ones apart). */
const MAX_SEGMENT_LENGTH = 64;

/**
 * Resource URIs of several servers under one namespace each, reversibly:
 * `mcp-bridge://<segment>/<original URI>`, the original kept verbatim (so a template
 * `file:///{path}` becomes `mcp-bridge://fs/file:///{path}` and still expands). The segment is
 * the namespace itself when it is a plain `[A-Za-z0-9_-]` word of at most 64 characters,
 * otherwise its sanitised, shortened form plus a hash of the whole namespace; either way it
 * depends only on the namespace, so a URI stays valid across restarts. The only way back is
 * {@link unwrap}, which knows the namespaces added.
 *
 * @example
 * const uris = new UriNamespaces();
 * uris.wrap("fs", "file:///a.txt"); // "mcp-bridge://fs/file:///a.txt"
 * uris.unwrap("mcp-bridge://fs/file:///a.txt"); // { namespace: "fs", uri: "file:///a.txt" }
 */
export class UriNamespaces {
  private readonly segments = new Map<string, string>();
  private readonly namespaces = new Map<string, string>();

  /** The namespace's segment, assigned on first use. */
  segmentOf(namespace: string): string {
    const known = this.segments.get(namespace);
    if (known !== undefined) return known;
    const clean = sanitizeName(namespace);
    let segment = clean === namespace && clean !== "" && clean.length <= MAX_SEGMENT_LENGTH ? clean : undefined;
    for (let salt = 0; segment === undefined || this.namespaces.has(segment); salt++) {
      const input = salt === 0 ? namespace : `${namespace}\u0000${salt}`;
      segment = `${clean.slice(0, MAX_SEGMENT_LENGTH - HASH_SUFFIX_LENGTH)}_${stableHash(input)}`;
    }
    this.segments.set(namespace, segment);
    this.namespaces.set(segment, namespace);
    return segment;
  }

  /** `uri` (or a URI template) under `namespace`. */
  wrap(namespace: string, uri: string): string {
    return `${NAMESPACED_URI_PREFIX}${this.segmentOf(namespace)}/${uri}`;
  }

  /** The namespace and original URI behind a wrapped URI; undefined for any other URI. */
  unwrap(uri: string): { namespace: string; uri: string } | undefined {
    if (!uri.startsWith(NAMESPACED_URI_PREFIX)) return undefined;
    const slash = uri.indexOf("/", NAMESPACED_URI_PREFIX.length);
    if (slash < 0) return undefined;
    const namespace = this.namespaces.get(uri.slice(NAMESPACED_URI_PREFIX.length, slash));
    return namespace === undefined ? undefined : { namespace, uri: uri.slice(slash + 1) };
  }
}
