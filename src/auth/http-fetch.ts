/**
 * Every HTTP request of the OAuth flow goes through here: only https (or http to a loopback
 * host), no redirects followed, a byte limit on the body and a time limit on the whole exchange
 * (headers and body), so a server that never answers or answers forever cannot hang the flow.
 */
import { isLoopbackHost } from "../security/url.ts";
import { clipText, OAuthError, oauthError, showUrl } from "./oauth-error.ts";

/** Default byte limit of a metadata, registration or token response. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** Default time limit of one request, headers and body together. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** How the flow's requests are bounded and made. */
export interface OAuthHttpOptions {
  /** Time limit of one request in ms, body included. Default 30 s. */
  timeoutMs?: number;
  /** Byte limit of one response body. Default 1 MiB. */
  maxBytes?: number;
  /** Cancels every request in flight. */
  signal?: AbortSignal;
  /** The fetch to use (a host's own, e.g. with a proxy). Default the global one. */
  fetch?: typeof fetch;
}

/** A response read whole: status, media type (lower-cased, no parameters), body text. */
export interface FetchedText {
  status: number;
  mediaType: string;
  text: string;
  /** The `DPoP-Nonce` header, when the server sent one (RFC 9449 §8). */
  dpopNonce?: string;
}

/**
 * Parses `raw` and refuses what the flow must never talk to: a URL that is not https (http
 * only to a loopback host, for local servers and tests), or one with user info in it.
 * `what` names the URL in the message ("token endpoint").
 */
export function requireSafeUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw oauthError("INSECURE_URL", `${what} is not a valid URL: "${clipText(raw)}"`);
  }
  if (url.username !== "" || url.password !== "") {
    throw oauthError("INSECURE_URL", `${what} ${showUrl(url)} has credentials in it; they are refused`, { url: showUrl(url) });
  }
  const ok = url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
  if (!ok) {
    throw oauthError("INSECURE_URL", `${what} ${showUrl(url)} must use https (http only to a loopback host)`, { url: showUrl(url) });
  }
  return url;
}

/**
 * Makes one request and reads its body as text within the limits. Never follows a redirect (a
 * 3xx comes back as is): a redirect could carry a form with a secret to another host.
 * Rejects with `FETCH_FAILED` (unreachable, too slow) or `TOO_LARGE`.
 */
export async function fetchText(url: URL, init: { method: "GET" | "POST"; headers?: Record<string, string>; body?: string }, what: string, options: OAuthHttpOptions = {}): Promise<FetchedText> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const doFetch = options.fetch ?? fetch;
  const where = showUrl(url);
  const failed = (cause: unknown) =>
    timeout.aborted
      ? oauthError("FETCH_FAILED", `${what} ${where} did not answer within ${timeoutMs} ms`, { url: where, timeoutMs }, cause)
      : oauthError("FETCH_FAILED", `${what} ${where} could not be reached: ${clipText(errorText(cause))}`, { url: where }, cause);
  let res: Response;
  try {
    res = await doFetch(url, { method: init.method, headers: init.headers, body: init.body, redirect: "manual", signal });
  } catch (e) {
    throw failed(e);
  }
  const declared = Number(res.headers.get("content-length"));
  if (declared > maxBytes) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge(what, where, maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = res.body?.getReader();
    for (;;) {
      if (!reader) break;
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(what, where, maxBytes);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof OAuthError) throw e;
    throw failed(e);
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  const type = res.headers.get("content-type") ?? "";
  const semi = type.indexOf(";");
  const out: FetchedText = { status: res.status, mediaType: (semi === -1 ? type : type.slice(0, semi)).trim().toLowerCase(), text };
  const nonce = res.headers.get("dpop-nonce");
  if (nonce !== null) out.dpopNonce = nonce;
  return out;
}

/** Parses a fetched body as a JSON object, or throws `reason` naming `what`. */
export function jsonObject(fetched: FetchedText, what: string, where: string, reason: "METADATA_INVALID" | "TOKEN_RESPONSE_INVALID"): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(fetched.text);
  } catch {
    const kind = fetched.mediaType === "" ? "no media type" : fetched.mediaType;
    throw oauthError(reason, `${what} ${where} is not JSON (HTTP ${fetched.status}, ${clipText(kind)})`, { url: where, status: fetched.status });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw oauthError(reason, `${what} ${where} is not a JSON object`, { url: where, status: fetched.status });
  }
  return value as Record<string, unknown>;
}

function tooLarge(what: string, where: string, maxBytes: number) {
  return oauthError("TOO_LARGE", `${what} ${where} is larger than the limit of ${maxBytes} bytes`, { url: where, maxBytes });
}

function errorText(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
    return `${e.message}${cause}`;
  }
  return String(e);
}
