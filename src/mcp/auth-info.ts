/**
 * The principal of a verified OAuth access token, as a protected Streamable HTTP server
 * (transport/http-protected.ts) hands it to handlers. Declared here, below the transports, so
 * that handler contexts can name it.
 */

/** Who a verified access token belongs to and what it allows; handlers read it as `ctx.auth`. */
export interface AuthInfo {
  /** The authorization server's client id the token was issued to. */
  clientId?: string;
  /** The resource owner (`sub`), when the token names one. */
  subject?: string;
  /** Scopes the token grants. */
  scopes: readonly string[];
  /** Expiry, seconds since the epoch; a token past it is refused. */
  expiresAt?: number;
  /** The token's audience (`aud`); when given it must include this server's `resource`. */
  audience?: string | readonly string[];
  /** Anything else the verifier wants handlers to see (claims, tenant, ...). */
  extra?: Readonly<Record<string, unknown>>;
}
