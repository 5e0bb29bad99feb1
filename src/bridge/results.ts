/**
 * Tool results as an agent consumes them: every MCP content type mapped to one neutral shape,
 * a flattened text rendering for text-only models, and size limits applied. Failures (timeout,
 * crash, protocol error, refusal) become `isError` results in `failures.ts`.
 *
 * Text the bridge writes itself (notes, markers, failure explanations) is tagged
 * `origin: "bridge"`; everything else came from the server, which is what the untrusted
 * wrapper wraps.
 */
import { isContentBlock, type Annotations, type CallToolResult } from "../mcp/types.ts";
import type { BridgedContent, BridgedResult } from "./types.ts";
import { isPlainObject } from "../util/object.ts";

/** Default limit on the text of one result, in characters (UTF-16 code units), over all parts. */
export const DEFAULT_MAX_TEXT_CHARS = 64 * 1024;

/** Default limit on decoded image, audio and blob bytes in one result. */
export const DEFAULT_MAX_BINARY_BYTES = 5 * 1024 * 1024;

/** The text of a result that had no content at all. */
export const EMPTY_RESULT_TEXT = "(the tool returned no content)";

// Caps on metadata strings of links and binary parts; legitimate values are far shorter.
const MAX_URI = 4096;
const MAX_NAME = 512;
const MAX_DESCRIPTION = 2048;
const MAX_MIME = 128;

export interface ResultLimits {
  /** Default {@link DEFAULT_MAX_TEXT_CHARS}. */
  maxTextChars?: number;
  /** Default {@link DEFAULT_MAX_BINARY_BYTES}. */
  maxBinaryBytes?: number;
}

/** The marker that replaces cut text: `[… 123 more characters cut by mcp-bridge]`. */
export function cutMarker(chars: number): string {
  return `[… ${chars} more characters cut by mcp-bridge]`;
}

/**
 * Maps a `tools/call` result. Never throws: malformed or unknown blocks become notes, text
 * beyond `maxTextChars` is cut with a {@link cutMarker}, binary parts beyond `maxBinaryBytes`
 * become notes, and an empty result gets {@link EMPTY_RESULT_TEXT}. When `content` is empty
 * but `structuredContent` is present, its JSON is the text.
 */
export function toBridgedResult(result: CallToolResult, limits: ResultLimits = {}): BridgedResult {
  const maxText = limits.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS;
  const maxBinary = limits.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES;
  const parts: BridgedContent[] = [];
  let binaryUsed = 0;
  let binaryParts = 0;

  const binary = (part: BridgedContent & { mimeType?: string }, label: string, bytes: number): void => {
    if (binaryUsed + bytes <= maxBinary) {
      binaryUsed += bytes;
      parts.push(part);
      return;
    }
    binaryParts++;
    const mime = part.mimeType === undefined ? "" : `${safeLabel(part.mimeType)}, `;
    parts.push(bridgeNote(`[${label} (${mime}${formatBytes(bytes)}) omitted by mcp-bridge: over the ${formatBytes(maxBinary)} limit for binary content per call]`));
  };

  const blocks: readonly unknown[] = Array.isArray(result.content) ? result.content : [];
  for (const block of blocks) {
    if (!isContentBlock(block)) {
      parts.push(bridgeNote(`[content of unsupported type ${describeType(block)} omitted by mcp-bridge]`));
      continue;
    }
    const ann = block.annotations;
    switch (block.type) {
      case "text":
        parts.push(annotate({ type: "text", text: block.text }, ann));
        break;
      case "image":
      case "audio": {
        const part = annotate({ type: block.type, mimeType: clip(block.mimeType, MAX_MIME), data: block.data }, ann);
        binary(part, block.type, base64Bytes(block.data));
        break;
      }
      case "resource_link": {
        const link: BridgedContent & { type: "resource_link" } = {
          type: "resource_link",
          uri: clip(block.uri, MAX_URI),
          name: clip(block.name, MAX_NAME),
        };
        if (typeof block.title === "string") link.title = clip(block.title, MAX_NAME);
        if (typeof block.description === "string") link.description = clip(block.description, MAX_DESCRIPTION);
        if (typeof block.mimeType === "string") link.mimeType = clip(block.mimeType, MAX_MIME);
        if (typeof block.size === "number") link.size = block.size;
        parts.push(annotate(link, ann));
        break;
      }
      case "resource": {
        const r = block.resource;
        const uri = clip(r.uri, MAX_URI);
        const mime = typeof r.mimeType === "string" ? { mimeType: clip(r.mimeType, MAX_MIME) } : {};
        if ("text" in r && typeof r.text === "string") {
          parts.push(annotate({ type: "resource_text", uri, ...mime, text: r.text }, ann));
        } else if ("blob" in r && typeof r.blob === "string") {
          binary(annotate({ type: "resource_blob", uri, ...mime, blob: r.blob }, ann), "binary resource", base64Bytes(r.blob));
        }
        break;
      }
    }
  }

  let structured: Record<string, unknown> | undefined;
  let structuredDropped = false;
  const sc: unknown = result.structuredContent;
  if (isPlainObject(sc)) {
    const json = jsonOf(sc);
    if (json !== undefined && json.length <= maxText) structured = sc;
    else structuredDropped = true;
    if (parts.length === 0 && json !== undefined) {
      parts.push({ type: "text", text: json });
    } else if (structuredDropped) {
      const size = json === undefined ? "" : ` of ${json.length} characters`;
      parts.push(bridgeNote(`[structured content${size} omitted by mcp-bridge: over the ${maxText}-character limit]`));
    }
  }
  if (parts.length === 0) parts.push(bridgeNote(EMPTY_RESULT_TEXT));

  const { content, cut } = applyTextBudget(parts, maxText);
  const out: BridgedResult = { isError: result.isError === true, content, text: renderResultText(content) };
  if (structured !== undefined) out.structured = structured;
  if (cut > 0 || binaryParts > 0 || structuredDropped) {
    out.truncated = { textChars: cut, binaryParts, structured: structuredDropped };
  }
  return out;
}

/**
 * Flattens content to text: parts joined by newlines. `wrapRun`, when given, receives each run
 * of consecutive server-originated parts (already joined) and returns its replacement; the
 * bridge's own notes stay outside it.
 */
export function renderResultText(content: readonly BridgedContent[], wrapRun?: (text: string) => string): string {
  const out: string[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length === 0) return;
    const joined = run.join("\n");
    out.push(wrapRun ? wrapRun(joined) : joined);
    run = [];
  };
  for (const part of content) {
    if (part.type === "text" && part.origin === "bridge") {
      flush();
      out.push(part.text);
    } else {
      run.push(renderPart(part));
    }
  }
  flush();
  return out.join("\n");
}

function renderPart(part: BridgedContent): string {
  switch (part.type) {
    case "text":
      return part.text;
    case "image":
    case "audio":
      return `[${part.type}: ${part.mimeType}, ${formatBytes(base64Bytes(part.data))}]`;
    case "resource_link": {
      const label = part.title ?? part.name;
      const mime = part.mimeType === undefined ? "" : ` (${part.mimeType})`;
      const description = part.description === undefined ? "" : `: ${part.description}`;
      return `[resource link: ${label} <${part.uri}>${mime}${description}]`;
    }
    case "resource_text": {
      const mime = part.mimeType === undefined ? "" : ` (${part.mimeType})`;
      return `[resource ${part.uri}${mime}]\n${part.text}`;
    }
    case "resource_blob": {
      const mime = part.mimeType === undefined ? "" : ` (${part.mimeType})`;
      return `[binary resource ${part.uri}${mime}, ${formatBytes(base64Bytes(part.blob))}]`;
    }
  }
}

/** Cuts server text beyond `max` characters; a marker goes right after the cut point. */
function applyTextBudget(parts: BridgedContent[], max: number): { content: BridgedContent[]; cut: number } {
  let remaining = max;
  let cut = 0;
  let markerAt = -1;
  const out: BridgedContent[] = [];
  for (const part of parts) {
    const counted = (part.type === "text" && part.origin !== "bridge") || part.type === "resource_text";
    if (!counted) {
      out.push(part);
      continue;
    }
    const length = part.text.length;
    if (markerAt >= 0) {
      cut += length;
    } else if (length <= remaining) {
      remaining -= length;
      out.push(part);
    } else {
      const keep = safeCutIndex(part.text, remaining);
      cut += length - keep;
      if (keep > 0 || part.type === "resource_text") out.push({ ...part, text: part.text.slice(0, keep) });
      markerAt = out.length;
    }
  }
  if (markerAt >= 0) out.splice(markerAt, 0, bridgeNote(cutMarker(cut)));
  return { content: out, cut };
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** A text part written by the bridge itself (`origin: "bridge"`), which no untrusted wrapper marks. */
export function bridgeNote(text: string): BridgedContent {
  return { type: "text", text, origin: "bridge" };
}

function annotate<T extends BridgedContent>(part: T, annotations: Annotations | undefined): T {
  if (annotations !== undefined) part.annotations = annotations;
  return part;
}

/** Decoded size of a base64 string, without decoding it. */
export function base64Bytes(data: string): number {
  let end = data.length;
  while (end > 0 && data.charCodeAt(end - 1) === 0x3d /* = */) end--;
  return Math.floor((end * 3) / 4);
}

/** `1 byte`, `512 bytes`, `12.3 KiB`, `5 MiB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return n === 1 ? "1 byte" : `${n} bytes`;
  const [value, unit] = n < 1024 * 1024 ? [n / 1024, "KiB"] : [n / (1024 * 1024), "MiB"];
  return `${Number(value.toFixed(1))} ${unit}`;
}

/** The largest index <= `max` that does not split a surrogate pair. */
export function safeCutIndex(text: string, max: number): number {
  if (max <= 0) return 0;
  if (max >= text.length) return text.length;
  const before = text.charCodeAt(max - 1);
  return before >= 0xd800 && before <= 0xdbff ? max - 1 : max;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, safeCutIndex(text, max - 1))}…`;
}

/** A server-supplied word safe to put in the bridge's own text: short, printable, no brackets. */
export function safeLabel(text: string): string {
  return clip(text, 64).replace(/[^\x20-\x7e]|[<>[\]"`]/g, "_");
}

/** A server-supplied name as a JSON string literal, clipped: safe inside the bridge's own sentences. */
export function quote(name: string): string {
  return JSON.stringify(clip(name, 100));
}

function describeType(block: unknown): string {
  const type = typeof block === "object" && block !== null ? (block as { type?: unknown }).type : undefined;
  return typeof type === "string" ? quote(safeLabel(type)) : "(none)";
}

function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
