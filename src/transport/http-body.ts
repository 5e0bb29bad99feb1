/**
 * Reading HTTP response bodies for the client transports, and the errors built from them.
 * Every reader enforces a byte limit and destroys the socket (via {@link HttpCall.abort}) when
 * it is passed. Listeners go only on the per-request `res`, never on a socket or an agent.
 */
import type * as http from "node:http";
import { BridgeError } from "../jsonrpc/errors.ts";
import { isPlainObject } from "../util/object.ts";
import { AuthError } from "./auth-error.ts";
import { displayUrl, type HttpCall, type HttpMethod } from "./http-request.ts";

/** Error bodies are read up to this many bytes for the message; past it the socket is dropped. */
const SNIPPET_BYTES = 8192;
/** Bodies nobody reads (202, ignored replies) are drained up to this size, then dropped. */
const DRAIN_BYTES = 64 * 1024;

/**
 * The first value of header `name` (lower-case) of a response, read from `rawHeaders`: the
 * `headers` object Node builds on first use costs ~1 us per response on Node 20, five times
 * this scan, and a call reads two headers of it (docs/decisions.md 163). Node keeps the first
 * value of a repeated `content-type` or `content-length` too.
 */
export function responseHeader(res: http.IncomingMessage, name: string): string | undefined {
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length - 1; i += 2) {
    const key = raw[i]!;
    if (key.length === name.length && (key === name || key.toLowerCase() === name)) return raw[i + 1];
  }
  return undefined;
}

/** The media type of a response, lower-cased, without parameters. */
export function mediaType(res: http.IncomingMessage): string {
  const ct = responseHeader(res, "content-type");
  if (ct === undefined) return "";
  const semi = ct.indexOf(";");
  return (semi === -1 ? ct : ct.slice(0, semi)).trim().toLowerCase();
}

export function limitError(what: string, maxBytes: number): BridgeError {
  return new BridgeError("LIMIT_EXCEEDED", `${what} is larger than the limit of ${maxBytes} bytes`, {
    details: { maxBytes },
  });
}

/**
 * Reads a whole body. Past `maxBytes` (declared or counted) the socket is destroyed and the
 * promise rejects with `LIMIT_EXCEEDED`.
 */
export function readBody(call: HttpCall, res: http.IncomingMessage, maxBytes: number, what: string | (() => string)): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(responseHeader(res, "content-length"));
    if (declared > maxBytes) {
      call.abort(limitError(nameOf(what), maxBytes));
      reject(call.abortReason);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    res.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) {
        done = true;
        call.abort(limitError(nameOf(what), maxBytes));
        reject(call.abortReason);
        return;
      }
      chunks.push(chunk);
    });
    res.on("end", () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    // No 'error' listener: a response emits 'error' only when it has one (Node 20-26,
    // IncomingMessage's destroy), and the 'close' below reports the failure either way.
    res.on("close", () => {
      if (done) return;
      done = true;
      reject(call.abortReason ?? new BridgeError("HTTP_ERROR", `${nameOf(what)}: connection closed before the body ended`));
    });
  });
}

/** A name given as text, or as a function that builds it when an error needs it. */
function nameOf(what: string | (() => string)): string {
  return typeof what === "string" ? what : what();
}

/** Reads at most a few KiB of an error body as text, for a message; drops the socket past that. */
async function readSnippet(call: HttpCall, res: http.IncomingMessage): Promise<string> {
  try {
    return (await readBody(call, res, SNIPPET_BYTES, "error body")).toString("utf8");
  } catch {
    return "";
  }
}

/** Consumes a body nobody needs, so the socket can be reused; drops the socket if it is large. */
export function drain(call: HttpCall, res: http.IncomingMessage): Promise<void> {
  return readBody(call, res, DRAIN_BYTES, "ignored body").then(
    () => undefined,
    () => undefined,
  );
}

/**
 * The error for a non-2xx response: `AuthError` for 401/403 (with the parsed challenge), else
 * `HTTP_ERROR` naming the status and the server's reason. Consumes the body.
 */
export async function statusError(call: HttpCall, res: http.IncomingMessage, method: HttpMethod, url: URL, label?: string): Promise<BridgeError> {
  const status = res.statusCode ?? 0;
  if (status === 401 || status === 403) {
    await drain(call, res);
    const nonce = res.headers["dpop-nonce"];
    return AuthError.fromResponse(status, displayUrl(url), res.headers["www-authenticate"], typeof nonce === "string" ? nonce : undefined);
  }
  return httpError(res, method, url, label, await readSnippet(call, res));
}

/**
 * A non-2xx answer of the stateless era (2026-07-28), which sends JSON-RPC errors with 4xx
 * statuses (400 for -32020/-32022/-32602, 404 for -32601): the error response when the body
 * is one, for the peer to settle its request with; else {@link statusError}'s error.
 */
export async function refusalReply(
  call: HttpCall,
  res: http.IncomingMessage,
  method: HttpMethod,
  url: URL,
  label?: string,
): Promise<{ reply: Record<string, unknown> } | { error: BridgeError }> {
  if (res.statusCode === 401 || res.statusCode === 403) return { error: await statusError(call, res, method, url, label) };
  const text = await readSnippet(call, res);
  try {
    const v = JSON.parse(text) as unknown;
    if (isPlainObject(v) && isPlainObject(v.error) && typeof v.error.code === "number" && typeof v.error.message === "string") return { reply: v };
  } catch {
    // not JSON: an HTTP error like any other
  }
  return { error: httpError(res, method, url, label, text) };
}

function httpError(res: http.IncomingMessage, method: HttpMethod, url: URL, label: string | undefined, body: string): BridgeError {
  const status = res.statusCode ?? 0;
  const reason = describeErrorBody(body);
  const text = `${label ? `${label}: ` : ""}${method} ${displayUrl(url)} answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""}`;
  return new BridgeError("HTTP_ERROR", reason ? `${text}: ${reason}` : text, {
    details: { status, method, url: displayUrl(url) },
  });
}

/** A readable reason from an error body: a JSON-RPC error's message, else the start of the text. */
export function describeErrorBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed === "") return "";
  try {
    const v = JSON.parse(trimmed) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof v.error === "object" ? v.error?.message : (v.error ?? v.message);
    if (typeof m === "string") return clipText(m);
  } catch {
    // not JSON: use the text
  }
  return clipText(trimmed);
}

function clipText(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, " ");
  return clean.length > 300 ? `${clean.slice(0, 300)}...` : clean;
}
