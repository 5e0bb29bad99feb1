/**
 * PKCE S256 (RFC 7636) and the `state` value, from node:crypto's random source.
 */
import { createHash, randomBytes } from "node:crypto";

/** A PKCE pair: the verifier stays with the client, the challenge goes in the authorization URL. */
export interface PkcePair {
  verifier: string;
  challenge: string;
  method: "S256";
}

/**
 * A fresh PKCE pair: 32 random bytes as base64url make a 43-character verifier (RFC 7636 §4.1
 * allows 43 to 128 unreserved characters); the challenge is base64url(SHA-256(verifier)).
 * Only S256 is ever made: `plain` would hand the verifier to anyone who sees the URL.
 */
export function createPkcePair(): PkcePair {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: s256Challenge(verifier), method: "S256" };
}

/** base64url(SHA-256(verifier)), the S256 code challenge. */
export function s256Challenge(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** An unguessable `state` (128 bits), which binds the redirect to this authorization request. */
export function createState(): string {
  return randomBytes(16).toString("base64url");
}
