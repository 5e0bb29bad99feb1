/**
 * Resources for an agent: a URI filter for listing and reading, and a size-capped context
 * block built from read results. Pure functions over data; the manager makes the client calls
 * (list, then `filter`; check `allows(uri)` before a read; then `buildResourceContext`).
 */
import type { ResourceContents } from "../mcp/types.ts";
import { compileGlobs, type GlobMatcher } from "../util/glob.ts";
import { base64Bytes, cutMarker, formatBytes } from "./results.ts";
import { neutralizeMarkers, type UntrustedWrapper } from "./untrusted.ts";

/** Default cap on a context block, in UTF-8 bytes. */
export const DEFAULT_MAX_CONTEXT_BYTES = 64 * 1024;

/**
 * A server's `resourceFilter`: globs on resource URIs (see `util/glob.ts`). With no globs
 * (`undefined`) every URI passes; an empty list lets nothing through.
 */
export class ResourceFilter {
  private readonly matcher: GlobMatcher | undefined;

  constructor(globs?: readonly string[]) {
    this.matcher = globs === undefined ? undefined : compileGlobs(globs);
  }

  /** True when the URI may be listed and read. */
  allows(uri: string): boolean {
    return this.matcher === undefined || this.matcher(uri);
  }

  /** The items whose `uri` passes, in their order. */
  filter<T extends { uri: string }>(items: readonly T[]): T[] {
    return items.filter((item) => this.allows(item.uri));
  }
}

/** One `resources/read` result and where it came from. */
export interface ResourceEntry {
  server: string;
  /** The URI that was read (contents may name sub-resources). */
  uri: string;
  contents: readonly ResourceContents[];
  /** Wrapped in untrusted-content markers when a wrapper is given. Default true. */
  untrusted?: boolean;
}

export interface ResourceContextOptions {
  /** Cap on the whole block in UTF-8 bytes, markers and notes included. Default 64 KiB. */
  maxBytes?: number;
  /** Wraps (and scans) the text of untrusted entries. */
  wrapper?: UntrustedWrapper;
}

export interface ResourceContext {
  /** The block; empty when there was nothing to include. */
  text: string;
  /** UTF-8 length of `text`, never above `maxBytes`. */
  bytes: number;
  /** Contents included whole. */
  included: number;
  /** Contents included in part (at most one: the one where the room ran out). */
  truncated: number;
  /** URIs of contents left out for lack of room. */
  omitted: string[];
}

interface Item {
  server: string;
  uri: string;
  mimeType: string | undefined;
  text: string | undefined;
  blob: string | undefined;
  untrusted: boolean;
}

/**
 * Renders read results as one text block for a model's context, in order, each content under
 * a header naming its URI and server. Binary contents are described, not included. When the
 * next content does not fit, it is cut with a marker (`[… N more characters cut by
 * mcp-bridge]`) and the rest is left out with a note saying how many; the result never
 * exceeds `maxBytes`.
 */
export function buildResourceContext(entries: readonly ResourceEntry[], options: ResourceContextOptions = {}): ResourceContext {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_CONTEXT_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`buildResourceContext: maxBytes must be a non-negative integer`);
  const wrapper = options.wrapper;
  const items = flatten(entries);
  const omittedNote = (n: number): string => `[… ${n} more resources omitted by mcp-bridge: over the ${maxBytes}-byte limit]`;
  const reserve = utf8Length(`\n\n${omittedNote(items.length)}`);

  const out: string[] = [];
  let used = 0;
  let included = 0;
  let truncated = 0;
  const omitted: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    const sep = out.length === 0 ? 0 : 2;
    const whole = render(item, item.text, undefined, wrapper);
    const size = utf8Length(whole);
    const last = i === items.length - 1;
    if (used + sep + size + (last ? 0 : reserve) <= maxBytes) {
      scanIfWrapped(item, item.text, wrapper);
      out.push(whole);
      used += sep + size;
      included++;
      continue;
    }
    let rest = i;
    const room = maxBytes - used - sep - (last ? 0 : reserve);
    const part = item.text === undefined ? undefined : cutToFit(item, item.text, room, wrapper);
    if (part !== undefined) {
      out.push(part.text);
      used += sep + utf8Length(part.text);
      truncated++;
      rest++;
    }
    for (let j = rest; j < items.length; j++) omitted.push(items[j]!.uri);
    break;
  }
  if (omitted.length > 0) {
    const noteText = omittedNote(omitted.length);
    const sep = out.length === 0 ? "" : "\n\n";
    if (used + utf8Length(sep + noteText) <= maxBytes) out.push(noteText);
  }
  const text = out.join("\n\n");
  return { text, bytes: utf8Length(text), included, truncated, omitted };
}

function flatten(entries: readonly ResourceEntry[]): Item[] {
  const items: Item[] = [];
  for (const e of entries) {
    const untrusted = e.untrusted !== false;
    if (e.contents.length === 0) {
      items.push({ server: e.server, uri: e.uri, mimeType: undefined, text: "", blob: undefined, untrusted });
      continue;
    }
    for (const c of e.contents) {
      const text = "text" in c && typeof c.text === "string" ? c.text : undefined;
      const blob = "blob" in c && typeof c.blob === "string" ? c.blob : undefined;
      items.push({
        server: e.server,
        uri: typeof c.uri === "string" ? c.uri : e.uri,
        mimeType: typeof c.mimeType === "string" ? c.mimeType : undefined,
        text: text ?? (blob === undefined ? "" : undefined),
        blob,
        untrusted,
      });
    }
  }
  return items;
}

function render(item: Item, text: string | undefined, marker: string | undefined, wrapper: UntrustedWrapper | undefined): string {
  // The header sits outside any boundary, so server-supplied parts are escaped and defused.
  const mime = item.mimeType === undefined ? "" : ` (${item.mimeType.slice(0, 128).replace(/[^\w.+\/;= -]/g, "_")})`;
  const uri = neutralizeMarkers(JSON.stringify(item.uri.slice(0, 2048)));
  const head = `Resource ${uri} from MCP server ${JSON.stringify(item.server)}${mime}:`;
  if (text === undefined) return `${head}\n[binary content, ${formatBytes(base64Bytes(item.blob ?? ""))}, not included]`;
  const body = wrapper !== undefined && item.untrusted ? wrapper.wrap(text, sourceOf(item), { scan: false }) : text;
  return marker === undefined ? `${head}\n${body}` : `${head}\n${body}\n${marker}`;
}

/**
 * The item with as much of its text as fits in `room` bytes, or undefined when not even its
 * header fits. Neutralising look-alikes inside wrapped text can lengthen it, so the size is
 * measured after rendering and the budget shrunk by the excess until it fits.
 */
function cutToFit(item: Item, text: string, room: number, wrapper: UntrustedWrapper | undefined): { text: string } | undefined {
  let budget = room - utf8Length(render(item, "", cutMarker(text.length), wrapper));
  for (let attempt = 0; attempt < 16 && budget >= 0; attempt++) {
    const keep = prefixWithinBytes(text, budget);
    const rendered = render(item, text.slice(0, keep), cutMarker(text.length - keep), wrapper);
    const size = utf8Length(rendered);
    if (size <= room) {
      scanIfWrapped(item, text.slice(0, keep), wrapper);
      return { text: rendered };
    }
    budget -= size - room;
  }
  return undefined;
}

function scanIfWrapped(item: Item, text: string | undefined, wrapper: UntrustedWrapper | undefined): void {
  if (wrapper !== undefined && item.untrusted && text !== undefined) wrapper.scan(text, sourceOf(item));
}

function sourceOf(item: Item): string {
  return `mcp:${item.server}/${item.uri}`;
}

/** UTF-8 length of a string as TextEncoder would encode it (a lone surrogate is 3 bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The longest prefix length of `s` whose UTF-8 encoding fits `max` bytes; pairs stay whole. */
function prefixWithinBytes(s: string, max: number): number {
  let n = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && isLowSurrogate(s.charCodeAt(i + 1));
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (n + size > max) break;
    n += size;
    i += pair ? 2 : 1;
  }
  return i;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
