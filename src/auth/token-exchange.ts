/**
 * Enterprise-managed authorization (the MCP extension after SEP-990, on RFC 8693 and the
 * Identity Assertion JWT Authorization Grant draft): the enterprise's identity provider trades
 * the user's ID token for an ID-JAG, a JWT the MCP server's authorization server takes as a
 * JWT-bearer grant (token-request.ts). The user signs in once, at the identity provider; no
 * browser step per MCP server.
 *
 * ```ts
 * const oauth = new OAuthProvider({ serverUrl, redirectUri, grant: "jwt_bearer",
 *   registration: { preRegistered: { [issuer]: { clientId, clientSecret } } },
 *   assertion: ({ issuer, resource }) => requestIdJag(idpTokenEndpoint, { clientId: idpClientId, idToken, audience: issuer, resource }) });
 * ```
 */
import { fetchText, jsonObject, requireSafeUrl, type OAuthHttpOptions } from "./http-fetch.ts";
import { clipText, oauthError, showUrl } from "./oauth-error.ts";

export const TOKEN_EXCHANGE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
export const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";

/** What the identity provider is asked for. */
export interface IdJagRequest {
  /** This client at the identity provider. */
  clientId: string;
  /** With a secret the client authenticates with HTTP Basic, else it sends `client_id` alone. */
  clientSecret?: string;
  /** The user's ID token from the identity provider (the subject token). */
  idToken: string;
  /** The MCP server's authorization server: its issuer. */
  audience: string;
  /** The MCP server (RFC 8707), as its protected resource metadata publishes it. */
  resource: string;
  scope?: string;
}

/** Trades the ID token for an ID-JAG at `tokenEndpoint` (RFC 8693 §2.1); resolves with the ID-JAG. */
export async function requestIdJag(tokenEndpoint: string, request: IdJagRequest, http: OAuthHttpOptions = {}): Promise<string> {
  const endpoint = requireSafeUrl(tokenEndpoint, "identity provider token endpoint");
  const where = showUrl(endpoint);
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT_TYPE,
    subject_token: request.idToken,
    subject_token_type: ID_TOKEN_TYPE,
    requested_token_type: ID_JAG_TOKEN_TYPE,
    audience: request.audience,
    resource: request.resource,
  });
  if (request.scope !== undefined) form.set("scope", request.scope);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (request.clientSecret === undefined) form.set("client_id", request.clientId);
  else headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(request.clientId)}:${encodeURIComponent(request.clientSecret)}`).toString("base64")}`;
  const fetched = await fetchText(endpoint, { method: "POST", headers, body: form.toString() }, "identity provider token endpoint", http);
  const doc = jsonObject(fetched, "the answer of identity provider token endpoint", where, "TOKEN_RESPONSE_INVALID");
  if (fetched.status < 200 || fetched.status > 299) {
    const error = typeof doc.error === "string" ? clipText(doc.error) : "no OAuth error";
    throw oauthError("TOKEN_REQUEST_REJECTED", `identity provider ${where} refused the token exchange (HTTP ${fetched.status}, ${error})`, { url: where, status: fetched.status });
  }
  // RFC 8693 §2.2.1: the issued token is in access_token, whatever it is; here it must be an ID-JAG.
  if (doc.issued_token_type !== ID_JAG_TOKEN_TYPE || typeof doc.access_token !== "string" || doc.access_token === "") {
    throw oauthError("TOKEN_RESPONSE_INVALID", `identity provider ${where} did not issue an ID-JAG (issued_token_type "${clipText(String(doc.issued_token_type))}")`, { url: where });
  }
  return doc.access_token;
}
