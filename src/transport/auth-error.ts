/**
 * HTTP 401/403 from an MCP server: a typed error carrying the parsed `WWW-Authenticate`
 * challenge, and the parser for that header (RFC 9110 §11.6.1).
 *
 * It surfaces what the server asked for (RFC 9728 `resource_metadata`, `scope`, RFC 6750
 * `error`). A transport with an `auth` provider hands the challenge to it first (./http-auth.ts);
 * without one, a person or a host application can get a token and configure it as a header.
 */
import { BridgeError, type BridgeErrorOptions } from "../jsonrpc/errors.ts";

/** One challenge of a `WWW-Authenticate` header. Parameter names are lower-cased. */
export interface WwwAuthenticateChallenge {
  scheme: string;
  params: Record<string, string>;
  /** The token68 form (`Negotiate abc==`), when the challenge used it instead of parameters. */
  token68?: string;
}

/** The challenge an {@link AuthError} reports: the Bearer one if offered, else the first. */
export interface AuthChallenge {
  scheme?: string;
  /** RFC 9728 protected resource metadata URL. */
  resourceMetadata?: string;
  scope?: string;
  /** RFC 6750 error code, e.g. `invalid_token`, `insufficient_scope`. */
  error?: string;
  errorDescription?: string;
  /** Every parameter of that challenge. */
  params: Record<string, string>;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*/;

/**
 * Parses a `WWW-Authenticate` value into its challenges. Tolerant: quoted strings with `\`
 * escapes, commas inside quotes, several schemes in one header (Node joins repeated headers
 * with `, `), token68, odd spacing; junk characters are skipped rather than thrown on.
 *
 * ```ts
 * parseWwwAuthenticate('Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"')
 * // [{ scheme: "Bearer", params: { resource_metadata: "https://x/...", scope: "a b" } }]
 * ```
 */
export function parseWwwAuthenticate(header: string): WwwAuthenticateChallenge[] {
  const s = header;
  const out: WwwAuthenticateChallenge[] = [];
  let i = 0;
  const skipWs = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < s.length && TCHAR.test(s[i]!)) i++;
    return s.slice(start, i);
  };
  // Lenient: an unquoted value runs to the next comma or space (servers send bare URLs).
  const bare = (): string => {
    const start = i;
    while (i < s.length && s[i] !== "," && s[i] !== " " && s[i] !== "\t") i++;
    return s.slice(start, i);
  };
  const quoted = (): string => {
    let value = "";
    i++; // opening quote
    while (i < s.length && s[i] !== '"') {
      if (s[i] === "\\" && i + 1 < s.length) i++;
      value += s[i];
      i++;
    }
    i++; // closing quote (or past the end of an unterminated string)
    return value;
  };

  while (i < s.length) {
    while (i < s.length && (s[i] === " " || s[i] === "\t" || s[i] === ",")) i++;
    if (i >= s.length) break;
    const scheme = token();
    if (scheme === "") {
      i++; // junk: skip it
      continue;
    }
    const challenge: WwwAuthenticateChallenge = { scheme, params: {} };
    out.push(challenge);
    skipWs();
    const t68 = TOKEN68.exec(s.slice(i));
    if (t68) {
      const after = i + t68[0].length;
      let j = after;
      while (j < s.length && (s[j] === " " || s[j] === "\t")) j++;
      // `abc==` followed by a comma or the end is token68; `name=value` is a parameter.
      if (j >= s.length || s[j] === ",") {
        challenge.token68 = t68[0];
        i = after;
        continue;
      }
    }
    for (;;) {
      skipWs();
      const save = i;
      const name = token();
      if (name === "") break;
      skipWs();
      if (s[i] !== "=") {
        i = save; // the next challenge's scheme
        break;
      }
      i++;
      skipWs();
      const value = s[i] === '"' ? quoted() : bare();
      const key = name.toLowerCase();
      if (!Object.prototype.hasOwnProperty.call(challenge.params, key)) challenge.params[key] = value;
      skipWs();
      if (s[i] !== ",") break;
      i++;
      skipWs();
    }
  }
  return out;
}

/** Picks the challenge to report and names its well-known parameters. */
export function summarizeChallenges(challenges: readonly WwwAuthenticateChallenge[]): AuthChallenge {
  const chosen = challenges.find((c) => c.scheme.toLowerCase() === "bearer") ?? challenges[0];
  if (!chosen) return { params: {} };
  const p = chosen.params;
  const out: AuthChallenge = { scheme: chosen.scheme, params: { ...p } };
  if (p.resource_metadata !== undefined) out.resourceMetadata = p.resource_metadata;
  if (p.scope !== undefined) out.scope = p.scope;
  if (p.error !== undefined) out.error = p.error;
  if (p.error_description !== undefined) out.errorDescription = p.error_description;
  return out;
}

/**
 * A server answered 401 or 403. Code `AUTH_FAILED`. Never retried and never a reason to fall
 * back to another transport. {@link AuthError.fromResponse} builds one from the response;
 * `details` holds `status`, `url`, `challenge` and `challenges`.
 *
 * ```ts
 * try { await client.connect(transport) } catch (e) {
 *   if (e instanceof AuthError) console.error(e.status, e.challenge.resourceMetadata, e.challenge.scope);
 * }
 * ```
 */
export class AuthError extends BridgeError {
  readonly status: number;
  readonly challenge: AuthChallenge;
  /** Every challenge the server offered. */
  readonly challenges: readonly WwwAuthenticateChallenge[];
  /** The endpoint (origin and path; the query string is left out in case it holds a secret). */
  readonly url: string;
  /** The `WWW-Authenticate` header as received, for an auth provider to parse (not in the message). */
  readonly wwwAuthenticate: string | undefined;
  /** The `DPoP-Nonce` header, when the server sent one (RFC 9449 §9). */
  readonly dpopNonce: string | undefined;

  constructor(
    code: "AUTH_FAILED",
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & {
      details: { status: number; url: string; challenge: AuthChallenge; challenges: readonly WwwAuthenticateChallenge[] };
      wwwAuthenticate?: string | undefined;
      dpopNonce?: string | undefined;
    },
  ) {
    super(code, message, options);
    this.name = "AuthError";
    this.status = options.details.status;
    this.challenge = options.details.challenge;
    this.challenges = options.details.challenges;
    this.url = options.details.url;
    this.wwwAuthenticate = options.wwwAuthenticate;
    this.dpopNonce = options.dpopNonce;
  }

  /** The error for a 401/403 answer from `url` (query string already left out) with its `WWW-Authenticate` header. */
  static fromResponse(status: number, url: string, wwwAuthenticate: string | undefined, dpopNonce?: string): AuthError {
    const challenges = wwwAuthenticate ? parseWwwAuthenticate(wwwAuthenticate) : [];
    const challenge = summarizeChallenges(challenges);
    return new AuthError("AUTH_FAILED", authMessage(status, url, challenge), { details: { status, url, challenge, challenges }, wwwAuthenticate, dpopNonce });
  }
}

function authMessage(status: number, url: string, c: AuthChallenge): string {
  const what =
    c.error === "insufficient_scope"
      ? "the token lacks a required scope"
      : status === 401
        ? "the server requires authorization"
        : "the server refused access";
  const asked: string[] = [];
  if (c.scheme) asked.push(`scheme ${clip(c.scheme)}`);
  if (c.error) asked.push(`error "${clip(c.error)}"`);
  if (c.errorDescription) asked.push(`description "${clip(c.errorDescription)}"`);
  if (c.scope) asked.push(`scope "${clip(c.scope)}"`);
  if (c.resourceMetadata) asked.push(`resource metadata ${clip(c.resourceMetadata)}`);
  const challenge = asked.length > 0 ? ` (WWW-Authenticate: ${asked.join(", ")})` : " (no WWW-Authenticate challenge)";
  return (
    `HTTP ${status} from ${url}: ${what}${challenge}. Give the transport an \`auth\` provider (OAuthProvider), ` +
    `or obtain a token yourself and pass it as a header, e.g. "Authorization: Bearer <token>"`
  );
}

/** Server-chosen text in a message: no control characters, bounded length. */
function clip(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, " ");
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}
