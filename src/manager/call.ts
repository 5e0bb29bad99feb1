/**
 * One bridged tool call, from the name the model chose to the result it reads. Never throws:
 * every refusal and failure becomes an `isError` result (docs/decisions.md 8), in this order of
 * checks: known and exposed name, tool policy, server state, rate limit, approval, then the
 * call itself (timeout, crash, protocol error). Untrusted servers' text is wrapped, known
 * secrets are redacted from the result, and every call ends in exactly one audit record.
 * Also here: the redaction of results.
 */
import { errorResult, fromError } from "../bridge/failures.ts";
import { toBridgedResult, type ResultLimits } from "../bridge/results.ts";
import type { BridgedContent, BridgedResult } from "../bridge/types.ts";
import type { UntrustedWrapper } from "../bridge/untrusted.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import type { ProgressInfo } from "../jsonrpc/peer.ts";
import type { ApprovalGate } from "../security/policy.ts";
import type { RateLimiter } from "../security/rate-limit.ts";
import type { Redactor } from "../security/redact.ts";
import type { AuditInput } from "./audit.ts";
import type { CatalogEntry, ToolCatalog } from "./catalog.ts";
import type { ServerConnection } from "./connection.ts";

/** Options of `McpManager.callTool`. */
export interface ToolCallOptions {
  /** Aborting cancels the call (`notifications/cancelled` is sent) and gives a `cancelled` result. */
  signal?: AbortSignal;
  /** Progress the server reports; each report also restarts the call's timeout. */
  onProgress?: (progress: ProgressInfo) => void;
}

/** What the call pipeline needs from its manager. */
export interface CallDeps {
  catalog: ToolCatalog;
  connection(server: string): ServerConnection | undefined;
  limiter: RateLimiter | undefined;
  gate: ApprovalGate;
  redactor: Redactor;
  /** A wrapper for this server's text, or undefined when its text is not to be wrapped. */
  wrapperFor(server: string): UntrustedWrapper | undefined;
  limits: ResultLimits;
  redactResults: boolean;
  audit(input: AuditInput): void;
}

/** Runs one call; see the file comment. */
export async function runToolCall(deps: CallDeps, name: string, args: unknown, options: ToolCallOptions = {}): Promise<BridgedResult> {
  const startedAt = Date.now();
  const entry = deps.catalog.get(name);
  // The audit record names the server and tool; both are empty when the name is unknown.
  const server = entry?.config.name ?? "";
  const tool = entry?.bridged.originalName ?? "";
  let result: BridgedResult;
  try {
    result = entry === undefined ? refused(deps, name) : await pipeline(deps, entry, name, args, options);
  } catch (err) {
    result = errorResult("internal", "The call failed inside mcp-bridge. Retrying is unlikely to help. The error follows.", {
      detail: errorMessage(err),
    });
  }
  if (deps.redactResults) result = redactResult(result, deps.redactor);
  try {
    deps.audit({ server, tool, name, startedAt, endedAt: Date.now(), args, result });
  } catch {
    // Auditing must not turn a result into a throw.
  }
  return result;
}

/**
 * The result for a name the catalog does not expose: a tool whose server is down (it failed,
 * closed or is restarting, and its tools went with it), unknown, filtered by policy, or over
 * the limit.
 */
function refused(deps: CallDeps, name: string): BridgedResult {
  const former = deps.catalog.formerly(name);
  const down = former === undefined ? undefined : unavailable(deps.connection(former.server), former.server, former.tool);
  if (down !== undefined) return down;
  const refusal = deps.catalog.refusal(name);
  return errorResult(refusal.kind, refusal.message, { retryable: false });
}

async function pipeline(deps: CallDeps, entry: CatalogEntry, name: string, rawArgs: unknown, options: ToolCallOptions): Promise<BridgedResult> {
  const server = entry.config.name;
  const tool = entry.bridged.originalName;
  const args = rawArgs === undefined || rawArgs === null ? {} : rawArgs;
  if (typeof args !== "object" || Array.isArray(args)) {
    return errorResult("rejected", `The arguments of ${JSON.stringify(name)} must be a JSON object, not ${Array.isArray(args) ? "an array" : typeof args}. Call it again with an object matching its input schema.`, {
      retryable: false,
    });
  }

  const early = unavailable(deps.connection(server), server, tool) ?? cancelledBefore(options.signal, server, tool);
  if (early !== undefined) return early;
  if (deps.limiter !== undefined) {
    const limited = deps.limiter.take(server);
    if (!limited.ok) return errorResult("rate_limited", limited.message);
  }
  if (!deps.gate.allowsWithoutAsking(server, tool, entry.config.trust)) {
    const verdict = await deps.gate.check(server, tool, name, args, entry.config.trust);
    if (!verdict.ok) return errorResult("denied", verdict.message, { retryable: false });
  }
  // Approval may have taken a while: look again.
  const connection = deps.connection(server);
  const late = unavailable(connection, server, tool) ?? cancelledBefore(options.signal, server, tool);
  if (late !== undefined || connection === undefined) return late ?? errorResult("unavailable", `MCP server ${JSON.stringify(server)} is gone.`);

  let result: BridgedResult;
  try {
    const raw = await connection.callTool(tool, args as Record<string, unknown>, { signal: options.signal, onProgress: options.onProgress });
    result = toBridgedResult(raw, deps.limits);
  } catch (err) {
    result = fromError(err, { server, tool });
  }
  const wrapper = deps.wrapperFor(server);
  return wrapper === undefined ? result : wrapper.wrapResult(result, `mcp:${server}/${tool}`);
}

/** A result for a server that cannot take calls now, or undefined when it is ready. */
function unavailable(connection: ServerConnection | undefined, server: string, tool: string): BridgedResult | undefined {
  if (connection?.state === "ready") return undefined; // the hot path builds no message
  const label = `MCP server ${JSON.stringify(server)}`;
  const what = `tool ${JSON.stringify(tool)}`;
  if (connection === undefined) return errorResult("unavailable", `${label} was removed, so ${what} did not run.`, { retryable: false });
  switch (connection.state) {
    case "restarting":
    case "connecting":
      if (connection.restarts > 0) {
        return errorResult(
          "restarting",
          `${label} is restarting after a failure (restart ${connection.restartsInARow} of at most ${connection.config.maxRestarts}), so ${what} did not run. Retry in a few seconds.`,
        );
      }
      return errorResult("unavailable", `${label} is still starting, so ${what} did not run. Retry in a few seconds.`, { retryable: true });
    case "failed":
      return errorResult(
        "unavailable",
        `${label} has failed and will not be restarted, so ${what} is unavailable. Retrying will not help; the user must fix the server.`,
        { retryable: false },
      );
    case "closed":
      return errorResult("unavailable", `${label} is closed, so ${what} did not run.`, { retryable: false });
  }
}

function cancelledBefore(signal: AbortSignal | undefined, server: string, tool: string): BridgedResult | undefined {
  if (signal?.aborted !== true) return undefined;
  return errorResult("cancelled", `The call to tool ${JSON.stringify(tool)} on MCP server ${JSON.stringify(server)} was cancelled before it started.`);
}

/**
 * The result with every known secret replaced: in the text of every part (of `content` and of
 * `display`), in `text`, and in `structured` (keys too). Binary data is left alone.
 */
function redactResult(result: BridgedResult, redactor: Redactor): BridgedResult {
  if (redactor.size === 0) return result;
  const out: BridgedResult = { ...result, content: redactParts(result.content, redactor), text: redactor.redact(result.text) };
  if (result.display !== undefined) out.display = redactParts(result.display, redactor);
  if (result.structured !== undefined) out.structured = redactor.redactJson(result.structured);
  return out;
}

function redactParts(parts: readonly BridgedContent[], redactor: Redactor): BridgedContent[] {
  return parts.map((part): BridgedContent => {
    switch (part.type) {
      case "text":
      case "resource_text":
        return { ...part, text: redactor.redact(part.text) };
      case "resource_link": {
        const link = { ...part, uri: redactor.redact(part.uri), name: redactor.redact(part.name) };
        if (part.title !== undefined) link.title = redactor.redact(part.title);
        if (part.description !== undefined) link.description = redactor.redact(part.description);
        return link;
      }
      case "resource_blob":
        return { ...part, uri: redactor.redact(part.uri) };
      default:
        return part;
    }
  });
}
