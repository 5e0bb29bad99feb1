/**
 * HTTP plumbing shared by the Streamable HTTP and legacy HTTP+SSE servers: DNS-rebinding
 * defence (Host and Origin allow-lists), an optional static bearer token, media-type checks,
 * body reading with a size limit and a total-time limit, and writing JSON and SSE replies.
 * Every refusal is written here as an HTTP status with an id-less JSON-RPC error body, so
 * callers only branch on the result.
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ErrorCode, errorMessage } from "../jsonrpc/errors.ts";
import type { JsonRpcId } from "../jsonrpc/message.ts";
import { formatSseComment } from "../jsonrpc/sse.ts";
import { copyFields } from "../util/object.ts";
import { TimeoutQueue } from "../util/timeout-queue.ts";

export interface HttpGuardOptions {
  /**
   * Origins allowed to call (exact, case-insensitive, e.g. `"https://app.example.com"`).
   * Default: `http(s)://` + `127.0.0.1`, `localhost` or `[::1]` with the port the request
   * arrived on. A request without `Origin` (not a browser) is not refused for it.
   */
  allowedOrigins?: readonly string[];
  /**
   * `Host` values allowed (exact, case-insensitive, e.g. `"mcp.example.com:8443"`).
   * Default: `127.0.0.1`, `localhost` or `[::1]` with the port the request arrived on.
   */
  allowedHosts?: readonly string[];
  /**
   * Static token every request must carry as `Authorization: Bearer <token>` (else 401); with
   * a list, any one of them (a gateway gives each client its own, to revoke one alone).
   */
  bearerToken?: string | readonly string[];
  /** Largest request body, bytes (413 beyond). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Time allowed for the whole body to arrive, ms (408 after), 1 .. 2^31-1. Default 30 000. */
  bodyTimeoutMs?: number;
}

/** Error code used for HTTP-level refusals that are not parse or shape errors. */
export const HTTP_REFUSAL_CODE = ErrorCode.ServerError;

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Writes `status` with a JSON-RPC error body (`id` null unless given). If the response has
 * already started (an SSE stream), it is ended instead.
 */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers?: OutgoingHttpHeaders,
  id: JsonRpcId | null = null,
): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  sendJson(res, status, `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":${code},"message":${JSON.stringify(message)}}}`, headers);
}

/** Answers a request whose handling threw: 500 if nothing was written yet, else cut the reply. */
export function failRequest(res: ServerResponse, err: unknown): void {
  if (!res.headersSent) sendRpcError(res, 500, ErrorCode.InternalError, `Internal error: ${errorMessage(err)}`);
  else res.destroy();
}

/** The path of a request target: what comes before the first `?` (the target itself when none). */
export function targetPath(target: string | undefined): string {
  const url = target ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? url : url.slice(0, q);
}

/** A request header as one string (Node joins repeated custom headers with ", "). */
export function requestHeader(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** A request target split at its first `?` into path and query (without the `?`). */
export function splitTarget(target: string | undefined): { path: string; query: string } {
  const url = target ?? "/";
  const q = url.indexOf("?");
  return q === -1 ? { path: url, query: "" } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/** Writes a complete JSON reply (with its length, so the connection stays reusable). */
export function sendJson(res: ServerResponse, status: number, body: string, headers?: OutgoingHttpHeaders): void {
  const length = Buffer.byteLength(body);
  const all: OutgoingHttpHeaders = headers ? copyFields({}, headers) : {};
  all["content-type"] = "application/json";
  all["content-length"] = length;
  res.writeHead(status, all);
  res.end(body);
}

/** A comment line that keeps idle SSE connections (and proxies) from timing out. */
export const SSE_KEEP_ALIVE = formatSseComment("keep-alive");

/** True while `res` can still be written to. */
export function isWritable(res: ServerResponse | undefined): res is ServerResponse {
  return res !== undefined && !res.destroyed && !res.writableEnded;
}

/** Starts a 200 `text/event-stream` reply and sends its headers at once. */
export function startEventStream(res: ServerResponse, headers?: OutgoingHttpHeaders): void {
  const base = { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" };
  res.writeHead(200, headers ? copyFields(base, headers) : base);
  res.flushHeaders();
}

/**
 * Writes to an open reply. A client that lets more than `maxBuffered` bytes pile up is cut
 * off rather than growing server memory (a Streamable HTTP client can resume).
 */
export function writeBounded(res: ServerResponse, text: string, maxBuffered: number): void {
  if (!isWritable(res)) return;
  res.write(text);
  if (res.writableLength > maxBuffered) res.destroy();
}

/** The last `Content-Type` value found acceptable: clients send the same one on every POST. */
let lastJsonContentType: string | undefined;

/** True for `application/json` with no charset or a UTF-8 one (JSON on the wire is UTF-8). */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value === lastJsonContentType) return true;
  const parts = value.split(";");
  if (parts[0].trim().toLowerCase() !== "application/json") return false;
  for (let i = 1; i < parts.length; i++) {
    const eq = parts[i].indexOf("=");
    if (eq === -1) continue;
    if (parts[i].slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const charset = parts[i].slice(eq + 1).trim().replace(/^"|"$/g, "").toLowerCase();
    if (charset !== "utf-8" && charset !== "utf8") return false;
  }
  lastJsonContentType = value;
  return true;
}

let lastAccept: string | undefined;
let lastAcceptRanges: string[] = [];

/** The media ranges of an `Accept` header, lower-cased, without parameters. */
function mediaRanges(accept: string): string[] {
  // Clients send the same header on every request; remember the last one parsed.
  if (accept === lastAccept) return lastAcceptRanges;
  const ranges = accept.split(",").map((r) => r.split(";")[0].trim().toLowerCase());
  lastAccept = accept;
  lastAcceptRanges = ranges;
  return ranges;
}

function covers(ranges: string[], type: string): boolean {
  for (const r of ranges) {
    if (r === type || r === "*/*") return true;
    if (r.endsWith("/*") && type.startsWith(r.slice(0, -1))) return true;
  }
  return false;
}

/**
 * True when `Accept` covers both `application/json` and `text/event-stream`. Wildcard ranges
 * (any type, `application/*`, `text/*`) count: they do accept both types. A missing header
 * does not: a Streamable HTTP client must say what it accepts.
 */
export function acceptsJsonAndEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = mediaRanges(accept);
  return covers(ranges, "application/json") && covers(ranges, "text/event-stream");
}

/** True when `Accept` covers `text/event-stream` (wildcards count; a missing header does not). */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && covers(mediaRanges(accept), "text/event-stream");
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** Splits `host[:port]` (IPv6 literals in brackets) into a name and a port string. */
function splitHostPort(hostPort: string): [string, string | undefined] {
  if (hostPort.startsWith("[")) {
    const end = hostPort.indexOf("]");
    if (end === -1) return [hostPort, undefined];
    const rest = hostPort.slice(end + 1);
    return [hostPort.slice(0, end + 1), rest.startsWith(":") ? rest.slice(1) : rest === "" ? undefined : "\0"];
  }
  const colon = hostPort.lastIndexOf(":");
  return colon === -1 ? [hostPort, undefined] : [hostPort.slice(0, colon), hostPort.slice(colon + 1)];
}

/** True when `hostPort` names a loopback host at `port` (an absent port means the scheme's default). */
function isLoopbackAt(hostPort: string, port: number, defaultPort: number): boolean {
  const [name, p] = splitHostPort(hostPort);
  if (!LOOPBACK_NAMES.has(name)) return false;
  return (p === undefined ? defaultPort : /^\d{1,5}$/.test(p) ? Number(p) : -1) === port;
}

/** The checks and limits of one server, resolved once. */
export class HttpGuard {
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  private readonly hosts: ReadonlySet<string> | undefined;
  private readonly origins: ReadonlySet<string> | undefined;
  private readonly tokenDigests: Buffer[] | undefined;
  /** The body reads in progress, each to answer 408 after `bodyTimeoutMs` (one timer for all). */
  private readonly bodyTimeouts: TimeoutQueue;
  /** Per connection, the last `Host` value allowed: keep-alive clients repeat it on every request. */
  private readonly hostAllowedOn = new WeakMap<Socket, string>();

  constructor(options: HttpGuardOptions = {}) {
    this.maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    if (!(this.maxBodyBytes > 0)) throw new RangeError("maxBodyBytes must be positive");
    if (!(this.bodyTimeoutMs >= 1 && this.bodyTimeoutMs <= 2_147_483_647)) throw new RangeError("bodyTimeoutMs must be in 1..2147483647");
    this.bodyTimeouts = new TimeoutQueue(this.bodyTimeoutMs);
    this.hosts = options.allowedHosts && new Set(options.allowedHosts.map((h) => h.toLowerCase()));
    this.origins = options.allowedOrigins && new Set(options.allowedOrigins.map((o) => o.toLowerCase()));
    if (options.bearerToken !== undefined) {
      const tokens = typeof options.bearerToken === "string" ? [options.bearerToken] : options.bearerToken;
      if (tokens.length === 0) throw new RangeError("bearerToken must hold at least one token");
      for (const token of tokens) if (token === "" || /[\s]/.test(token)) throw new RangeError("bearerToken must be non-empty and contain no whitespace");
      this.tokenDigests = tokens.map(digest);
    }
  }

  /**
   * Host, Origin and bearer checks. On refusal writes 403 (Host or Origin not allowed) or 401
   * (token missing or wrong) and returns false.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    const port = socket.localPort ?? 0;
    const host = req.headers.host;
    if (host === undefined || (this.hostAllowedOn.get(socket) !== host && !this.hostAllowed(host, socket, port))) {
      sendRpcError(res, 403, HTTP_REFUSAL_CODE, "Forbidden: Host header not allowed");
      return false;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.originAllowed(origin.toLowerCase(), port)) {
      sendRpcError(res, 403, HTTP_REFUSAL_CODE, "Forbidden: Origin not allowed");
      return false;
    }
    if (this.tokenDigests) return this.checkBearer(req, res, this.tokenDigests);
    return true;
  }

  /**
   * Reads the whole body. Resolves `undefined` after writing 413 (over `maxBodyBytes`, judged
   * from `Content-Length` before reading when declared) or 408 (not complete within
   * `bodyTimeoutMs`), or when the client went away.
   */
  readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
    const max = this.maxBodyBytes;
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > max) {
      this.tooLarge(req, res);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (body: Buffer | undefined): void => {
        cancelTimeout();
        req.removeListener("data", onData);
        req.removeListener("end", onEnd);
        req.removeListener("close", onClose);
        resolve(body);
      };
      const onData = (chunk: Buffer): void => {
        size += chunk.length;
        if (size > max) {
          finish(undefined);
          this.tooLarge(req, res);
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = (): void => finish(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      const onClose = (): void => finish(undefined);
      const cancelTimeout = this.bodyTimeouts.add(() => {
        finish(undefined);
        sendRpcError(res, 408, HTTP_REFUSAL_CODE, `Request Timeout: body not received within ${this.bodyTimeoutMs} ms`, { connection: "close" });
        req.resume();
      });
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("close", onClose);
    });
  }

  /**
   * Reads the body (see `readBody`) and parses it as UTF-8 JSON. Resolves `undefined` after
   * writing the refusal, 400 with -32700 for a body that is not JSON.
   */
  async readJson(req: IncomingMessage, res: ServerResponse): Promise<{ value: unknown } | undefined> {
    const body = await this.readBody(req, res);
    if (!body) return undefined;
    try {
      return { value: JSON.parse(utf8.decode(body)) };
    } catch (err) {
      sendRpcError(res, 400, ErrorCode.ParseError, `Parse error: ${errorMessage(err)}`);
      return undefined;
    }
  }

  private tooLarge(req: IncomingMessage, res: ServerResponse): void {
    sendRpcError(res, 413, HTTP_REFUSAL_CODE, `Payload Too Large: the body limit is ${this.maxBodyBytes} bytes`, { connection: "close" });
    // Discard what is still arriving so the refusal is not lost to a reset; the connection
    // closes once the response is out.
    req.resume();
  }

  /** Checks `host` for a connection; an allowed value is remembered for the connection's next requests. */
  private hostAllowed(host: string, socket: Socket, port: number): boolean {
    const tls = (socket as { encrypted?: boolean }).encrypted === true;
    const name = host.toLowerCase();
    const ok = this.hosts ? this.hosts.has(name) : isLoopbackAt(name, port, tls ? 443 : 80);
    if (ok) this.hostAllowedOn.set(socket, host);
    return ok;
  }

  private originAllowed(origin: string, port: number): boolean {
    if (this.origins) return this.origins.has(origin);
    const tls = origin.startsWith("https://");
    if (!tls && !origin.startsWith("http://")) return false;
    const hostPort = origin.slice(tls ? 8 : 7);
    return !hostPort.includes("/") && isLoopbackAt(hostPort, port, tls ? 443 : 80);
  }

  private checkBearer(req: IncomingMessage, res: ServerResponse, expected: readonly Buffer[]): boolean {
    const auth = req.headers.authorization;
    if (auth === undefined) {
      sendRpcError(res, 401, HTTP_REFUSAL_CODE, "Unauthorized: bearer token required", { "www-authenticate": "Bearer" });
      return false;
    }
    const m = /^bearer[ ]+(\S+)[ ]*$/i.exec(auth);
    // Compare fixed-size digests, with every token, so neither a token's content, its length
    // nor which one matched leaks by timing.
    let matched = false;
    if (m) {
      const given = digest(m[1]);
      for (const token of expected) matched = timingSafeEqual(given, token) || matched;
    }
    if (!matched) {
      sendRpcError(res, 401, HTTP_REFUSAL_CODE, "Unauthorized: invalid bearer token", { "www-authenticate": 'Bearer error="invalid_token"' });
      return false;
    }
    return true;
  }
}
