/**
 * `requestState` of the stateless era's input round trips: the server's memory of a request
 * in flight, carried by the client between rounds. The client must not be able to read
 * meaning into it or change it, so it is a JSON payload sealed with HMAC-SHA256 under a key
 * that never leaves the server. The core stays Node-free, so this is Web Crypto
 * (`globalThis.crypto`, which Node builds on node:crypto) (docs/decisions.md 108).
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import { isPlainObject } from "../util/object.ts";

/** What a sealed state binds: the request it belongs to and the answers gathered so far. */
export interface RequestStatePayload {
  /** The method of the request (`tools/call`, `prompts/get`, `resources/read`). */
  readonly method: string;
  /** Digest of the request's salient params (see {@link requestDigest}). */
  readonly request: string;
  /** Input responses from earlier rounds, by input request key. */
  readonly answers: Record<string, unknown>;
}

/** Default lifetime of a sealed state: long enough for a person to answer a form. */
const DEFAULT_TTL_MS = 15 * 60_000;

/** The characters a state may take, so a hostile client cannot make us hash megabytes. */
const MAX_STATE_LENGTH = 256 * 1024;

const encoder = new TextEncoder();

/**
 * Seals and opens `requestState` strings: `<payload base64url>.<HMAC base64url>`. One per
 * McpServer, with a random 256-bit key made at construction: a state from another server, or
 * from this one before a restart, does not open.
 */
export class RequestStateSeal {
  /** Made with the first state sealed or opened (see {@link RequestStateSeal.key}). */
  #key: ReturnType<typeof crypto.subtle.importKey> | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * The random 256-bit key, made on first use and kept for the seal's life. Not in the
   * constructor: the first touch of Web Crypto loads a dozen of Node's modules, which every
   * server start would pay, while most servers never run an input round.
   */
  private get key(): ReturnType<typeof crypto.subtle.importKey> {
    this.#key ??= crypto.subtle.importKey("raw", crypto.getRandomValues(new Uint8Array(32)), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    return this.#key;
  }

  /** A sealed state for `payload`, valid for the seal's lifetime from now. */
  async seal(payload: RequestStatePayload): Promise<string> {
    const body = toBase64Url(encoder.encode(JSON.stringify({ m: payload.method, q: payload.request, a: payload.answers, x: this.now() + this.ttlMs })));
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await this.key, encoder.encode(body)));
    return `${body}.${toBase64Url(mac)}`;
  }

  /**
   * Opens `state` for a request of `method` with digest `request`. Throws RpcError -32602
   * (data `{reason}`) when it is malformed, was not sealed by this server, was changed, has
   * expired, or belongs to another request.
   */
  async open(state: unknown, method: string, request: string): Promise<RequestStatePayload> {
    if (typeof state !== "string" || state.length > MAX_STATE_LENGTH) throw refused("malformed");
    const dot = state.indexOf(".");
    const mac = dot > 0 ? fromBase64Url(state.slice(dot + 1)) : undefined;
    if (mac === undefined) throw refused("malformed");
    const body = state.slice(0, dot);
    // verify() compares in constant time.
    if (!(await crypto.subtle.verify("HMAC", await this.key, mac, encoder.encode(body)))) {
      throw refused("tampered, or not issued by this server");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(fromBase64Url(body)));
    } catch {
      throw refused("malformed");
    }
    if (!isPlainObject(parsed) || typeof parsed.x !== "number" || !isPlainObject(parsed.a)) throw refused("malformed");
    if (parsed.x < this.now()) throw refused("expired");
    if (parsed.m !== method || parsed.q !== request) throw refused("issued for another request");
    return { method, request, answers: parsed.a };
  }
}

/**
 * Digest (SHA-256, base64url) of the params that identify a request across its rounds: the
 * name or URI and the arguments, object keys sorted so that a client re-serialising them in
 * another order still matches.
 */
export async function requestDigest(target: unknown, args: unknown): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", encoder.encode(canonicalJson([target ?? null, args ?? null])));
  return toBase64Url(new Uint8Array(hash));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Bytes of a base64url string; `undefined` when it is not one. */
function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function refused(reason: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid requestState: ${reason}`, { reason });
}
