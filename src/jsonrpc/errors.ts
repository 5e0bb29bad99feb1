/**
 * The two error families of mcp-bridge.
 *
 * - {@link RpcError} carries a numeric JSON-RPC code and goes on the wire.
 * - {@link BridgeError} carries a stable string code and never goes on the wire; it is what
 *   callers of this library catch and switch on (`err.code === "TIMEOUT"`). It is the one base
 *   of every local error class (`PolicyError`, `PathError`, `SecretError`, `ManagerError`,
 *   `CommandNotFoundError`, `AuthError`, `OAuthError`), all built as `(code, message, { cause, details })`;
 *   a subclass only narrows `code` and names fields of its `details`. A refusal (we did not
 *   try; change the configuration) differs from a failure by its code: see {@link RefusalCode}.
 */
import type { JsonRpcErrorObject } from "./message.ts";

/**
 * The JSON-RPC error codes this library sends or reads: the standard ones, MCP's and ACP's.
 * Every wire code in the source comes from here.
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP (handshake era): resource not found. */
  ResourceNotFound: -32002,
  /** MCP 2025-11-25: URL elicitation required. */
  UrlElicitationRequired: -32042,
  /** MCP 2026-07-28: an HTTP header disagrees with the body, or a required one is missing. */
  HeaderMismatch: -32020,
  /** MCP 2026-07-28: serving the request needs a client capability the request did not declare. */
  MissingRequiredClientCapability: -32021,
  /** MCP 2026-07-28: the request's protocol version is not one the server speaks. */
  UnsupportedProtocolVersion: -32022,
  /** JSON-RPC's first implementation-defined server error; the HTTP servers refuse with it. */
  ServerError: -32000,
  /** ACP: authentication required (the same number as `ServerError`). */
  AuthRequired: -32000,
  /** ACP (and LSP): the request was cancelled (`$/cancel_request`). */
  RequestCancelled: -32800,
} as const;

/** An error that is, or came from, a JSON-RPC error object on the wire. */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }

  /** The wire form: `{code, message, data?}`. Never includes a stack. */
  toJSON(): JsonRpcErrorObject {
    const out: JsonRpcErrorObject = { code: this.code, message: this.message };
    if (this.data !== undefined) out.data = this.data;
    return out;
  }

  /** Rebuilds an RpcError from a received error object. */
  static fromObject(obj: JsonRpcErrorObject): RpcError {
    return new RpcError(obj.code, obj.message, obj.data);
  }
}

/** Stable string codes of {@link BridgeError}. */
export type BridgeErrorCode =
  | "TIMEOUT"
  | "CANCELLED"
  | "CLOSED"
  | "NOT_CONNECTED"
  | "SPAWN_FAILED"
  | "PROCESS_EXITED"
  | "LINE_TOO_LONG"
  | "PARSE_ERROR"
  | "INVALID_UTF8"
  | "INVALID_MESSAGE"
  /** Params of an outgoing request or notification that cannot be sent (not serialisable as JSON). */
  | "INVALID_PARAMS"
  | "TOO_MANY_PENDING"
  | "UNSUPPORTED_VERSION"
  | "INVALID_RESULT"
  | "OUTPUT_SCHEMA_MISMATCH"
  /** `structuredContent` could not be checked against the tool's `outputSchema` (the schema
   * needs more validation work than the validator allows); not the same as a mismatch. */
  | "OUTPUT_SCHEMA_UNDECIDED"
  | "LIMIT_EXCEEDED"
  /** HTTP 401/403 from a server; see `AuthError` in the HTTP client for the parsed challenge. */
  | "AUTH_FAILED"
  /** An HTTP status or stream failure that is not one of the above. */
  | "HTTP_ERROR"
  /** API misuse: a method called in a state that does not allow it ("already connected"). */
  | "INVALID_STATE"
  /** A `secret://` reference could not be resolved (`SecretError`). */
  | "SECRET_UNRESOLVED"
  /** A command resolved to a file that may not be executed (`CommandNotFoundError`, or a refusal). */
  | "COMMAND_NOT_EXECUTABLE"
  /** A command that is nowhere to be found (`CommandNotFoundError`, or a refusal). */
  | "COMMAND_NOT_FOUND"
  | RefusalCode
  | PathErrorCode
  | ManagerErrorCode;

/**
 * Codes of a refusal (`PolicyError`, docs/decisions.md 22): a security check refused a
 * configuration before anything was spawned or connected, and the fix is a change of
 * configuration, not a retry. `COMMAND_NOT_FOUND` and `COMMAND_NOT_EXECUTABLE` are refusals
 * too when a `PolicyError` carries them.
 */
export type RefusalCode =
  | "INVALID_COMMAND"
  | "COMMAND_NOT_ALLOWED"
  | "INVALID_ENV"
  | "INVALID_URL"
  | "URL_SCHEME_NOT_ALLOWED"
  | "INSECURE_URL"
  | "URL_CREDENTIALS"
  | "HOST_NOT_ALLOWED";

/** Codes of `PathError` (security/paths.ts): a path refused or not checkable. */
export type PathErrorCode =
  | "NUL_BYTE"
  | "ROOT_NOT_FOUND"
  | "ESCAPES_ROOT"
  | "OUTSIDE_ROOT"
  | "SYMLINK_ESCAPE"
  | "BROKEN_SYMLINK"
  | "IO_ERROR";

/** Codes of `ManagerError` (manager/resources.ts): a refused or failed resource or prompt request. */
export type ManagerErrorCode = "UNKNOWN_SERVER" | "NOT_READY" | "RESOURCES_DISABLED" | "RESOURCE_FILTERED" | "REQUEST_FAILED";

/** What every {@link BridgeError} constructor takes after its code and message. */
export interface BridgeErrorOptions {
  cause?: unknown;
  /** Machine-readable context; never holds a secret. */
  details?: Record<string, unknown>;
}

/**
 * A failure inside mcp-bridge (timeout, closed connection, dead process, bad input).
 * Never serialised onto the wire; `details` holds machine-readable context.
 */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: BridgeErrorCode, message: string, options: BridgeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BridgeError";
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** Message of any thrown value, without its stack. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}
