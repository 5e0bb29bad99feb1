/**
 * The typed failure of the OAuth client flow (discovery, registration, the authorization
 * redirect, the token endpoint). It shares `AUTH_FAILED` with the transports' `AuthError`, so
 * `err.code === "AUTH_FAILED"` catches both; `reason` says which step refused what
 * (docs/decisions.md 112).
 */
import { BridgeError, type BridgeErrorOptions } from "../jsonrpc/errors.ts";

/** Why an OAuth step failed. Stable strings, for callers to switch on. */
export type OAuthFailure =
  /** A URL the flow would use is neither https nor loopback http, or does not parse. */
  | "INSECURE_URL"
  /** A metadata, registration or token endpoint could not be reached, or answered too late. */
  | "FETCH_FAILED"
  /** A document was larger than the limit. */
  | "TOO_LARGE"
  /** No protected resource metadata was found where the spec says to look. */
  | "RESOURCE_METADATA_NOT_FOUND"
  /** A metadata document is not JSON, or a field has the wrong type. */
  | "METADATA_INVALID"
  /** The protected resource metadata names another resource than the server asked. */
  | "RESOURCE_MISMATCH"
  /** The authorization server metadata names another issuer than the one asked for. */
  | "ISSUER_MISMATCH"
  /** No authorization server metadata was found for the issuer. */
  | "AUTHORIZATION_SERVER_NOT_FOUND"
  /** The authorization server does not offer PKCE with S256. */
  | "PKCE_UNSUPPORTED"
  /** The redirect's `state` is not the one sent. */
  | "STATE_MISMATCH"
  /** The redirect's `iss` is missing (when required) or not the recorded issuer. */
  | "ISS_MISMATCH"
  /** A redirect for an authorization attempt that already took one. */
  | "REDIRECT_REPLAYED"
  /** The redirect carries an OAuth `error` (the user or the server declined). */
  | "AUTHORIZATION_DENIED"
  /** The redirect carries no `code`. */
  | "CODE_MISSING"
  /** The token endpoint answered an OAuth error. */
  | "TOKEN_REQUEST_REJECTED"
  /** The token endpoint answered something that is not a valid token response. */
  | "TOKEN_RESPONSE_INVALID"
  /** Registration was refused or impossible (no way offered, no credentials configured). */
  | "REGISTRATION_FAILED"
  /** A 403 that asks for no scope: the server refuses this client, a new token would not help. */
  | "FORBIDDEN"
  /** The token store's file is not one this version wrote. */
  | "TOKEN_STORE_INVALID"
  /** The server kept answering 403 `insufficient_scope` for the same scopes after step-ups. */
  | "STEP_UP_LIMIT"
  /** The flow needs a user's authorization and no handler for it was given. */
  | "INTERACTION_REQUIRED";

/**
 * An OAuth step failed. Code `AUTH_FAILED`; `reason` names the step's failure, and `details`
 * holds `reason` plus non-secret context (a URL without its query, an OAuth error code). The
 * message names what was wrong; it never holds a token, a code, a verifier or a secret.
 *
 * ```ts
 * try { await provider.authorize(challenge) } catch (e) {
 *   if (e instanceof OAuthError && e.reason === "ISSUER_MISMATCH") console.error(e.message);
 * }
 * ```
 */
export class OAuthError extends BridgeError {
  readonly reason: OAuthFailure;

  constructor(
    code: "AUTH_FAILED",
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & { details: { reason: OAuthFailure } & Record<string, unknown> },
  ) {
    super(code, message, options);
    this.name = "OAuthError";
    this.reason = options.details.reason;
  }
}

/** Shorthand for the flow's own throws: `throw oauthError("STATE_MISMATCH", "...")`. */
export function oauthError(reason: OAuthFailure, message: string, details: Record<string, unknown> = {}, cause?: unknown): OAuthError {
  return new OAuthError("AUTH_FAILED", message, { cause, details: { ...details, reason } });
}

/** Text a server chose, fit for a message: no control characters, bounded length. */
export function clipText(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ");
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

/** A URL for messages and details: origin and path, never the query (it may hold a code or secret). */
export function showUrl(url: URL | string): string {
  try {
    const u = typeof url === "string" ? new URL(url) : url;
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}
