/**
 * Built-in middleware that works on a call's result: size limits (cut, or spill the whole
 * text into a resource the client can read), redaction of known secrets, and untrusted-content
 * markers. Each reuses what the bridge applies to the manager's results (bridge/results.ts,
 * security/redact.ts, bridge/untrusted.ts), on MCP results instead of bridged ones.
 */
import { cutMarker, safeCutIndex } from "../bridge/results.ts";
import { UntrustedWrapper } from "../bridge/untrusted.ts";
import type { Middleware, ToolCall } from "../mcp/provider-types.ts";
import type { CallToolResult, ContentBlock } from "../mcp/types.ts";
import type { Redactor } from "../security/redact.ts";
import type { SpilledResults } from "./spilled-results.ts";

export interface ResultLimitsOptions {
  /** Text characters (UTF-16 code units) of one result, over its text and embedded text parts. Default 64 Ki. */
  maxTextChars?: number;
  /**
   * Where an oversized result's text goes instead of being cut: the client gets the first
   * `maxTextChars` and a `resource_link` to the whole text (serve `spill` as a provider too).
   */
  spill?: SpilledResults;
}

const DEFAULT_MAX_TEXT_CHARS = 64 * 1024;

/**
 * Caps the text of a result: beyond `maxTextChars` the text is cut with the bridge's marker
 * (`[… N more characters cut by mcp-bridge]`), or, with `spill`, kept whole in a resource the
 * result links to. Declare it last, so redaction and untrusted markers see what is sent
 * (docs/decisions.md 125).
 */
export function resultLimits(options: ResultLimitsOptions = {}): Middleware {
  const max = options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`resultLimits: maxTextChars must be a positive integer, got ${max}`);
  return {
    name: "resultLimits",
    after(result, call) {
      if (!Array.isArray(result.content) || textLength(result.content) <= max) return result;
      const link = options.spill?.keep(result.content, call.name);
      return { ...result, content: cutText(result.content, max, link) };
    },
  };
}

/** Replaces every known secret in a result's text, structured content and links, and in every listing. */
export function redaction(redactor: Redactor): Middleware {
  return {
    name: "redaction",
    filter: (list) => (redactor.size === 0 ? list : redactor.redactJson(list)),
    after(result) {
      if (redactor.size === 0) return result;
      const out: CallToolResult = { ...result, content: result.content.map((b) => redactBlock(b, redactor)) };
      if (result.structuredContent !== undefined) out.structuredContent = redactor.redactJson(result.structuredContent);
      return out;
    },
  };
}

export interface UntrustedMarkingOptions {
  /** Default: a wrapper with a fresh nonce per result, scanning for injection. */
  wrapper?: UntrustedWrapper;
  /** The marker's source attribute. Default `mcp:<tool name>`. */
  source?: (call: ToolCall) => string;
}

/**
 * Puts the text of every result between untrusted-content markers (look-alikes inside
 * neutralised; injection patterns scanned), so the agent reading it can tell data from
 * instructions. Give the wrapper's `instructions()` to that agent, e.g. in the server's
 * `instructions`.
 */
export function untrustedMarking(options: UntrustedMarkingOptions = {}): Middleware {
  const wrapper = options.wrapper ?? new UntrustedWrapper();
  return {
    name: "untrustedMarking",
    after(result, call) {
      const source = options.source?.(call) ?? `mcp:${call.name}`;
      return { ...result, content: result.content.map((b) => (b.type === "text" ? { ...b, text: wrapper.wrap(b.text, source) } : b)) };
    },
  };
}

function textLength(content: readonly ContentBlock[]): number {
  let n = 0;
  for (const b of content) n += textOf(b)?.length ?? 0;
  return n;
}

function textOf(b: ContentBlock): string | undefined {
  if (b.type === "text") return b.text;
  if (b.type === "resource" && "text" in b.resource && typeof b.resource.text === "string") return b.resource.text;
  return undefined;
}

/** The parts whose text fits in `max`, the part that crosses it cut, then the marker (or the link). */
function cutText(content: readonly ContentBlock[], max: number, link: ContentBlock | undefined): ContentBlock[] {
  const out: ContentBlock[] = [];
  let left = max;
  let cut = 0;
  for (const b of content) {
    const text = textOf(b);
    if (text === undefined) {
      out.push(b);
    } else if (cut > 0 || left === 0) {
      cut += text.length;
    } else if (text.length <= left) {
      left -= text.length;
      out.push(b);
    } else {
      const keep = safeCutIndex(text, left);
      cut += text.length - keep;
      left = 0;
      out.push(withText(b, text.slice(0, keep)));
    }
  }
  out.push(link ?? { type: "text", text: cutMarker(cut) });
  return out;
}

/** A text or embedded text part with other text. */
function withText(b: ContentBlock, text: string): ContentBlock {
  if (b.type === "text") return { ...b, text };
  if (b.type === "resource") return { ...b, resource: { ...b.resource, text } };
  return b;
}

function redactBlock(b: ContentBlock, redactor: Redactor): ContentBlock {
  switch (b.type) {
    case "text":
      return { ...b, text: redactor.redact(b.text) };
    case "resource_link":
      return redactor.redactJson(b);
    case "resource":
      return "text" in b.resource ? { ...b, resource: { ...b.resource, text: redactor.redact(b.resource.text), uri: redactor.redact(b.resource.uri) } } : b;
    default:
      return b;
  }
}
