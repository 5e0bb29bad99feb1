/**
 * From the bridge's neutral shapes to ACP's: a tool's annotations to a `ToolKind`, a bridged
 * result to `ToolCallContent`. Every object built here matches ACP v1's schema exactly: no
 * field the schema lacks, no `undefined` where a value is required.
 */
import type { BridgedContent, BridgedResult } from "../bridge/types.ts";
import type { ToolAnnotations } from "../mcp/types.ts";
import type { ContentBlock, ToolCallContent, ToolKind } from "./types.ts";

/**
 * The ACP kind of an MCP tool, from its hints (claims, not facts, for an untrusted server):
 * read-only tools `read` (`fetch` when they reach the open world), destructive ones `delete`,
 * other tools that say they are not read-only `edit`, and everything else `other`.
 */
export function toolKind(annotations: ToolAnnotations | undefined): ToolKind {
  if (annotations === undefined) return "other";
  if (annotations.readOnlyHint === true) return annotations.openWorldHint === true ? "fetch" : "read";
  if (annotations.destructiveHint === true) return "delete";
  if (annotations.readOnlyHint === false) return "edit";
  return "other";
}

/** A text content block. */
export function textBlock(text: string): ContentBlock {
  return { type: "text", text };
}

/** One ACP content block per part of a bridged result (annotations are not carried over). */
function contentBlocks(content: readonly BridgedContent[]): ContentBlock[] {
  return content.map((part): ContentBlock => {
    switch (part.type) {
      case "text":
        return { type: "text", text: part.text };
      case "image":
        return { type: "image", data: part.data, mimeType: part.mimeType };
      case "audio":
        return { type: "audio", data: part.data, mimeType: part.mimeType };
      case "resource_link": {
        const link: ContentBlock = { type: "resource_link", uri: part.uri, name: part.name };
        if (part.title !== undefined) link.title = part.title;
        if (part.description !== undefined) link.description = part.description;
        if (part.mimeType !== undefined) link.mimeType = part.mimeType;
        if (part.size !== undefined) link.size = part.size;
        return link;
      }
      case "resource_text":
        return { type: "resource", resource: withMime({ uri: part.uri, text: part.text }, part.mimeType) };
      case "resource_blob":
        return { type: "resource", resource: withMime({ uri: part.uri, blob: part.blob }, part.mimeType) };
    }
  });
}

/**
 * The content of a finished tool call, for the editor to show a person: every part of the
 * result as the server sent it (its `display`, without the untrusted-content markers the
 * model's copy carries), or its text when it has no parts (a bridge failure always has text).
 */
export function toolCallContent(result: BridgedResult): ToolCallContent[] {
  const parts = result.display ?? result.content;
  const blocks = parts.length > 0 ? contentBlocks(parts) : [textBlock(result.text)];
  return blocks.map((content) => ({ type: "content", content }));
}

function withMime<T extends object>(resource: T, mimeType: string | undefined): T & { mimeType?: string } {
  return mimeType === undefined ? resource : { ...resource, mimeType };
}
