/**
 * `mcp-bridge/gateway`: what an McpServer can serve beyond its own registrations. The
 * contracts (`ServerProvider`, `Middleware`, `ServingContext`) and McpServer's `providers` and
 * `middleware` options are in `mcp-bridge/server`; the pieces here build on them:
 * `CompositeProvider` (several providers under namespaces), `ManagerProvider` (an
 * McpManager's servers as upstreams), `SpilledResults`, and the built-in middleware. A
 * separate subpath, so a plain server loads none of it (docs/decisions.md 127).
 *
 * ```ts
 * import { McpServer } from "mcp-bridge/server";
 * import { CompositeProvider, audit, toolPolicy } from "mcp-bridge/gateway";
 * const server = new McpServer(
 *   { name: "gateway", version: "1.0.0" },
 *   { providers: [new CompositeProvider(members)], middleware: [audit({ sink: console.error }), toolPolicy({ deny: ["*__delete*"] })] },
 * );
 * ```
 */
export { CompositeProvider, type CompositeMember, type CompositeProviderOptions } from "./composite.ts";
export { CallForwarding } from "./forwarding.ts";
export { ManagerProvider, type ManagerProviderOptions } from "./manager-provider.ts";
export {
  approval,
  rateLimit,
  toolPolicy,
  type ApprovalMiddlewareOptions,
  type RateLimitMiddlewareOptions,
  type ToolNameLists,
  type ToolPolicyMiddlewareOptions,
} from "./middleware-access.ts";
export { audit, type AuditMiddlewareOptions, type CallAuditEvent, type CallOutcome } from "./middleware-audit.ts";
export { redaction, resultLimits, untrustedMarking, type ResultLimitsOptions, type UntrustedMarkingOptions } from "./middleware-results.ts";
export { SpilledResults, type SpilledResultsOptions } from "./spilled-results.ts";
