/**
 * Built-in middleware that decides whether a call may go ahead: the tool policy (allow/deny
 * globs, also per downstream client), approval, and a rate limit. Each is the security/ check
 * the manager uses, put behind the Middleware contract; a refusal is a message for the model
 * (docs/decisions.md 8).
 */
import type { ClientIdentity, Middleware, ServingContext, ToolCall } from "../mcp/provider-types.ts";
import type { Tool } from "../mcp/types.ts";
import { ApprovalGate, ToolPolicy, type Approver } from "../security/policy.ts";
import { RateLimiter, type RateLimiterOptions } from "../security/rate-limit.ts";

/** Allow and deny globs on tool names (see `util/glob.ts`). */
export interface ToolNameLists {
  /** When given, only matching tools are listed and callable; an empty list allows none. */
  allow?: readonly string[];
  /** Matching tools are hidden and refused, whatever `allow` says. */
  deny?: readonly string[];
}

export interface ToolPolicyMiddlewareOptions extends ToolNameLists {
  /**
   * Lists for one downstream client, applied on top of the general ones (both must permit,
   * so a client's lists can only narrow). Return the same object for the same client: it is
   * compiled once. Key it on `client.principal`, which a transport set after authenticating;
   * `client.name` is what the client says about itself.
   */
  forClient?: (client: ClientIdentity) => ToolNameLists | undefined;
  /** Names the gateway in refusals ("server "gw": tool ... is refused by ..."). */
  server?: string;
}

/**
 * Hides tools the policy does not permit from `tools/list` and refuses calls to them, so a
 * hidden tool cannot be called by guessing its name.
 *
 * ```ts
 * toolPolicy({ deny: ["*__delete_*"], forClient: (c) => (c.principal === "ci" ? { allow: ["tests__*"] } : undefined) })
 * ```
 */
export function toolPolicy(options: ToolPolicyMiddlewareOptions = {}): Middleware {
  const general = new ToolPolicy({ allow: options.allow, deny: options.deny, server: options.server });
  const compiled = new WeakMap<ToolNameLists, ToolPolicy>();
  const clientPolicy = (ctx: ServingContext): ToolPolicy | undefined => {
    const lists = options.forClient?.(ctx.client);
    if (lists === undefined) return undefined;
    let policy = compiled.get(lists);
    if (policy === undefined) {
      policy = new ToolPolicy({ allow: lists.allow, deny: lists.deny, server: options.server });
      compiled.set(lists, policy);
    }
    return policy;
  };
  return {
    name: "toolPolicy",
    filter(list, ctx) {
      if (list.kind !== "tools") return list;
      const own = clientPolicy(ctx);
      const permitted = (t: Tool) => general.permits(t.name) && (own === undefined || own.permits(t.name));
      return { kind: "tools", items: list.items.filter(permitted) };
    },
    before(call, ctx) {
      if (!general.permits(call.name)) return { refuse: general.explain(call.name) };
      const own = clientPolicy(ctx);
      if (own !== undefined && !own.permits(call.name)) return { refuse: own.explain(call.name) };
      return undefined;
    },
  };
}

export interface ApprovalMiddlewareOptions {
  /** Asked before a call goes ahead; only `allow_always` is remembered (by this middleware). */
  approve: Approver;
  /** Which calls need asking. Default: every call. */
  needsApproval?: (call: ToolCall, ctx: ServingContext) => boolean;
  /** Names the gateway in the question and in refusals (`ApprovalRequest.server`). Default `"gateway"`. */
  server?: string;
}

/**
 * Asks `approve` before a call, with the `ApprovalGate`'s rules: concurrent first calls to one
 * tool share one question, `allow_once` lets exactly one call through, an approver that
 * throws or answers something else denies.
 */
export function approval(options: ApprovalMiddlewareOptions): Middleware {
  const gate = new ApprovalGate(options.approve);
  const server = options.server ?? "gateway";
  return {
    name: "approval",
    async before(call, ctx) {
      if (options.needsApproval !== undefined && !options.needsApproval(call, ctx)) return undefined;
      if (gate.allowsWithoutAsking(server, call.name, "untrusted")) return undefined;
      const verdict = await gate.check(server, call.name, call.name, call.arguments, "untrusted");
      return verdict.ok ? undefined : { refuse: verdict.message };
    },
  };
}

export interface RateLimitMiddlewareOptions extends RateLimiterOptions {
  /** Whose bucket a call takes from. Default: one per downstream client (`principal`, else `name`). */
  key?: (call: ToolCall, ctx: ServingContext) => string;
}

/** A token bucket per key (default: per downstream client); an over-limit call is refused with the wait. */
export function rateLimit(options: RateLimitMiddlewareOptions = {}): Middleware {
  const limiter = new RateLimiter(options);
  const keyOf = options.key ?? ((_call: ToolCall, ctx: ServingContext) => ctx.client.principal ?? ctx.client.name ?? "");
  return {
    name: "rateLimit",
    before(call, ctx) {
      const taken = limiter.take(keyOf(call, ctx));
      if (taken.ok) return undefined;
      return {
        refuse: `Rate limit of ${limiter.callsPerMinute} calls per minute reached, so tool ${JSON.stringify(call.name)} did not run; retry in ${taken.retryAfterMs} ms.`,
      };
    },
  };
}
