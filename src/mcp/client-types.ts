/**
 * The option, handler and event types of {@link McpClient} (client.ts re-exports them).
 *
 * Types only, on purpose: this module is erased at run time, so it costs the client's import
 * nothing (see docs/decisions.md 35).
 */
import type { PeerOptions, ProgressInfo } from "../jsonrpc/peer-types.ts";
import type { RequestContext } from "../jsonrpc/inbound.ts";
import type { PageLimits } from "./paging.ts";
import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
  Implementation,
  LoggingLevel,
  LoggingMessageNotificationParams,
  Root,
} from "./types.ts";

/**
 * What an elicitation handler is told besides the params. An elicitation comes as the
 * server's `elicitation/create` request (`request` is set), listed in the -32042 error the
 * server answered one of our requests with (`requiredBy` names that request's method), or as
 * an input request of the stateless era (neither is set: the server asks within its answer).
 */
export interface ElicitationContext {
  /** `elicitation/create`: aborted when the server cancels or the connection closes; -32042: the refused request's signal. */
  readonly signal: AbortSignal;
  readonly request?: RequestContext;
  readonly requiredBy?: string;
}

/** Handlers for requests a server may send; each capability is declared only when set. */
export interface ClientHandlers {
  roots?: (ctx: RequestContext) => Root[] | Promise<Root[]>;
  sampling?: (params: CreateMessageRequestParams, ctx: RequestContext) => CreateMessageResult | Promise<CreateMessageResult>;
  /**
   * Form and URL elicitations. A URL one must be shown in full and opened only with the user's
   * consent (never fetched by the client); `accept` means consent, not completion.
   */
  elicitation?: (params: ElicitRequestParams, ctx: ElicitationContext) => ElicitResult | Promise<ElicitResult>;
}

export interface McpClientOptions {
  /** Default `{ name: "mcp-bridge", version: "0.1.0" }`. */
  clientInfo?: Implementation;
  /**
   * Which protocol era to speak. `"auto"` (default) probes with `server/discover` and falls
   * back to `initialize` when the server is of the handshake era; `"legacy"` sends
   * `initialize` at once; `"modern"` speaks only the stateless era (2026-07-28) and fails
   * with `UNSUPPORTED_VERSION` against a handshake-era server.
   */
  era?: "auto" | "legacy" | "modern";
  /**
   * Time allowed for the `server/discover` probe, ms; past it the server counts as one of
   * the handshake era. Default 5 000, and never more than `connectTimeoutMs` (which alone
   * applies with `era: "modern"`).
   */
  discoverTimeoutMs?: number;
  /**
   * Stateless era: the log level every request declares in `_meta` (until
   * {@link McpClient.setLoggingLevel} changes it). Default none: the server then sends no
   * `notifications/message`. The handshake era ignores it (the server's default applies).
   */
  logLevel?: LoggingLevel;
  /**
   * Stateless era: reopening a `subscriptions/listen` stream the server ended or refused. The
   * first attempt after `initialDelayMs` (default 1 000), each next one after twice as long,
   * up to `maxDelayMs` (default 30 000); after `maxAttempts` (default 5) in a row an `error`
   * event says the stream is given up. A stream acknowledged and open for `maxDelayMs`
   * starts the count again.
   */
  listenReconnect?: { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
  /** Input rounds (`input_required` results) one request may take. Default 8; past it `LIMIT_EXCEEDED`. */
  maxInputRounds?: number;
  /**
   * Version offered in `initialize`, or, when it is of the stateless era, the version
   * stateless requests declare. Default: the latest we speak.
   */
  protocolVersion?: string;
  /** Versions accepted in the server's answer. Default: all we speak. */
  supportedVersions?: readonly string[];
  /** Time allowed for the handshake, ms. Default 30 000. */
  connectTimeoutMs?: number;
  /** Default request timeout, ms. Default 60 000. */
  requestTimeoutMs?: number;
  /** Default `tools/call` timeout, ms. Default 120 000. */
  toolTimeoutMs?: number;
  /** Limits for following `nextCursor`. Default 100 pages, 10 000 items. */
  pageLimits?: Partial<PageLimits>;
  /** Validate `structuredContent` against the tool's `outputSchema`. Default true. */
  validateStructuredContent?: boolean;
  handlers?: ClientHandlers;
  /** Elicitation modes declared when an elicitation handler is set. Default form and url. */
  elicitationModes?: { form?: boolean; url?: boolean };
  /** Declare `roots.listChanged` (the app then calls {@link McpClient.notifyRootsChanged}). */
  rootsListChanged?: boolean;
  peerOptions?: PeerOptions;
}

/** Events raised by {@link McpClient}. */
export interface McpClientEvents {
  toolsListChanged: void;
  resourcesListChanged: void;
  promptsListChanged: void;
  resourceUpdated: { uri: string };
  log: LoggingMessageNotificationParams;
  /** `notifications/elicitation/complete` for a URL elicitation this client saw (others are ignored, as the spec asks). */
  elicitationComplete: { elicitationId: string };
  /** Stateless era: a tool left out of `listTools` because its `x-mcp-header` annotations are invalid (SEP-2243). */
  toolRejected: { name: string; reason: string };
  close: Error | undefined;
  error: Error;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  onProgress?: (progress: ProgressInfo) => void;
}
