/**
 * SpilledResults: the whole text of results `resultLimits` cut, kept as resources the client
 * can read (`mcp-bridge://result-<random>`: no path after the authority, so no composite
 * namespace can be mistaken for it, docs/decisions.md 126). Memory is bounded: the oldest
 * entries go first. A URI is a random 122-bit UUID, not guessable by another client.
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { ServerProvider } from "../mcp/provider-types.ts";
import type { ContentBlock, ReadResourceResult, ResourceLink } from "../mcp/types.ts";

export interface SpilledResultsOptions {
  /** Results kept at most; the oldest is dropped first. Default 100. */
  maxEntries?: number;
}

const PREFIX = "mcp-bridge://result-";

/**
 * Give the same instance to `resultLimits({ spill })` and to the server's `providers`:
 *
 * ```ts
 * const spill = new SpilledResults();
 * new McpServer(info, { providers: [upstreams, spill], middleware: [resultLimits({ maxTextChars: 20_000, spill })] });
 * ```
 */
export class SpilledResults implements ServerProvider {
  private readonly kept = new Map<string, string>();
  private readonly maxEntries: number;

  constructor(options: SpilledResultsOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError(`SpilledResults: maxEntries must be a positive integer, got ${this.maxEntries}`);
  }

  /** Keeps the text of `content` and returns the link to it. */
  keep(content: readonly ContentBlock[], tool: string): ResourceLink {
    const text = content.map((b) => (b.type === "text" ? b.text : b.type === "resource" && "text" in b.resource ? b.resource.text : "")).filter((t) => t !== "").join("\n");
    const uri = `${PREFIX}${crypto.randomUUID()}`;
    this.kept.set(uri, text);
    if (this.kept.size > this.maxEntries) this.kept.delete(this.kept.keys().next().value!);
    return {
      type: "resource_link",
      uri,
      name: `result of ${tool}`,
      description: `The whole text (${text.length} characters) of a result too long to send; read it to get the rest.`,
      mimeType: "text/plain",
    };
  }

  /** Spilled results are read, never listed (they belong to the call that made them). */
  listResources(): [] {
    return [];
  }

  readResource(uri: string): ReadResourceResult {
    const text = this.kept.get(uri);
    if (text === undefined) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    return { contents: [{ uri, mimeType: "text/plain", text }] };
  }
}
