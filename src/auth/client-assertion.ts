/**
 * `private_key_jwt` client authentication (RFC 7523 §2.2, OIDC Core §9): a short-lived JWT
 * signed with the client's ES256 key, made with node:crypto only.
 */
import { createPrivateKey, randomBytes, sign, type KeyObject } from "node:crypto";

/** The assertion type sent beside the JWT (RFC 7523 §2.2). */
export const JWT_BEARER_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** How long an assertion is valid: long enough for one request, short enough to be useless later. */
const ASSERTION_LIFETIME_S = 300;

/**
 * A signed client assertion: `iss` and `sub` are the client_id, `aud` the authorization
 * server's issuer identifier (what RFC 7523bis settles on, rather than the token endpoint URL),
 * a random `jti` so the server can refuse a replay. `privateKey` is a PEM string or a KeyObject
 * of a P-256 key.
 */
export function createClientAssertion(clientId: string, audience: string, privateKey: string | KeyObject, nowMs: number): string {
  const key = typeof privateKey === "string" ? createPrivateKey(privateKey) : privateKey;
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: "ES256", typ: "JWT" };
  const payload = { iss: clientId, sub: clientId, aud: audience, iat, exp: iat + ASSERTION_LIFETIME_S, jti: randomBytes(16).toString("base64url") };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  // JWS wants the raw r||s form of an ECDSA signature, not Node's default DER.
  const signature = sign("sha256", Buffer.from(signingInput), { key, dsaEncoding: "ieee-p1363" });
  return `${signingInput}.${signature.toString("base64url")}`;
}

function base64url(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}
