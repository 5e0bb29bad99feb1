/**
 * What the CLI prints for a result: tool results, resource contents, prompt messages and
 * completions, each for people (the default) or as JSON. Results come from the server and are
 * untrusted: the shapes are checked here before use, since the client passes these results on
 * as received; a result that does not fit is an `INVALID_RESULT` (a protocol error).
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type {
  CallToolResult,
  CompleteResult,
  ContentBlock,
  GetPromptResult,
  ReadResourceResult,
  ResourceContents,
} from "../mcp/types.ts";
import { isContentBlock, McpMethod } from "../mcp/types.ts";
import { isPlainObject as isObject } from "../util/object.ts";

/** One content block for people: text as is, other blocks as one-line summaries. */
function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
    case "resource_link":
      return `[link ${block.uri}]`;
    case "resource":
      return renderContents([block.resource]);
    default:
      return `[${(block as { type: string }).type}]`;
  }
}

/** Renders a tool result for people: its blocks, then its structured content as JSON. */
export function renderResult(result: CallToolResult): string {
  const lines = result.content.map(renderBlock);
  if (result.structuredContent !== undefined) lines.push(`structured: ${JSON.stringify(result.structuredContent)}`);
  return lines.join("\n");
}

/** Resource contents: a text as is, a blob as a summary; several under a header line each. */
export function renderContents(contents: readonly ResourceContents[]): string {
  const one = (c: ResourceContents) =>
    "text" in c ? c.text : `[blob ${c.uri}${c.mimeType ? `, ${c.mimeType}` : ""}, ${base64Bytes(c.blob)} bytes]`;
  if (contents.length === 1) return one(contents[0]!);
  return contents.map((c) => `--- ${c.uri}${c.mimeType ? ` (${c.mimeType})` : ""}\n${one(c)}`).join("\n");
}

/** A prompt's messages, each as `role: content`, after its description if it has one. */
export function renderPrompt(result: GetPromptResult): string {
  const lines = result.description ? [`# ${result.description}`] : [];
  for (const m of result.messages) lines.push(`${m.role}: ${renderBlock(m.content)}`);
  return lines.join("\n");
}

/** Bytes a base64 text decodes to (without decoding it). */
function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function invalid(method: string, what: string): BridgeError {
  return new BridgeError("INVALID_RESULT", `${method}: the server's result ${what}`, { details: { method } });
}

function isContents(v: unknown): v is ResourceContents {
  return isObject(v) && typeof v.uri === "string" && (typeof v.text === "string" || typeof v.blob === "string");
}

/** Checks a `resources/read` result. */
export function checkReadResult(value: ReadResourceResult): ReadResourceResult {
  const contents: unknown = isObject(value) ? value.contents : undefined;
  if (!Array.isArray(contents) || !contents.every(isContents)) {
    throw invalid(McpMethod.ResourcesRead, "needs contents: [{uri, text or blob}]");
  }
  return value;
}

/** Checks a `prompts/get` result. */
export function checkPromptResult(value: GetPromptResult): GetPromptResult {
  const messages: unknown = isObject(value) ? value.messages : undefined;
  const ok = Array.isArray(messages) && messages.every((m) => isObject(m) && typeof m.role === "string" && isContentBlock(m.content));
  if (!ok) throw invalid(McpMethod.PromptsGet, "needs messages: [{role, content}]");
  return value;
}

/** Checks a `completion/complete` result. */
export function checkCompleteResult(value: CompleteResult): CompleteResult {
  const completion: unknown = isObject(value) ? value.completion : undefined;
  const values: unknown = isObject(completion) ? completion.values : undefined;
  if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) {
    throw invalid(McpMethod.CompletionComplete, "needs completion.values: string[]");
  }
  return value;
}
