/**
 * Which scopes to ask for: the MCP specification's order (the challenge, then the protected
 * resource metadata, then none) plus `offline_access` when the authorization server lists it.
 */

/** What the scope choice reads. */
export interface ScopeSources {
  /** The `scope` of the 401/403 challenge. */
  challengeScope?: string;
  /** The protected resource metadata's `scopes_supported`. */
  resourceScopes?: readonly string[];
  /** The authorization server metadata's `scopes_supported`. */
  serverScopes?: readonly string[];
  /** Ask for `offline_access` (a refresh token from OIDC-style servers) when listed. Default true. */
  offlineAccess?: boolean;
}

/**
 * The `scope` parameter to send, or undefined to send none. The challenge's scope wins (the
 * server said what this request needs); else every scope the resource lists; else none, and
 * the authorization server applies its default. `offline_access` is added only when the
 * authorization server lists it: a server that does not know it may refuse the whole request.
 */
export function chooseScope(sources: ScopeSources): string | undefined {
  const chosen = splitScope(sources.challengeScope);
  if (chosen.length === 0) chosen.push(...(sources.resourceScopes ?? []).filter((s) => s !== ""));
  if (chosen.length === 0) return undefined;
  if ((sources.offlineAccess ?? true) && sources.serverScopes?.includes("offline_access") && !chosen.includes("offline_access")) {
    chosen.push("offline_access");
  }
  return [...new Set(chosen)].join(" ");
}

/** The scopes of a space-separated `scope` value (RFC 6749 §3.3). */
export function splitScope(scope: string | undefined): string[] {
  return scope === undefined ? [] : scope.split(" ").filter((s) => s !== "");
}
