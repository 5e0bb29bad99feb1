/**
 * The client features (roots, sampling, elicitation) a manager offers its servers: the agent's
 * handlers, told which server asks, turned into the `McpClient` options of one connection.
 *
 * What a server sends in these requests goes to the agent (and often to its model), so it goes
 * through the session's redactor first, like every other string that crosses from a server.
 */
import type { ClientHandlers, McpClient, McpClientOptions } from "../mcp/client.ts";
import type { CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root } from "../mcp/types.ts";
import type { Redactor } from "../security/redact.ts";

/** Who asks, and until when the answer is wanted. */
export interface ServerRequestContext {
  /** The server's configured name. */
  readonly server: string;
  /** Aborted when the server cancels, its connection closes, or (for a -32042) the refused call is abandoned. */
  readonly signal: AbortSignal;
  /** Set when an elicitation came in the -32042 error of one of our requests: that request's method. */
  readonly requiredBy?: string;
}

/**
 * Handlers for the requests servers send to the client. A capability is declared to the
 * servers only for a handler that is set; without one the request gets -32601.
 *
 * ```ts
 * const manager = new McpManager({
 *   clientFeatures: {
 *     roots: () => [{ uri: pathToFileURL(process.cwd()).href }],
 *     sampling: async (params, { server }) => askModel(params, `on behalf of ${server}`),
 *   },
 * });
 * ```
 */
export interface ClientFeatures {
  /**
   * Answers `roots/list` (`file://` URIs). Declares `roots.listChanged`: call
   * `McpManager.rootsChanged()` whenever the answer changes.
   */
  roots?: (ctx: ServerRequestContext) => Root[] | Promise<Root[]>;
  /** Answers `sampling/createMessage`. The user should be able to review and refuse it. */
  sampling?: (params: CreateMessageRequestParams, ctx: ServerRequestContext) => CreateMessageResult | Promise<CreateMessageResult>;
  /**
   * Answers `elicitation/create` and shows the URL elicitations of -32042 errors. Name the
   * server to the user; show a URL in full and open it only with consent.
   */
  elicitation?: (params: ElicitRequestParams, ctx: ServerRequestContext) => ElicitResult | Promise<ElicitResult>;
  /** Modes declared with `elicitation`. Default form and url. */
  elicitationModes?: { form?: boolean; url?: boolean };
  /** A server announced that a URL elicitation it asked for is complete (a refused call may be retried). */
  onElicitationComplete?: (event: { server: string; elicitationId: string }) => void;
}

/** The `McpClient` options that offer `features` to the server named `server`. */
export function clientFeatureOptions(server: string, features: ClientFeatures | undefined, redactor: Redactor): McpClientOptions {
  if (features === undefined) return {};
  const { roots, sampling, elicitation } = features;
  const handlers: ClientHandlers = {};
  if (roots !== undefined) handlers.roots = (ctx) => roots({ server, signal: ctx.signal });
  if (sampling !== undefined) {
    handlers.sampling = (params, ctx) => sampling(redactor.redactJson(params), { server, signal: ctx.signal });
  }
  if (elicitation !== undefined) {
    handlers.elicitation = (params, ctx) =>
      elicitation(redactor.redactJson(params), { server, signal: ctx.signal, ...(ctx.requiredBy === undefined ? {} : { requiredBy: ctx.requiredBy }) });
  }
  return { handlers, rootsListChanged: roots !== undefined, ...(features.elicitationModes === undefined ? {} : { elicitationModes: features.elicitationModes }) };
}

/** Passes the client's completion notices on, naming the server. */
export function forwardElicitationComplete(client: McpClient, server: string, features: ClientFeatures | undefined): void {
  const listener = features?.onElicitationComplete;
  if (listener !== undefined) client.on("elicitationComplete", ({ elicitationId }) => listener({ server, elicitationId }));
}
