/**
 * What an agent sees through the bridge: tools (an MCP tool plus its bridged name and server)
 * and results (every MCP content type in one neutral shape; built by `results.ts`).
 */
import type { Annotations, JsonSchema, Tool, ToolAnnotations } from "../mcp/types.ts";

/**
 * A server's tool under its bridged name. `inputSchema` and `outputSchema` are the very
 * objects the server sent (same references, never cloned, narrowed or rewritten), so an agent
 * hands the model exactly what the server declared.
 */
export interface BridgedTool {
  /** The bridged name (`mcp__fs__read_file`); the name the model calls. */
  readonly name: string;
  /** The tool's name on its server; what `tools/call` is sent with. */
  readonly originalName: string;
  /** The configured server name (not its `toolPrefix`). */
  readonly server: string;
  /** Display name: `title`, else `annotations.title`, else the original name. */
  readonly title: string;
  readonly description?: string;
  /** Hints only; from an untrusted server they are claims, not facts. */
  readonly annotations?: ToolAnnotations;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
}

/** Display name precedence of MCP: `title`, then `annotations.title`, then `name`. */
export function displayTitle(tool: Tool): string {
  if (typeof tool.title === "string" && tool.title !== "") return tool.title;
  const fromAnnotations = tool.annotations?.title;
  if (typeof fromAnnotations === "string" && fromAnnotations !== "") return fromAnnotations;
  return tool.name;
}

/**
 * Bridges a server's listed tools under the names a `ToolNamer` assigned
 * (`namer.assign(server, tools, prefix)`). Keeps the server's order; a tool listed twice under
 * one name is bridged once (the first listing wins) and reported in `duplicates`; a tool
 * without an assigned name is skipped.
 */
export function bridgeTools(
  server: string,
  tools: readonly Tool[],
  names: ReadonlyMap<string, string>,
): { tools: BridgedTool[]; duplicates: string[] } {
  const out: BridgedTool[] = [];
  const duplicates: string[] = [];
  const done = new Set<string>();
  for (const tool of tools) {
    const name = names.get(tool.name);
    if (name === undefined) continue;
    if (done.has(tool.name)) {
      duplicates.push(tool.name);
      continue;
    }
    done.add(tool.name);
    const bridged: {
      -readonly [K in keyof BridgedTool]: BridgedTool[K];
    } = { name, originalName: tool.name, server, title: displayTitle(tool), inputSchema: tool.inputSchema };
    if (tool.description !== undefined) bridged.description = tool.description;
    if (tool.annotations !== undefined) bridged.annotations = tool.annotations;
    if (tool.outputSchema !== undefined) bridged.outputSchema = tool.outputSchema;
    out.push(bridged);
  }
  return { tools: out, duplicates };
}

// ---------------------------------------------------------------------------------------------
// Results

/**
 * One piece of a result. Binary `data`/`blob` stay base64, as the server sent them. A text
 * part with `origin: "bridge"` is mcp-bridge's own writing (a note, a cut marker, a failure
 * explanation); every other part came from the server.
 */
export type BridgedContent =
  | { type: "text"; text: string; origin?: "bridge"; annotations?: Annotations }
  | { type: "image" | "audio"; mimeType: string; data: string; annotations?: Annotations }
  | {
      type: "resource_link";
      uri: string;
      name: string;
      title?: string;
      description?: string;
      mimeType?: string;
      size?: number;
      annotations?: Annotations;
    }
  | { type: "resource_text"; uri: string; mimeType?: string; text: string; annotations?: Annotations }
  | { type: "resource_blob"; uri: string; mimeType?: string; blob: string; annotations?: Annotations };

/** Why a call failed at the bridge boundary (as opposed to a tool's own `isError` result). */
export type FailureKind =
  | "timeout"
  | "cancelled"
  | "crashed"
  | "restarting"
  | "unavailable"
  | "protocol"
  | "rejected"
  | "invalid_result"
  | "unknown_tool"
  | "rate_limited"
  | "denied"
  | "policy"
  | "limit"
  | "auth"
  | "internal";

/** What the limits removed from a result. */
export interface TruncationReport {
  /** Characters of text cut. */
  textChars: number;
  /** Image, audio and blob parts replaced by a note. */
  binaryParts: number;
  /** `structuredContent` was dropped for being over the text limit. */
  structured: boolean;
}

export interface BridgedResult {
  /** True for a tool's own error result and for every bridge failure. */
  isError: boolean;
  content: BridgedContent[];
  /** The server's `structuredContent` (same object), when within the text limit. */
  structured?: Record<string, unknown>;
  /** All content flattened to text, for models that take text only. */
  text: string;
  /**
   * Set when the server's text was marked as untrusted content: the same parts without the
   * markers, for a person to read (an editor's tool-call display). `content` and `text` are
   * what the model gets; never give it this.
   */
  display?: BridgedContent[];
  truncated?: TruncationReport;
  /** Set only when the bridge produced this result because the call failed. */
  failure?: { kind: FailureKind; retryable: boolean };
}
