/**
 * The two error families of mcp-bridge.
 *
 * - {@link RpcError} carries a numeric JSON-RPC code and goes on the wire.
 * - {@link BridgeError} carries a stable string code and never goes on the wire; it is what
 *   callers of this library catch and switch on (`err.code === "TIMEOUT"`).
 */
import type { JsonRpcErrorObject } from "./message.ts";

/** Standard JSON-RPC codes and the MCP-specific ones this library uses. */
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
  /** API misuse: a call the object's state does not allow (`start()` twice). */
  | "INVALID_STATE"
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
  | "HTTP_ERROR";

/**
 * A failure inside mcp-bridge (timeout, closed connection, dead process, bad input).
 * Never serialised onto the wire; `details` holds machine-readable context.
 */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: BridgeErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
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
