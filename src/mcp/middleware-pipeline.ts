/**
 * Runs a server's middleware around listing and calling (the contract is `Middleware` in
 * provider-types.ts). The hooks are sorted out once, when the server starts serving, so a
 * call walks plain arrays; a server without middleware never builds a pipeline at all.
 */
import { errorMessage, RpcError } from "../jsonrpc/errors.ts";
import { isPlainObject, isThenable } from "../util/object.ts";
import { InputRequired, InputResponseError } from "./input-round.ts";
import type { Listing, Middleware, ServingContext, ToolCall } from "./provider-types.ts";
import { errorResult } from "./server-registry.ts";
import type { CallToolResult } from "./types.ts";

/** Results the pipeline made itself, and which middleware stopped the call (for an audit). */
const stopped = new WeakMap<CallToolResult, { by: string; how: "refused" | "failed" }>();

/**
 * When `result` is one the pipeline made because a middleware refused the call or failed:
 * which one, and how. Undefined for a result a tool (or provider) gave.
 */
export function stoppedBy(result: CallToolResult): { by: string; how: "refused" | "failed" } | undefined {
  return stopped.get(result);
}

export class MiddlewarePipeline {
  private readonly middleware: readonly Middleware[];
  private readonly filtering: readonly Middleware[];

  constructor(middleware: readonly Middleware[]) {
    for (const m of middleware) {
      if (typeof m?.name !== "string") throw new TypeError("McpServer: every middleware needs a name");
    }
    this.middleware = [...middleware];
    this.filtering = middleware.filter((m) => m.filter !== undefined);
  }

  /** True when some middleware filters lists (and so may hide an item from a call too). */
  get filters(): boolean {
    return this.filtering.length > 0;
  }

  /**
   * The list after every `filter`, in declared order. A filter that throws fails the list
   * (nothing it was meant to hide gets out); one that changes the kind is a bug, refused too.
   */
  async filter(listing: Listing, ctx: ServingContext): Promise<Listing> {
    let current = listing;
    for (const m of this.filtering) {
      const next = await m.filter!(current, ctx);
      if (!isPlainObject(next) || next.kind !== current.kind || !Array.isArray(next.items)) {
        throw new TypeError(`middleware "${m.name}": filter must return a ${current.kind} listing`);
      }
      current = next;
    }
    return current;
  }

  /**
   * One call through the layers: `before` hooks in order (a refusal or a throw stops there),
   * then `run` with the call as rewritten, then the `after` hooks of every middleware passed,
   * in reverse. A hook that throws turns the result into an error result naming it (closed on
   * failure: a redaction that failed must not let the text through). The era's input round
   * and protocol errors pass through untouched.
   */
  async call(call: ToolCall, ctx: ServingContext, run: (call: ToolCall) => CallToolResult | Promise<CallToolResult>): Promise<CallToolResult> {
    const all = this.middleware;
    let current = call;
    let result: CallToolResult | undefined;
    let passed = 0;
    for (; passed < all.length; passed++) {
      const m = all[passed]!;
      if (m.before === undefined) continue;
      try {
        // Awaited only when it is a promise: a sync hook costs the call no extra tick.
        const returned = m.before(current, ctx);
        const outcome = isThenable(returned) ? await returned : returned;
        if (outcome === undefined || outcome === null) continue;
        if ("refuse" in outcome) {
          result = errorResult(String(outcome.refuse));
          stopped.set(result, { by: m.name, how: "refused" });
          break;
        }
        if (!isPlainObject(outcome.arguments)) throw new TypeError("before must return arguments as an object");
        current = { name: current.name, arguments: outcome.arguments, startedAt: current.startedAt };
      } catch (err) {
        result = hookFailure(m, "before", err);
        break;
      }
    }
    result ??= await run(current);
    for (let i = passed - 1; i >= 0; i--) {
      const m = all[i]!;
      if (m.after === undefined) continue;
      try {
        const returned = m.after(result, current, ctx);
        result = isThenable(returned) ? await returned : returned;
      } catch (err) {
        result = hookFailure(m, "after", err);
      }
    }
    return result;
  }
}

function hookFailure(m: Middleware, hook: string, err: unknown): CallToolResult {
  if (err instanceof InputRequired || err instanceof InputResponseError || err instanceof RpcError) throw err;
  const result = errorResult(`The call was stopped by mcp-bridge: middleware "${m.name}" failed in ${hook}: ${errorMessage(err)}`);
  stopped.set(result, { by: m.name, how: "failed" });
  return result;
}
