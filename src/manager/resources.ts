/**
 * Resources, prompts, completions and instructions across a manager's servers. Unlike tool
 * calls these are asked for by the application, not the model, so failures throw a
 * {@link ManagerError}; its message is redacted and names the server and what to do. Listing
 * across servers never fails as a whole: a server that cannot answer is skipped with a warning.
 *
 * A server's `resources: false` hides its resources entirely, and its `resourceFilter` limits
 * both listing and reading. Everything a server sends has every known secret redacted; what an
 * untrusted server sends is scanned for prompt injection, and its resource text and
 * instructions are wrapped in boundary markers (prompts are templates the user picked, so they
 * are scanned but not wrapped).
 */
import { buildResourceContext, ResourceFilter, type ResourceContext, type ResourceEntry } from "../bridge/resources.ts";
import type { UntrustedWrapper } from "../bridge/untrusted.ts";
import { BridgeError, errorMessage, type BridgeErrorOptions, type ManagerErrorCode } from "../jsonrpc/errors.ts";
import type { CallOptions, McpClient } from "../mcp/client.ts";
import { McpMethod, type CompleteRequestParams, type CompleteResult, type GetPromptResult, type Prompt, type ReadResourceResult, type Resource, type ResourceContents } from "../mcp/types.ts";
import type { Redactor } from "../security/redact.ts";
import type { ServerConnection } from "./connection.ts";
import type { WarningKind } from "./events.ts";

export type { ManagerErrorCode };

/**
 * A refused or failed resource or prompt request. `message` is redacted; `details.server`
 * names the server. Refusals (`RESOURCES_DISABLED`, `RESOURCE_FILTERED`) and unknown or
 * unready servers are told apart from a failed request (`REQUEST_FAILED`) by the code.
 */
export class ManagerError extends BridgeError {
  declare readonly code: ManagerErrorCode;
  readonly server: string;
  constructor(
    code: ManagerErrorCode,
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & { details: { server: string } },
  ) {
    super(code, message, options);
    this.name = "ManagerError";
    this.server = options.details.server;
  }
}

/** A resource and the server it belongs to. */
export type ManagedResource = Resource & { server: string };
/** A prompt and the server it belongs to. */
export type ManagedPrompt = Prompt & { server: string };

/** A server's `instructions`: redacted, and wrapped in markers when its text is untrusted. */
export interface ServerInstructions {
  server: string;
  instructions: string;
}

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
        const listed = fromServer(deps, conn.name, new ResourceFilter(conn.config.resourceFilter).filter(all), McpMethod.ResourcesList);
        return listed.map((r) => ({ ...r, server: conn.name }));
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
  const raw = deps.redactor.redactJson(await readRaw(deps, server, uri, options));
  const wrapper = deps.wrapperFor(server);
  if (wrapper === undefined) return raw;
  const contents = raw.contents.map((c): ResourceContents => {
    if (!("text" in c) || typeof c.text !== "string") return c;
    return { ...c, text: wrapper.wrap(c.text, `mcp:${server}/${c.uri}`) };
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
        const { contents } = deps.redactor.redactJson(await readRaw(deps, server, uri, options));
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
        const prompts = fromServer(deps, conn.name, await conn.use((client) => client.listPrompts(options)), McpMethod.PromptsList);
        return prompts.map((p) => ({ ...p, server: conn.name }));
      } catch (err) {
        deps.warn("request_failed", conn.name, `server ${JSON.stringify(conn.name)}: listing prompts failed: ${errorMessage(err)}`);
        return [];
      }
    }),
  );
  return lists.flat();
}

/** Gets one prompt, redacted. Prompts are templates the user picks: scanned, not wrapped. */
export async function getPromptFrom(
  deps: ResourceDeps,
  server: string,
  name: string,
  args: Record<string, string>,
  options: CallOptions = {},
): Promise<GetPromptResult> {
  const raw = await ask(deps, server, `getting prompt ${JSON.stringify(name)}`, (client) => client.getPrompt(name, args, options));
  return fromServer(deps, server, raw, `prompts/get/${name}`);
}

/** Completion values for an argument, redacted and (untrusted server) scanned. */
export async function completeFrom(deps: ResourceDeps, server: string, params: CompleteRequestParams, options: CallOptions = {}): Promise<CompleteResult> {
  const raw = await ask(deps, server, "completing an argument", (client) => client.complete(params, options));
  return fromServer(deps, server, raw, McpMethod.CompletionComplete);
}

/** The instructions of every ready server that gave some (the connection redacts them). */
export function instructionsOf(deps: ResourceDeps): ServerInstructions[] {
  const out: ServerInstructions[] = [];
  for (const conn of deps.connections()) {
    const text = conn.state === "ready" ? conn.instructions : undefined;
    if (text === undefined || text === "") continue;
    const wrapper = deps.wrapperFor(conn.name);
    out.push({ server: conn.name, instructions: wrapper === undefined ? text : wrapper.wrap(text, `mcp:${conn.name}:instructions`) });
  }
  return out;
}

/** `value` with known secrets redacted; scanned for injection when the server's text is untrusted. */
function fromServer<T>(deps: ResourceDeps, server: string, value: T, channel: string): T {
  const clean = deps.redactor.redactJson(value);
  deps.wrapperFor(server)?.scanValue(clean, `mcp:${server}:${channel}`);
  return clean;
}

async function readRaw(deps: ResourceDeps, server: string, uri: string, options: CallOptions): Promise<ReadResourceResult> {
  const conn = readyConnection(deps, server);
  const label = `server ${JSON.stringify(server)}`;
  if (!conn.config.resources) {
    throw new ManagerError("RESOURCES_DISABLED", `${label} does not expose resources (resources: false in its config)`, { details: { server } });
  }
  if (!new ResourceFilter(conn.config.resourceFilter).allows(uri)) {
    const shown = deps.redactor.redact(JSON.stringify(uri.slice(0, 512)));
    throw new ManagerError("RESOURCE_FILTERED", `${label}: resource ${shown} is outside its resourceFilter; add a matching glob to read it`, { details: { server } });
  }
  return ask(deps, server, "reading a resource", (client) => client.readResource(uri, options));
}

/** Sends one request to a ready server; a failure becomes a `REQUEST_FAILED` {@link ManagerError}. */
async function ask<T>(deps: ResourceDeps, server: string, what: string, request: (client: McpClient) => Promise<T>): Promise<T> {
  const conn = readyConnection(deps, server);
  try {
    return await conn.use(request);
  } catch (err) {
    throw failure(deps, server, what, err);
  }
}

function readyConnection(deps: ResourceDeps, server: string): ServerConnection {
  const conn = deps.connection(server);
  const label = `server ${JSON.stringify(server)}`;
  if (conn === undefined) throw new ManagerError("UNKNOWN_SERVER", `there is no ${label} in this session`, { details: { server } });
  if (conn.state !== "ready") throw new ManagerError("NOT_READY", `${label} is ${conn.state}, not ready; try again when it is`, { details: { server } });
  return conn;
}

/** The cause's text is redacted into the message; the cause itself is not kept (it may hold secrets). */
function failure(deps: ResourceDeps, server: string, what: string, err: unknown): ManagerError {
  return new ManagerError("REQUEST_FAILED", deps.redactor.redact(`server ${JSON.stringify(server)}: ${what} failed: ${errorMessage(err)}`), { details: { server } });
}
