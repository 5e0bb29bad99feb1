/**
 * Resources and prompts across a manager's servers. Unlike tool calls these are asked for by
 * the application, not the model, so failures throw a {@link ManagerError}; its message is
 * redacted and names the server and what to do. Listing across servers never fails as a whole:
 * a server that cannot answer is skipped with a warning.
 *
 * A server's `resources: false` hides its resources entirely, and its `resourceFilter` limits
 * both listing and reading. Text from `untrusted` servers is wrapped in boundary markers.
 */
import { buildResourceContext, ResourceFilter, type ResourceContext, type ResourceEntry } from "../bridge/resources.ts";
import type { UntrustedWrapper } from "../bridge/untrusted.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import type { CallOptions } from "../mcp/client.ts";
import type { GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceContents } from "../mcp/types.ts";
import type { Redactor } from "../security/redact.ts";
import type { ServerConnection } from "./connection.ts";
import type { WarningKind } from "./events.ts";

export type ManagerErrorCode = "UNKNOWN_SERVER" | "NOT_READY" | "RESOURCES_DISABLED" | "RESOURCE_FILTERED" | "REQUEST_FAILED";

/** A refused or failed resource or prompt request. `message` is redacted. */
export class ManagerError extends Error {
  readonly code: ManagerErrorCode;
  readonly server: string;
  constructor(code: ManagerErrorCode, server: string, message: string) {
    super(message);
    this.name = "ManagerError";
    this.code = code;
    this.server = server;
  }
}

/** A resource and the server it belongs to. */
export type ManagedResource = Resource & { server: string };
/** A prompt and the server it belongs to. */
export type ManagedPrompt = Prompt & { server: string };

/** A context block plus the reads that failed (left out of it). */
export type ManagedResourceContext = ResourceContext & { failed: { server: string; uri: string; message: string }[] };

/** What these functions need from the manager. */
export interface ResourceDeps {
  connections(): readonly ServerConnection[];
  connection(server: string): ServerConnection | undefined;
  redactor: Redactor;
  wrapperFor(server: string): UntrustedWrapper | undefined;
  warn(kind: WarningKind, server: string, message: string): void;
}

/** Every resource of every ready server that exposes resources, through its filter. */
export async function listResourcesAcross(deps: ResourceDeps, options: CallOptions = {}): Promise<ManagedResource[]> {
  const lists = await Promise.all(
    deps.connections().map(async (conn): Promise<ManagedResource[]> => {
      if (!conn.config.resources || conn.state !== "ready" || conn.capabilities?.resources === undefined) return [];
      try {
        const all = await conn.use((client) => client.listResources(options));
        return new ResourceFilter(conn.config.resourceFilter).filter(all).map((r) => ({ ...r, server: conn.name }));
      } catch (err) {
        deps.warn("request_failed", conn.name, `server ${JSON.stringify(conn.name)}: listing resources failed: ${errorMessage(err)}`);
        return [];
      }
    }),
  );
  return lists.flat();
}

/** Reads one resource. Text of an untrusted server is wrapped; known secrets are redacted. */
export async function readResourceFrom(deps: ResourceDeps, server: string, uri: string, options: CallOptions = {}): Promise<ReadResourceResult> {
  const raw = await readRaw(deps, server, uri, options);
  const wrapper = deps.wrapperFor(server);
  const contents = raw.contents.map((c): ResourceContents => {
    if (!("text" in c) || typeof c.text !== "string") return c;
    const text = deps.redactor.redact(c.text);
    return { ...c, text: wrapper === undefined ? text : wrapper.wrap(text, `mcp:${server}/${c.uri}`) };
  });
  return { ...raw, contents };
}

/**
 * Reads several resources and renders one size-capped context block (see
 * `buildResourceContext`), untrusted servers' text wrapped. Failed reads are left out and
 * listed in `failed`.
 */
export async function resourceContextFor(
  deps: ResourceDeps,
  refs: readonly { server: string; uri: string }[],
  options: CallOptions & { maxBytes?: number; wrapper: UntrustedWrapper },
): Promise<ManagedResourceContext> {
  const failed: ManagedResourceContext["failed"] = [];
  const reads = await Promise.all(
    refs.map(async ({ server, uri }): Promise<ResourceEntry | undefined> => {
      try {
        const raw = await readRaw(deps, server, uri, options);
        const contents = raw.contents.map((c) => ("text" in c && typeof c.text === "string" ? { ...c, text: deps.redactor.redact(c.text) } : c));
        return { server, uri, contents, untrusted: deps.wrapperFor(server) !== undefined };
      } catch (err) {
        failed.push({ server, uri, message: deps.redactor.redact(errorMessage(err)) });
        return undefined;
      }
    }),
  );
  const entries = reads.filter((e): e is ResourceEntry => e !== undefined);
  const context = buildResourceContext(entries, { maxBytes: options.maxBytes, wrapper: options.wrapper });
  return { ...context, failed };
}

/** Every prompt of every ready server that has prompts. */
export async function listPromptsAcross(deps: ResourceDeps, options: CallOptions = {}): Promise<ManagedPrompt[]> {
  const lists = await Promise.all(
    deps.connections().map(async (conn): Promise<ManagedPrompt[]> => {
      if (conn.state !== "ready" || conn.capabilities?.prompts === undefined) return [];
      try {
        const prompts = await conn.use((client) => client.listPrompts(options));
        return prompts.map((p) => ({ ...p, server: conn.name }));
      } catch (err) {
        deps.warn("request_failed", conn.name, `server ${JSON.stringify(conn.name)}: listing prompts failed: ${errorMessage(err)}`);
        return [];
      }
    }),
  );
  return lists.flat();
}

/** Gets one prompt. Prompts are templates the user picks, so their text is not wrapped. */
export async function getPromptFrom(
  deps: ResourceDeps,
  server: string,
  name: string,
  args: Record<string, string>,
  options: CallOptions = {},
): Promise<GetPromptResult> {
  const conn = readyConnection(deps, server);
  try {
    return await conn.use((client) => client.getPrompt(name, args, options));
  } catch (err) {
    throw failure(deps, server, `getting prompt ${JSON.stringify(name)}`, err);
  }
}

async function readRaw(deps: ResourceDeps, server: string, uri: string, options: CallOptions): Promise<ReadResourceResult> {
  const conn = readyConnection(deps, server);
  const label = `server ${JSON.stringify(server)}`;
  if (!conn.config.resources) {
    throw new ManagerError("RESOURCES_DISABLED", server, `${label} does not expose resources (resources: false in its config)`);
  }
  if (!new ResourceFilter(conn.config.resourceFilter).allows(uri)) {
    const shown = deps.redactor.redact(JSON.stringify(uri.slice(0, 512)));
    throw new ManagerError("RESOURCE_FILTERED", server, `${label}: resource ${shown} is outside its resourceFilter; add a matching glob to read it`);
  }
  try {
    return await conn.use((client) => client.readResource(uri, options));
  } catch (err) {
    throw failure(deps, server, "reading a resource", err);
  }
}

function readyConnection(deps: ResourceDeps, server: string): ServerConnection {
  const conn = deps.connection(server);
  const label = `server ${JSON.stringify(server)}`;
  if (conn === undefined) throw new ManagerError("UNKNOWN_SERVER", server, `there is no ${label} in this session`);
  if (conn.state !== "ready") throw new ManagerError("NOT_READY", server, `${label} is ${conn.state}, not ready; try again when it is`);
  return conn;
}

/** The cause's text is redacted into the message; the cause itself is not kept (it may hold secrets). */
function failure(deps: ResourceDeps, server: string, what: string, err: unknown): ManagerError {
  return new ManagerError("REQUEST_FAILED", server, deps.redactor.redact(`server ${JSON.stringify(server)}: ${what} failed: ${errorMessage(err)}`));
}
