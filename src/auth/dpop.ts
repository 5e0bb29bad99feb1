/**
 * DPoP (RFC 9449; docs/decisions.md 122): an ES256 key of this client, a proof JWT signed
 * with it for each HTTP request (`htm`, `htu`, a fresh `jti`, `iat`, and for a resource request
 * `ath`, the hash of the access token), and the nonces servers hand out (`DPoP-Nonce`), kept
 * per origin. A token bound to the key is worthless to whoever copies it without the key.
 *
 * The key lives in memory only, for the life of its `OAuthProvider`: it is never written to a
 * token store, so tokens bound to it do not outlive the process either.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

/** One key pair and what its servers asked of its proofs. */
export class DpopKey {
  private readonly privateKey: KeyObject;
  private readonly jwk: { kty: string; crv: string; x: string; y: string };
  private readonly nonces = new Map<string, string>();

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: "jwk" });
    this.jwk = { kty: String(kty), crv: String(crv), x: String(x), y: String(y) };
  }

  /** Remembers the nonce a server at `url`'s origin asked for (RFC 9449 §8, §9). */
  setNonce(url: URL, nonce: string): void {
    this.nonces.set(url.origin, nonce);
  }

  /**
   * A proof for one request: `method` to `url` (its query and fragment left out, as `htu`
   * must be), with `accessToken` for a request to a resource server.
   */
  proof(method: string, url: URL, accessToken?: string, nowMs = Date.now()): string {
    const header = { typ: "dpop+jwt", alg: "ES256", jwk: this.jwk };
    const payload: Record<string, unknown> = {
      jti: randomBytes(16).toString("base64url"),
      htm: method,
      htu: `${url.origin}${url.pathname}`,
      iat: Math.floor(nowMs / 1000),
    };
    if (accessToken !== undefined) payload.ath = createHash("sha256").update(accessToken, "ascii").digest("base64url");
    const nonce = this.nonces.get(url.origin);
    if (nonce !== undefined) payload.nonce = nonce;
    const input = `${encode(header)}.${encode(payload)}`;
    // JWS wants the raw r||s form of an ECDSA signature, not Node's default DER.
    const signature = sign("sha256", Buffer.from(input), { key: this.privateKey, dsaEncoding: "ieee-p1363" });
    return `${input}.${signature.toString("base64url")}`;
  }
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}
