/**
 * One server's tool list as its connection keeps it: cached under a TTL, re-read after
 * `tools/list_changed` (debounced), stripped of known secrets, and kept as the same array
 * while unchanged, so that its identity means "same tools".
 */
import { errorMessage } from "../jsonrpc/errors.ts";
import type { Tool } from "../mcp/types.ts";
import type { Redactor } from "../security/redact.ts";
import { sameJson } from "../util/json.ts";
import { TtlCache } from "./cache.ts";
import type { WarningKind } from "./events.ts";

export interface ToolListOptions {
  server: string;
  redactor: Redactor;
  /** Lifetime of the cached list, ms. Default 5 minutes. */
  ttlMs?: number;
  /** Wait after `tools/list_changed` before re-reading, ms. Default 100. */
  debounceMs?: number;
  /** The cache's clock, ms. Default `Date.now`. */
  now?: () => number;
  /** The list differs from the last one known. */
  onChange(): void;
  warn(kind: WarningKind, message: string): void;
}

/**
 * A server's tools with every known secret redacted from everything but the name (titles,
 * descriptions, schemas, annotations, `_meta`), copies made only where one was found. A tool
 * whose *name* holds a secret cannot be renamed (calls need the name) and is left out: its
 * redacted name is in `hidden`. Returns `tools` itself when nothing changed.
 */
export function redactTools(tools: readonly Tool[], redactor: Redactor): { tools: readonly Tool[]; hidden: string[] } {
  const clean = redactor.redactJson(tools);
  if (clean === tools) return { tools, hidden: [] };
  const hidden = clean.filter((tool, i) => tool.name !== tools[i]!.name).map((tool) => tool.name);
  return { tools: hidden.length === 0 ? clean : clean.filter((tool, i) => tool.name === tools[i]!.name), hidden };
}

export class ToolList {
  private readonly options: ToolListOptions & { debounceMs: number };
  private readonly cache: TtlCache<"tools", Tool[]>;
  private known: readonly Tool[] | undefined;
  private debounceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ToolListOptions) {
    this.options = { ...options, debounceMs: options.debounceMs ?? 100 };
    this.cache = new TtlCache({ ttlMs: options.ttlMs, now: options.now });
  }

  /** The last list (redacted); undefined before the first. Kept while the server restarts. */
  get current(): readonly Tool[] | undefined {
    return this.known;
  }

  /**
   * A list just read (at the handshake): cached and taken. `ttlMs`: the server's cache hint
   * (stateless era), which may shorten the lifetime, never lengthen it; 0 or none changes
   * nothing (docs/decisions.md 132).
   */
  set(tools: Tool[], ttlMs?: number): void {
    this.cache.set("tools", tools, ttlMs);
    this.update(tools);
  }

  /**
   * Re-reads through `load` if the cached list expired or was invalidated; `live()` says
   * whether the connection that loads is still the current one when the answer comes. A
   * failure keeps the previous list and is reported as a `tools_refresh` warning.
   */
  async refresh(load: () => Promise<Tool[]>, live: () => boolean, ttlMs?: () => number | undefined): Promise<void> {
    try {
      const tools = await this.cache.getOrLoad("tools", load, ttlMs);
      if (live()) this.update(tools);
    } catch (err) {
      if (live()) {
        this.options.warn("tools_refresh", `server ${JSON.stringify(this.options.server)}: re-reading the tool list failed, keeping the previous one: ${errorMessage(err)}`);
      }
    }
  }

  /** `tools/list_changed`: forget the cached list and call `reread` after the debounce. */
  changed(reread: () => void): void {
    this.cache.invalidate("tools");
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      reread();
    }, this.options.debounceMs);
  }

  /** The connection is lost: the cached list goes (the last known one stays), no re-read is due. */
  invalidate(): void {
    this.cache.invalidate("tools");
    this.stop();
  }

  stop(): void {
    clearTimeout(this.debounceTimer);
    this.debounceTimer = undefined;
  }

  private update(listed: Tool[]): void {
    const { tools, hidden } = redactTools(listed, this.options.redactor);
    if (this.known !== undefined && sameJson(this.known, tools)) return;
    this.known = tools;
    if (hidden.length > 0) {
      const server = JSON.stringify(this.options.server);
      this.options.warn("secret_in_tool_name", `server ${server}: tools left out because their names contain a configured secret: ${hidden.join(", ")}`);
    }
    this.options.onChange();
  }
}
