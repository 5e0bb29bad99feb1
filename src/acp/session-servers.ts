/**
 * The servers of an ACP session, worked out from a `session/new`, `load` or `resume` request
 * before anything runs: the editor's `mcpServers` (parsed, or claimed by an MCP-over-ACP hook),
 * the agent's own servers, and the config files of the global directory and of the session's
 * `cwd`, merged by `discoverConfigs` (global < workspace < agent < session; a workspace file
 * cannot grant trust, docs/decisions.md 17). Also: which running servers a reload must stop
 * and which it must start, and the client features (roots among them) the session offers.
 */
import { isAbsolute, basename } from "node:path";
import { pathToFileURL } from "node:url";
import { defaultGlobalConfigDir, discoverConfigs } from "../config/discovery.ts";
import { parseAcpMcpServers } from "../config/parse-acp.ts";
import type { ConfigProblem, McpServerConfig, TrustLevel } from "../config/types.ts";
import type { ClientFeatures, ServerRequestContext } from "../manager/client-features.ts";
import type { TransportFactory } from "../manager/transport-factory.ts";
import type { CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root } from "../mcp/types.ts";
import { invalidParams } from "./connection.ts";
import type { AcpMcpSessionsOptions } from "./sessions.ts";
import { isPlainObject } from "../util/object.ts";

/** What a session's client-feature handlers are told: the server asking, and the session. */
export interface SessionRequestContext extends ServerRequestContext {
  readonly sessionId: string;
}

/**
 * The client features a session offers its servers. Roots (the session's `cwd` and
 * `additionalDirectories`) are on by default; sampling and elicitation only with a handler.
 */
export interface AcpClientFeatures {
  /** Offer the session's directories as roots. Default true. */
  roots?: boolean;
  sampling?: (params: CreateMessageRequestParams, ctx: SessionRequestContext) => CreateMessageResult | Promise<CreateMessageResult>;
  /** Name the server to the user; show a URL in full and open it only with consent. */
  elicitation?: (params: ElicitRequestParams, ctx: SessionRequestContext) => ElicitResult | Promise<ElicitResult>;
  /** Modes declared with `elicitation`. Default form and url. */
  elicitationModes?: { form?: boolean; url?: boolean };
  onElicitationComplete?: (event: { sessionId: string; server: string; elicitationId: string }) => void;
}

/** The fields of `session/new`, `session/load` and `session/resume` that decide the servers. */
export interface SessionServersRequest {
  cwd: string;
  /** Absent (a `resume`, or a lenient `load`): the session keeps the editor's previous list. */
  mcpServers?: readonly unknown[];
  additionalDirectories?: readonly unknown[];
}

/** Where the servers of a session come from, besides the editor (see `AcpMcpSessionsOptions`). */
export type PlanOptions = Pick<AcpMcpSessionsOptions, "agentServers" | "clientServersTrust" | "mcpOverAcp" | "globalConfigDir" | "workspaceConfig">;

/** The servers a session should run. */
export interface ServerPlan {
  /** The editor's entries this plan was made from (kept for a later `resume` without a list). */
  entries: readonly unknown[];
  /** Enabled configs, merged, in order. */
  servers: McpServerConfig[];
  trust: ReadonlyMap<string, TrustLevel>;
  /** Servers whose winning definition the editor sent. */
  fromClient: ReadonlySet<string>;
  /** The MCP-over-ACP hook's factory for its tunnels, when it claimed entries. */
  transportFactory?: TransportFactory;
  roots: Root[];
}

/**
 * Plans a session's servers. Throws `-32602` listing every problem of malformed `entries`
 * (paths point into the request's `mcpServers`), never a secret; other problems are logged.
 */
export async function planServers(sessionId: string, request: SessionServersRequest, entries: readonly unknown[], options: PlanOptions, log: (line: string) => void): Promise<ServerPlan> {
  const hook = options.mcpOverAcp;
  const claimed = hook === undefined ? [] : entries.filter((e) => hook.claims(e));
  const plain = entries.map((e, i) => ({ e, i })).filter(({ e }) => !claimed.includes(e));
  const parsed = parseAcpMcpServers(plain.map(({ e }) => e));
  const problems = parsed.problems.map((p) => ({ ...p, path: `/mcpServers${reindex(p.path, plain.map(({ i }) => i))}` }));
  const errors = problems.filter((p) => p.severity === "error");
  if (errors.length > 0) {
    const list = errors.map((p) => `${p.path}: ${p.message}`).join("; ");
    throw invalidParams(`mcpServers: ${list}`, { problems: errors.map(({ path, message }) => ({ path, message })) });
  }
  for (const p of problems) log(`${p.path}: ${p.message}`);

  const trust = options.clientServersTrust ?? "trusted";
  const fromClient = parsed.servers.map((c): McpServerConfig => ({ ...c, trust, ...(c.transport === "stdio" ? { cwd: request.cwd } : {}) }));
  const bound = hook === undefined || claimed.length === 0 ? { servers: [] } : hook.open(sessionId, claimed);
  const tunnelled = bound.servers.map((c) => (c.trust === undefined ? { ...c, trust } : c));
  const globalDir = options.globalConfigDir ?? defaultGlobalConfigDir();
  const merged = await discoverConfigs({
    ...(globalDir === false ? {} : { globalDir }),
    ...(options.workspaceConfig === false || !isAbsolute(request.cwd) ? {} : { cwd: request.cwd }),
    agentServers: options.agentServers,
    sessionServers: [...fromClient, ...tunnelled],
    log,
  });
  for (const p of merged.problems) log(describe(p));
  return {
    entries,
    servers: merged.servers,
    trust: new Map(merged.servers.map((c) => [c.name, c.trust ?? "untrusted"] as const)),
    fromClient: new Set(Object.keys(merged.sources).filter((name) => merged.sources[name] === "session")),
    ...(bound.transportFactory === undefined ? {} : { transportFactory: bound.transportFactory }),
    roots: rootsOf(request),
  };
}

/**
 * What moves a running set of servers to `next`: servers gone or changed stop, new or changed
 * ones start, and a server whose config is the same (key order aside) keeps running.
 */
export function serverChanges(running: readonly McpServerConfig[], next: readonly McpServerConfig[]): { stop: string[]; start: McpServerConfig[]; kept: string[] } {
  const before = new Map(running.map((c) => [c.name, canonical(c)]));
  const after = new Set(next.map((c) => c.name));
  const start = next.filter((c) => before.get(c.name) !== canonical(c));
  const starting = new Set(start.map((c) => c.name));
  return {
    stop: running.filter((c) => !after.has(c.name) || starting.has(c.name)).map((c) => c.name),
    start,
    kept: next.filter((c) => !starting.has(c.name)).map((c) => c.name),
  };
}

/** The manager-level client features of one session, from the agent's; roots come from its plan. */
export function sessionClientFeatures(sessionId: string, features: AcpClientFeatures = {}, plan: () => ServerPlan | undefined): ClientFeatures {
  const { sampling, elicitation, onElicitationComplete } = features;
  return {
    ...(features.roots === false ? {} : { roots: () => plan()?.roots ?? [] }),
    ...(sampling === undefined ? {} : { sampling: (params, ctx) => sampling(params, { ...ctx, sessionId }) }),
    ...(elicitation === undefined ? {} : { elicitation: (params, ctx) => elicitation(params, { ...ctx, sessionId }) }),
    ...(features.elicitationModes === undefined ? {} : { elicitationModes: features.elicitationModes }),
    ...(onElicitationComplete === undefined ? {} : { onElicitationComplete: (event) => onElicitationComplete({ ...event, sessionId }) }),
  };
}

/** The session's roots: `cwd`, then each additional directory; only absolute paths, no repeats. */
export function rootsOf(request: SessionServersRequest): Root[] {
  const dirs = [request.cwd, ...(request.additionalDirectories ?? [])].filter((d): d is string => typeof d === "string" && isAbsolute(d));
  return [...new Set(dirs)].map((dir) => {
    const name = basename(dir);
    return name === "" ? { uri: pathToFileURL(dir).href } : { uri: pathToFileURL(dir).href, name };
  });
}

/** JSON text with object keys sorted, so that key order never counts as a change. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** `/3/name` of a filtered list back to the index in the original list. */
function reindex(path: string, indexes: readonly number[]): string {
  const m = /^\/(\d+)(.*)$/.exec(path);
  if (m === null) return path;
  const original = indexes[Number(m[1])];
  return original === undefined ? path : `/${original}${m[2]}`;
}

function describe(p: ConfigProblem): string {
  return `${p.severity} ${p.source ?? ""}${p.path}: ${p.message}`;
}
