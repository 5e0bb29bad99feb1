/**
 * What an HTTP client transport needs from an authorization provider, typed here so the
 * transports never import `src/auth/` (docs/decisions.md 114). `OAuthProvider` implements
 * it; a host may bring its own.
 */

/** What else a 401/403 response said, beside its `WWW-Authenticate`. */
export interface UnauthorizedResponse {
  /** The `DPoP-Nonce` header (RFC 9449 §9), with a `use_dpop_nonce` challenge. */
  dpopNonce?: string;
}

/** Supplies bearer tokens to an HTTP transport and reacts to its 401/403 answers. */
export interface HttpAuthProvider {
  /** The token for the next request (`Authorization: Bearer <token>`), or undefined for none. */
  accessToken(): Promise<string | undefined>;
  /**
   * Called on a 401 or 403 with the response's `WWW-Authenticate`; resolves with the token to
   * send that request again with, or rejects (the request then fails). See ./http-auth.ts for
   * how often a request may come back.
   */
  handleUnauthorized(status: number, wwwAuthenticate: string | undefined, response?: UnauthorizedResponse): Promise<string>;
  /**
   * The headers that carry `token` on one request (default `Authorization: Bearer <token>`).
   * A provider of sender-constrained tokens signs each request here (DPoP: the `DPoP` scheme
   * and a proof for `method` and `url`). Called as the request is built: it must not block.
   */
  authorizationHeaders?(token: string, method: string, url: URL): Record<string, string>;
}
