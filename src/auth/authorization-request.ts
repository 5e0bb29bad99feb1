/**
 * One authorization code request: the URL the user opens (PKCE S256, `state`, RFC 8707
 * `resource`, `scope`) and the check of the redirect that comes back (RFC 9207 `iss`, `state`,
 * OAuth errors), which hands out the code once.
 */
import { clipText, oauthError } from "./oauth-error.ts";
import { createPkcePair, createState } from "./pkce.ts";
import type { AuthorizationServerMetadata } from "./server-metadata.ts";

/** What an authorization request is made of. */
export interface AuthorizationRequestParams {
  metadata: AuthorizationServerMetadata;
  clientId: string;
  redirectUri: string;
  /** The protected resource metadata's `resource`, exactly as published (RFC 8707). */
  resource?: string;
  /** Space-separated scopes; omitted from the URL when undefined. */
  scope?: string;
}

/** An accepted redirect: what the token request needs. */
export interface AuthorizationGrant {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  resource?: string;
}

/**
 * A started authorization: open {@link AuthorizationRequest.url} in a browser, then hand the
 * redirect to {@link AuthorizationRequest.acceptRedirect}. The PKCE verifier never leaves this
 * object except in the grant that goes to the token endpoint.
 *
 * ```ts
 * const request = new AuthorizationRequest({ metadata, clientId, redirectUri, resource, scope });
 * const redirect = await userAgent(request.url);
 * const grant = request.acceptRedirect(redirect); // throws OAuthError on a bad redirect
 * ```
 */
export class AuthorizationRequest {
  /** The authorization URL to open. */
  readonly url: string;
  readonly state: string;
  private readonly params: AuthorizationRequestParams;
  private readonly verifier: string;
  private settled = false;

  constructor(params: AuthorizationRequestParams) {
    this.params = params;
    const pkce = createPkcePair();
    this.verifier = pkce.verifier;
    this.state = createState();
    // The endpoint may carry a query of its own (RFC 6749 §3.1): it is kept, ours is added.
    const url = new URL(params.metadata.authorizationEndpoint);
    const q = url.searchParams;
    q.set("response_type", "code");
    q.set("client_id", params.clientId);
    q.set("redirect_uri", params.redirectUri);
    q.set("code_challenge", pkce.challenge);
    q.set("code_challenge_method", pkce.method);
    q.set("state", this.state);
    if (params.resource !== undefined) q.set("resource", params.resource);
    if (params.scope !== undefined) q.set("scope", params.scope);
    this.url = url.href;
  }

  /**
   * Checks the redirect (the full callback URL, or its query) and returns the grant. Only the
   * first call can succeed: any later one is `REDIRECT_REPLAYED`, and a failed check ends the
   * request too (a forged redirect means someone else is in the flow). Checked in this order:
   * `state`, then `iss` (before the error, so a mix-up attacker cannot even show one), then
   * `error`, then `code`.
   */
  acceptRedirect(redirect: string | URL | URLSearchParams): AuthorizationGrant {
    if (this.settled) throw oauthError("REDIRECT_REPLAYED", "this authorization request already received its redirect; start a new one");
    this.settled = true;
    const q = redirect instanceof URLSearchParams ? redirect : new URL(String(redirect)).searchParams;
    if (q.get("state") !== this.state) {
      const what = q.has("state") ? "a different state" : "no state";
      throw oauthError("STATE_MISMATCH", `the authorization redirect carries ${what} than the one sent; it is not the answer to this request`);
    }
    const issuer = this.params.metadata.issuer;
    const iss = q.get("iss");
    if (iss === null && this.params.metadata.authorizationResponseIssParameterSupported === true) {
      throw oauthError("ISS_MISMATCH", `the authorization redirect has no "iss", which ${clipText(issuer)} says it always sends (RFC 9207)`, { issuer: clipText(issuer) });
    }
    if (iss !== null && iss !== issuer) {
      throw oauthError("ISS_MISMATCH", `the authorization redirect comes from issuer "${clipText(iss)}", not "${clipText(issuer)}" (RFC 9207)`, {
        issuer: clipText(issuer),
        iss: clipText(iss),
      });
    }
    const error = q.get("error");
    if (error !== null) {
      const description = q.get("error_description");
      const more = description === null ? "" : `: ${clipText(description)}`;
      throw oauthError("AUTHORIZATION_DENIED", `the authorization server answered "${clipText(error)}"${more}`, { error: clipText(error) });
    }
    const code = q.get("code");
    if (code === null || code === "") throw oauthError("CODE_MISSING", "the authorization redirect carries no code");
    const grant: AuthorizationGrant = { code, codeVerifier: this.verifier, redirectUri: this.params.redirectUri };
    if (this.params.resource !== undefined) grant.resource = this.params.resource;
    return grant;
  }
}
