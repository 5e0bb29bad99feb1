/**
 * What an HTTP client transport needs from an authorization provider, typed here so the
 * transports never import `src/auth/` (docs/decisions.md 114). `OAuthProvider` implements
 * it; a host may bring its own.
 */

/** Supplies bearer tokens to an HTTP transport and reacts to its 401/403 answers. */
export interface HttpAuthProvider {
  /** The token for the next request (`Authorization: Bearer <token>`), or undefined for none. */
  accessToken(): Promise<string | undefined>;
  /**
   * Called once per request on a 401 or 403 with the response's `WWW-Authenticate`; resolves
   * with the token to retry that request with once, or rejects (the request then fails).
   */
  handleUnauthorized(status: number, wwwAuthenticate: string | undefined): Promise<string>;
}
