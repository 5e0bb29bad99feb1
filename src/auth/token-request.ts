/**
 * The token endpoint: the authorization code grant (with the PKCE verifier and RFC 8707
 * `resource`), the refresh grant, client authentication, and the check of what comes back.
 */
import type { KeyObject } from "node:crypto";
import type { AuthorizationGrant } from "./authorization-request.ts";
import { createClientAssertion, JWT_BEARER_ASSERTION_TYPE } from "./client-assertion.ts";
import type { DpopKey } from "./dpop.ts";
import { fetchText, jsonObject, requireSafeUrl, type OAuthHttpOptions } from "./http-fetch.ts";
import { FieldReader } from "./metadata-fields.ts";
import { clipText, oauthError, showUrl } from "./oauth-error.ts";
import type { AuthorizationServerMetadata } from "./server-metadata.ts";

/** How a client proves itself at the token endpoint. */
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt" | "none";

/** A client registered with one authorization server (`issuer`). */
export interface ClientCredentials {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  /** An ES256 private key (PEM or KeyObject) for `private_key_jwt`. */
  privateKey?: string | KeyObject;
  /** As registered; when absent, chosen from the key, the secret and the server's list. */
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
}

/** Tokens from one token response. `expiresAt` is in ms since the epoch. */
export interface TokenSet {
  accessToken: string;
  /** `DPoP`: bound to the key whose proof went with the token request (RFC 9449). */
  tokenType: "Bearer" | "DPoP";
  expiresAt?: number;
  refreshToken?: string;
  scope?: string;
}

/** Options of a token request: the HTTP bounds plus the clock the expiry is computed with. */
export interface TokenRequestOptions extends OAuthHttpOptions {
  now?: () => number;
  /** Send a DPoP proof with the request and accept a DPoP-bound token (RFC 9449 §5). */
  dpop?: DpopKey;
}

/** Redeems an authorization code (after {@link AuthorizationRequest.acceptRedirect} checked the redirect). */
export function exchangeCode(metadata: AuthorizationServerMetadata, client: ClientCredentials, grant: AuthorizationGrant, options: TokenRequestOptions = {}): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: "authorization_code", code: grant.code, redirect_uri: grant.redirectUri, code_verifier: grant.codeVerifier });
  if (grant.resource !== undefined) form.set("resource", grant.resource);
  return tokenRequest(metadata, client, form, options);
}

/**
 * The client credentials grant: a token for the client itself, no user involved (a service
 * account, a CI job). The client must authenticate, with a secret or `private_key_jwt`.
 */
export function requestClientCredentialsToken(
  metadata: AuthorizationServerMetadata,
  client: ClientCredentials,
  extra: { resource?: string; scope?: string } = {},
  options: TokenRequestOptions = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: "client_credentials" });
  setExtra(form, extra);
  return tokenRequest(metadata, client, form, options);
}

/** RFC 7523 §2.1: a JWT as an authorization grant. */
export const JWT_BEARER_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/**
 * The JWT-bearer grant (RFC 7523 §2.1): a token for a workload that proves who it is with a JWT
 * its platform issued (workload identity federation), no user and no stored secret involved.
 * The assertion is sent as given; the client authenticates as registered (often `none`).
 */
export function requestJwtBearerToken(
  metadata: AuthorizationServerMetadata,
  client: ClientCredentials,
  assertion: string,
  extra: { resource?: string; scope?: string } = {},
  options: TokenRequestOptions = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: JWT_BEARER_GRANT_TYPE, assertion });
  setExtra(form, extra);
  return tokenRequest(metadata, client, form, options);
}

/**
 * Trades a refresh token for new tokens. When the answer has no refresh token, the one sent
 * stays valid (RFC 6749 §6) and is returned in the set.
 */
export async function refreshAccessToken(
  metadata: AuthorizationServerMetadata,
  client: ClientCredentials,
  refreshToken: string,
  extra: { resource?: string; scope?: string } = {},
  options: TokenRequestOptions = {},
): Promise<TokenSet> {
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken });
  setExtra(form, extra);
  const tokens = await tokenRequest(metadata, client, form, options);
  return tokens.refreshToken === undefined ? { ...tokens, refreshToken } : tokens;
}

/**
 * The method to authenticate with: the registered one; else `private_key_jwt` with a key;
 * else, with a secret, Basic unless the server lists only `client_secret_post` (RFC 8414's
 * default is Basic); else `none`.
 */
export function chooseAuthMethod(client: ClientCredentials, metadata: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  if (client.tokenEndpointAuthMethod !== undefined) return client.tokenEndpointAuthMethod;
  if (client.privateKey !== undefined) return "private_key_jwt";
  if (client.clientSecret === undefined) return "none";
  const listed = metadata.tokenEndpointAuthMethodsSupported;
  if (listed !== undefined && !listed.includes("client_secret_basic") && listed.includes("client_secret_post")) return "client_secret_post";
  return "client_secret_basic";
}

async function tokenRequest(metadata: AuthorizationServerMetadata, client: ClientCredentials, form: URLSearchParams, options: TokenRequestOptions): Promise<TokenSet> {
  // Credentials are keyed by issuer: a client of one server is never shown to another.
  if (client.issuer !== metadata.issuer) {
    throw oauthError("REGISTRATION_FAILED", `client credentials for "${clipText(client.issuer)}" are not for "${clipText(metadata.issuer)}"`, { issuer: clipText(metadata.issuer) });
  }
  const endpoint = requireSafeUrl(metadata.tokenEndpoint, "token endpoint");
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  const method = chooseAuthMethod(client, metadata);
  if (method === "client_secret_basic") {
    const secret = client.clientSecret ?? "";
    headers.authorization = `Basic ${Buffer.from(`${formEncode(client.clientId)}:${formEncode(secret)}`).toString("base64")}`;
  } else if (method === "private_key_jwt") {
    if (client.privateKey === undefined) {
      throw oauthError("REGISTRATION_FAILED", `client "${clipText(client.clientId)}" is registered for private_key_jwt but has no private key`, { issuer: clipText(metadata.issuer) });
    }
    form.set("client_id", client.clientId);
    form.set("client_assertion_type", JWT_BEARER_ASSERTION_TYPE);
    form.set("client_assertion", createClientAssertion(client.clientId, metadata.issuer, client.privateKey, (options.now ?? Date.now)()));
  } else {
    form.set("client_id", client.clientId);
    if (method === "client_secret_post" && client.clientSecret !== undefined) form.set("client_secret", client.clientSecret);
  }
  const grantType = form.get("grant_type") ?? "";
  const where = showUrl(endpoint);
  const dpop = options.dpop;
  const send = () => {
    if (dpop !== undefined) headers.dpop = dpop.proof("POST", endpoint);
    return fetchText(endpoint, { method: "POST", headers, body: form.toString() }, "token endpoint", options);
  };
  let fetched = await send();
  let doc = jsonObject(fetched, "the answer of token endpoint", where, "TOKEN_RESPONSE_INVALID");
  // RFC 9449 §8: a server that wants a nonce in the proof says so once; the request goes again with it.
  if (dpop !== undefined && fetched.status === 400 && doc.error === "use_dpop_nonce" && fetched.dpopNonce !== undefined) {
    dpop.setNonce(endpoint, fetched.dpopNonce);
    fetched = await send();
    doc = jsonObject(fetched, "the answer of token endpoint", where, "TOKEN_RESPONSE_INVALID");
  }
  if (fetched.status < 200 || fetched.status > 299) {
    const error = typeof doc.error === "string" ? doc.error : undefined;
    if (error === undefined) {
      throw oauthError("TOKEN_RESPONSE_INVALID", `token endpoint ${where} answered HTTP ${fetched.status} without an OAuth error`, { url: where, status: fetched.status });
    }
    const description = typeof doc.error_description === "string" ? `: ${clipText(doc.error_description)}` : "";
    throw oauthError("TOKEN_REQUEST_REJECTED", `token endpoint ${where} refused the ${grantType} grant with "${clipText(error)}"${description}`, {
      url: where,
      status: fetched.status,
      error: clipText(error),
    });
  }
  return readTokenResponse(doc, where, (options.now ?? Date.now)(), dpop !== undefined);
}

/**
 * Checks a token response field by field (RFC 6749 §5.1): Bearer tokens, and DPoP-bound ones
 * when a proof went with the request (`dpop`).
 */
export function readTokenResponse(doc: Record<string, unknown>, where: string, now: number, dpop = false): TokenSet {
  const f = new FieldReader(doc, `the token response of ${where}`, "TOKEN_RESPONSE_INVALID");
  const accessToken = f.requiredString("access_token");
  const tokenType = f.requiredString("token_type").toLowerCase();
  if (tokenType !== "bearer" && !(dpop && tokenType === "dpop")) {
    throw oauthError("TOKEN_RESPONSE_INVALID", `the token response of ${where} has token_type "${clipText(tokenType)}"; only ${dpop ? "Bearer and DPoP are" : "Bearer is"} supported`, { url: where });
  }
  const out: TokenSet = { accessToken, tokenType: tokenType === "dpop" ? "DPoP" : "Bearer" };
  const expiresIn = f.count("expires_in");
  if (expiresIn !== undefined) out.expiresAt = now + expiresIn * 1000;
  const refresh = f.string("refresh_token");
  if (refresh !== undefined && refresh !== "") out.refreshToken = refresh;
  const scope = f.string("scope");
  if (scope !== undefined) out.scope = scope;
  return out;
}

/** RFC 8707 `resource` and `scope`, when given. */
function setExtra(form: URLSearchParams, extra: { resource?: string; scope?: string }): void {
  if (extra.resource !== undefined) form.set("resource", extra.resource);
  if (extra.scope !== undefined) form.set("scope", extra.scope);
}

/** application/x-www-form-urlencoded for one value, as RFC 6749 §2.3.1 asks before Basic. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}
