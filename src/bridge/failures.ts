/**
 * Every way a tool call can fail (timeout, crash, refusal, protocol error, a bug of ours) as an
 * `isError` result the model can read, saying whether a retry may help. Never a throw: at the
 * bridge boundary a failed call is a result.
 */
import { BridgeError, ErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { bridgeNote, cutMarker, quote, renderResultText, safeCutIndex, safeLabel } from "./results.ts";
import type { BridgedContent, BridgedResult, FailureKind } from "./types.ts";

/** Server-supplied text quoted inside a failure result. */
const MAX_DETAIL = 2000;

/** Kinds where trying again later may succeed; the default of `failure.retryable`. */
const RETRYABLE = new Set<FailureKind>(["timeout", "crashed", "restarting", "unavailable", "rate_limited"]);

/**
 * A failure as a result the model can read. `message` is the bridge's own explanation, shown
 * as is; `detail` is text from elsewhere (a server's error message), clipped and kept in a
 * separate part so an untrusted wrapper can mark it. Never throws.
 */
export function errorResult(
  kind: FailureKind,
  message: string,
  options: { retryable?: boolean; detail?: string } = {},
): BridgedResult {
  const content: BridgedContent[] = [bridgeNote(message)];
  if (options.detail !== undefined && options.detail !== "") {
    content.push({ type: "text", text: clipWithMarker(options.detail, MAX_DETAIL) });
  }
  return {
    isError: true,
    content,
    text: renderResultText(content),
    failure: { kind, retryable: options.retryable ?? RETRYABLE.has(kind) },
  };
}

/**
 * Turns whatever a call threw into an error result saying what happened and whether a retry
 * may help. Messages are built from error codes and details, not copied from the error:
 * a crashed process's stderr, for one, never reaches the model. A server's JSON-RPC error
 * message is passed on as `detail`. Run the result through the redaction policy before it
 * leaves the manager, like every other output.
 */
export function fromError(err: unknown, context: { server: string; tool: string }): BridgedResult {
  const tool = `tool ${quote(context.tool)}`;
  const server = `MCP server ${quote(context.server)}`;
  const call = `The call to ${tool} on ${server}`;
  if (err instanceof BridgeError) {
    const d = err.details;
    switch (err.code) {
      case "TIMEOUT": {
        const after = typeof d.timeoutMs === "number" ? ` after ${formatDuration(d.timeoutMs)}` : "";
        return errorResult(
          "timeout",
          `${call} timed out${after} and was cancelled. The server may have done part of the work. ` +
            "Retrying may help if the operation can finish faster (for example with a smaller request).",
        );
      }
      case "CANCELLED":
        return errorResult("cancelled", `${call} was cancelled before it finished. Do not retry unless asked to.`);
      case "PROCESS_EXITED": {
        const how =
          typeof d.signal === "string" ? ` (killed by signal ${safeLabel(d.signal)})`
          : typeof d.code === "number" ? ` (exit code ${d.code})`
          : "";
        return errorResult(
          "crashed",
          `The process of ${server} exited${how} while running ${tool}. The server may be restarting: ` +
            "retrying in a moment may work, but first check whether the action already took effect.",
        );
      }
      case "CLOSED":
        // The connection closed under the call (a crash, a restart after failed health checks),
        // or before it was sent: which one, nothing tells, so the model must not assume either.
        return errorResult(
          "unavailable",
          `The connection to ${server} closed before ${tool} answered, so it may or may not have run; the server may be restarting. ` +
            "Check whether the action took effect before retrying.",
        );
      case "NOT_CONNECTED":
        return errorResult("unavailable", `${server} is not connected, so ${tool} did not run. Retrying later may work.`);
      case "SPAWN_FAILED":
        return errorResult(
          "unavailable",
          `${server} could not be started, so ${tool} is unavailable. Retrying will not help until its configuration is fixed.`,
          { retryable: false },
        );
      case "HTTP_ERROR":
        return errorResult("unavailable", `${call} failed at the HTTP level. Retrying later may work.`);
      case "AUTH_FAILED":
        return errorResult(
          "auth",
          `${server} refused its credentials, so ${tool} did not run. Retrying will not help; the user must fix the server's credentials.`,
        );
      case "TOO_MANY_PENDING":
        return errorResult("rate_limited", `Too many calls to ${server} are in flight, so ${tool} was not called. Retry after the others finish.`);
      case "LIMIT_EXCEEDED":
        return errorResult("limit", `${call} exceeded a size limit of mcp-bridge. Retrying with a smaller request may work.`, {
          retryable: true,
        });
      case "INVALID_PARAMS":
        return errorResult(
          "rejected",
          `The arguments of the call to ${tool} on ${server} could not be sent (they are not plain JSON), so ${tool} did not run. Retry with JSON-only arguments.`,
          { retryable: false },
        );
      case "OUTPUT_SCHEMA_MISMATCH":
        return errorResult(
          "invalid_result",
          `${tool} on ${server} returned structured content that does not match its declared output schema, so the result was discarded. Retrying is unlikely to help. The validator's report follows.`,
          { detail: err.message },
        );
      case "OUTPUT_SCHEMA_UNDECIDED":
        return errorResult(
          "invalid_result",
          `${tool} on ${server} returned structured content that mcp-bridge could not check against its declared output schema (checking it needs more work than the validator allows), so the result was withheld. Retrying will not help; the user can turn output validation off for a server they trust. The validator's report follows.`,
          { detail: err.message },
        );
      case "LINE_TOO_LONG":
      case "PARSE_ERROR":
      case "INVALID_UTF8":
      case "INVALID_MESSAGE":
      case "UNSUPPORTED_VERSION":
      case "INVALID_RESULT":
        return errorResult(
          "protocol",
          `${server} sent a malformed reply to the call of ${tool} (${err.code}). Retrying is unlikely to help.`,
        );
      default:
      // Local refusals and misuse (policy, paths, secrets, INVALID_STATE) are not the server's
      // doing: they are reported below as failures inside mcp-bridge, with their message.
    }
  }
  if (err instanceof RpcError) return fromRpcError(err, call, tool, server);
  if (err instanceof Error && err.name === "AbortError") {
    return errorResult("cancelled", `${call} was cancelled before it finished. Do not retry unless asked to.`);
  }
  return errorResult("internal", `${call} failed inside mcp-bridge. Retrying is unlikely to help. The error follows.`, {
    detail: errorMessage(err),
  });
}

function fromRpcError(err: RpcError, call: string, tool: string, server: string): BridgedResult {
  const detail = { detail: err.message };
  const code = `JSON-RPC error ${err.code}`;
  switch (err.code) {
    case ErrorCode.InvalidParams:
      return errorResult(
        "rejected",
        `${server} rejected the call to ${tool} (${code}: unknown tool or invalid arguments). Check the arguments against the tool's input schema before retrying. The server's message follows.`,
        detail,
      );
    case ErrorCode.MethodNotFound:
      return errorResult("rejected", `${server} does not support tool calls (${code}). Retrying will not help.`, detail);
    case ErrorCode.InternalError:
      return errorResult("protocol", `${call} failed with an internal error of the server (${code}). Retrying may help. The server's message follows.`, {
        ...detail,
        retryable: true,
      });
    default:
      return errorResult("protocol", `${call} failed with ${code}. The server's message follows.`, detail);
  }
}

function formatDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function clipWithMarker(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = safeCutIndex(text, max);
  return `${text.slice(0, keep)}\n${cutMarker(text.length - keep)}`;
}
