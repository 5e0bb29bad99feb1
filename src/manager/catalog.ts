/**
 * The tool set a manager exposes: every server's tools under their bridged names, filtered by
 * the allow/deny policy, then cut to the tool limit.
 *
 * Deterministic by construction: servers are taken in config order and each server's tools in
 * the order the server listed them, so the same inputs always expose (and drop) the same tools.
 * Policy comes before the limit, so a denied tool never takes a place. Names come from one
 * `ToolNamer` per manager and survive restarts (see `bridge/naming.ts`).
 */
import { bridgeTools, type BridgedTool } from "../bridge/types.ts";
import type { ToolNamer } from "../bridge/naming.ts";
import type { ResolvedServerConfig } from "../config/types.ts";
import type { Tool } from "../mcp/types.ts";
import { ToolPolicy, type ToolPolicyOptions } from "../security/policy.ts";
import { sameJson } from "../util/json.ts";
import type { ManagerWarning, ToolsChange } from "./events.ts";

/** One server as the catalog sees it. */
export interface CatalogServer {
  config: ResolvedServerConfig;
  /** Its current tools; empty when it has none to offer (failed, closed, not yet listed). */
  tools: readonly Tool[];
}

/** A tool the catalog exposes. */
export interface CatalogEntry {
  bridged: BridgedTool;
  tool: Tool;
  config: ResolvedServerConfig;
}

/** Why a name cannot be called. */
export type Refusal = { kind: "unknown_tool" | "policy" | "limit"; message: string };

export interface CatalogUpdate {
  change: ToolsChange;
  /** Set when the tools dropped by the limit differ from the previous update's. */
  dropped?: string[];
  /** Tool names a server listed more than once, per server; reported once per list. */
  duplicates: { server: string; names: string[] }[];
}

interface ServerNames {
  from: readonly Tool[];
  tools: BridgedTool[];
  source: Map<string, Tool>;
}

/** Former names remembered (see `ToolCatalog.formerly`): a few times the default tool limit. */
const MAX_FORMER_NAMES = 1_000;

export class ToolCatalog {
  private readonly namer: ToolNamer;
  private readonly maxTools: number;
  private readonly global: ToolPolicy;
  private readonly policies = new Map<string, ToolPolicy>();
  private readonly servers = new Map<string, ServerNames>();
  private entries = new Map<string, CatalogEntry>();
  private ordered: BridgedTool[] = [];
  private droppedNames = new Set<string>();
  private droppedKey = "";
  /**
   * Names exposed once and gone since with their server's tools (it failed, closed or is
   * restarting), so that a call of one can say what happened to its server. Bounded.
   */
  private readonly former = new Map<string, { server: string; tool: string }>();

  constructor(options: { namer: ToolNamer; maxTools: number; policy?: ToolPolicyOptions }) {
    this.namer = options.namer;
    this.maxTools = options.maxTools;
    this.global = new ToolPolicy(options.policy ?? {});
  }

  /** Exposed tools, in order. */
  list(): BridgedTool[] {
    return [...this.ordered];
  }

  get size(): number {
    return this.ordered.length;
  }

  /** The exposed tool behind a bridged name. */
  get(name: string): CatalogEntry | undefined {
    return this.entries.get(name);
  }

  /** The server and original name of a tool exposed once and gone since (not of a removed server). */
  formerly(name: string): { server: string; tool: string } | undefined {
    return this.former.get(name);
  }

  /** Why `name` is not exposed (call only when {@link get} found nothing). */
  refusal(name: string): Refusal {
    const ref = this.namer.resolve(name);
    const shown = JSON.stringify(name);
    if (ref === undefined) {
      return { kind: "unknown_tool", message: `There is no tool named ${shown}. Use one of the tools listed; tool names are case-sensitive.` };
    }
    const policy = this.policies.get(ref.server);
    if (policy !== undefined && !policy.permits(name)) return { kind: "policy", message: policy.explain(name) };
    if (!this.global.permits(name)) return { kind: "policy", message: this.global.explain(name) };
    if (this.droppedNames.has(name)) {
      return {
        kind: "limit",
        message: `Tool ${shown} is not available: the session's limit of ${this.maxTools} tools was reached and it was left out. Use one of the tools listed.`,
      };
    }
    return { kind: "unknown_tool", message: `Tool ${shown} is not available right now: its server offers no such tool at the moment.` };
  }

  /** Forgets a removed server's names. Follow with {@link update}. */
  removeServer(server: string): void {
    for (const [name, ref] of this.former) if (ref.server === server) this.former.delete(name);
    this.servers.delete(server);
    this.policies.delete(server);
    this.namer.release(server);
  }

  /** Recomputes the exposed set from every server's current tools (in config order). */
  update(servers: readonly CatalogServer[]): CatalogUpdate {
    const duplicates: CatalogUpdate["duplicates"] = [];
    const permitted: CatalogEntry[] = [];
    for (const { config, tools } of servers) {
      const names = this.namesFor(config, tools, duplicates);
      const policy = this.policyFor(config);
      for (const bridged of names.tools) {
        if (!policy.permits(bridged.name) || !this.global.permits(bridged.name)) continue;
        permitted.push({ bridged, tool: names.source.get(bridged.originalName)!, config });
      }
    }
    const kept = permitted.slice(0, this.maxTools);
    const dropped = permitted.slice(this.maxTools).map((e) => e.bridged.name);

    const next = new Map(kept.map((e) => [e.bridged.name, e] as const));
    const change: ToolsChange = { added: [], removed: [], changed: [], count: kept.length };
    for (const [name, entry] of next) {
      const old = this.entries.get(name);
      if (old === undefined) change.added.push(name);
      else if (old.tool !== entry.tool && !sameJson(old.tool, entry.tool)) change.changed.push(name);
    }
    const configured = new Set(servers.map((s) => s.config.name));
    for (const [name, old] of this.entries) {
      if (next.has(name)) continue;
      change.removed.push(name);
      this.former.delete(name);
      if (configured.has(old.config.name)) this.former.set(name, { server: old.config.name, tool: old.bridged.originalName });
    }
    for (const name of next.keys()) this.former.delete(name);
    while (this.former.size > MAX_FORMER_NAMES) this.former.delete(this.former.keys().next().value!);
    this.entries = next;
    this.ordered = kept.map((e) => e.bridged);
    this.droppedNames = new Set(dropped);

    const update: CatalogUpdate = { change, duplicates };
    const key = dropped.join("\n");
    if (key !== this.droppedKey) {
      this.droppedKey = key;
      update.dropped = dropped;
    }
    return update;
  }

  private namesFor(config: ResolvedServerConfig, tools: readonly Tool[], duplicates: CatalogUpdate["duplicates"]): ServerNames {
    const known = this.servers.get(config.name);
    if (known !== undefined && known.from === tools) return known;
    const assigned = this.namer.assign(config.name, tools, config.toolPrefix);
    const bridged = bridgeTools(config.name, tools, assigned);
    if (bridged.duplicates.length > 0) duplicates.push({ server: config.name, names: bridged.duplicates });
    const source = new Map<string, Tool>();
    for (const tool of tools) if (!source.has(tool.name)) source.set(tool.name, tool);
    const entry: ServerNames = { from: tools, tools: bridged.tools, source };
    this.servers.set(config.name, entry);
    return entry;
  }

  private policyFor(config: ResolvedServerConfig): ToolPolicy {
    let policy = this.policies.get(config.name);
    if (policy === undefined) {
      policy = new ToolPolicy({ allow: config.allow, deny: config.deny, server: config.name });
      this.policies.set(config.name, policy);
    }
    return policy;
  }
}

/**
 * The warnings an update owes the manager's listeners: one `duplicate_tool` per server that
 * listed a name twice, and one `tool_limit` when the set of tools left out by `limit` changed.
 */
export function catalogWarnings(update: CatalogUpdate, limit: number, at = Date.now()): ManagerWarning[] {
  const out: ManagerWarning[] = update.duplicates.map(({ server, names }) => ({
    kind: "duplicate_tool",
    server,
    message: `server ${JSON.stringify(server)} lists these tool names more than once; the first listing is used: ${names.join(", ")}`,
    dropped: names,
    at,
  }));
  const dropped = update.dropped;
  if (dropped !== undefined && dropped.length > 0) {
    const shown = dropped.slice(0, 20).join(", ") + (dropped.length > 20 ? `, and ${dropped.length - 20} more` : "");
    out.push({
      kind: "tool_limit",
      message: `the limit of ${limit} tools per session was reached; ${dropped.length} tools were left out: ${shown}`,
      dropped,
      at,
    });
  }
  return out;
}
