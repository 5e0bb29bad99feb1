/**
 * The Streamable HTTP server as an OAuth 2.1 protected resource (MCP authorization, RFC 9728,
 * RFC 6750): it publishes its protected resource metadata, wants `Authorization: Bearer` on
 * every request to the endpoint, and answers what a client's OAuth flow reads:
 *
 * - no token, or one the verifier does not accept (or that expired, or was issued for another
 *   resource): 401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (plus
 *   `error="invalid_token"` when a token was sent);
 * - a token without a scope the request needs: 403 with `error="insufficient_scope"` and the
 *   scopes it needs, so the client can step up;
 * - a verifier that fails or does not answer in time: 503, since asking the user to sign in
 *   again would not help.
 *
 * Verifying the token (signature, issuer, audience, expiry) is the host's: an
 * {@link AccessTokenVerifier} it passes in, often an introspection call or a JWT check against
 * its authorization server. What it returns is checked here once more: the expiry, and the
 * audience when it names one (a token issued for another resource is refused, RFC 8707).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "../jsonrpc/transport.ts";
import { sendRpcError, HTTP_REFUSAL_CODE, targetPath } from "./http-guard.ts";

export type { AuthInfo } from "../jsonrpc/transport.ts";

/**
 * Checks an access token. Resolves the token's {@link AuthInfo}, or undefined when the token is
 * not valid (then 401 `invalid_token`). A rejection means the check itself failed (503).
 */
export type AccessTokenVerifier = (token: string) => Promise<AuthInfo | undefined>;

/** A JSON-RPC message of a POST, as far as a scope decision needs it. */
export interface ScopedMessage {
  method: string;
  params?: unknown;
}

/** Options of {@link StreamableHttpServerOptions.protectedResource}. */
export interface ProtectedResourceOptions {
  /** Checks each request's bearer token. */
  verifier: AccessTokenVerifier;
  /**
   * This server's canonical URI, the `resource` of its metadata and the audience tokens must be
   * issued for, e.g. `"https://mcp.example.com/mcp"` (absolute http(s), no fragment). Default:
   * `http://<Host><path>` of each request, with the `Host` the server admitted (its allow-list
   * decides which); set it behind a proxy or a TLS terminator.
   */
  resource?: string;
  /** Issuer URLs of the authorization servers that issue tokens for it (at least one). */
  authorizationServers: readonly string[];
  /** Scopes a client may ask for (`scopes_supported`). */
  scopesSupported?: readonly string[];
  /** Scopes every request needs. Default none. */
  requiredScopes?: readonly string[];
  /** Scopes one message needs besides `requiredScopes` (per tool, per method). */
  scopesFor?: (message: ScopedMessage) => readonly string[] | undefined;
  /** Human-readable name (`resource_name`). */
  resourceName?: string;
  /** Longest wait for the verifier, ms (503 after). Default 10 000. */
  verifyTimeoutMs?: number;
}

const METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/**
 * The protected-resource side of one Streamable HTTP server: metadata, authentication (401),
 * authorisation by scope (403). The server owns one when given `protectedResource`.
 */
export class ProtectedResource {
  private readonly options: ProtectedResourceOptions;
  /** The endpoint's path on this server (`/mcp`). */
  private readonly endpointPath: string;
  private readonly metadataPaths: ReadonlySet<string>;
  private readonly timeoutMs: number;

  /** `endpointPath` is the MCP endpoint's path on this server, where requests arrive. */
  constructor(options: ProtectedResourceOptions, endpointPath: string) {
    let resourcePath = endpointPath;
    if (options.resource !== undefined) {
      let resource: URL;
      try {
        resource = new URL(options.resource);
      } catch {
        throw new RangeError(`protectedResource.resource must be an absolute URL, got ${JSON.stringify(options.resource)}`);
      }
      if ((resource.protocol !== "https:" && resource.protocol !== "http:") || resource.hash !== "") {
        throw new RangeError(`protectedResource.resource must be an http(s) URL without a fragment, got ${options.resource}`);
      }
      resourcePath = resource.pathname;
    }
    if (options.authorizationServers.length === 0) throw new RangeError("protectedResource.authorizationServers must name at least one issuer");
    for (const scope of [...(options.requiredScopes ?? []), ...(options.scopesSupported ?? [])]) assertScopeToken(scope);
    this.options = options;
    this.endpointPath = endpointPath;
    this.timeoutMs = options.verifyTimeoutMs ?? 10_000;
    if (!(this.timeoutMs > 0 && this.timeoutMs <= 2_147_483_647)) throw new RangeError("protectedResource.verifyTimeoutMs must be in 1..2147483647");
    // RFC 9728 3.1: the well-known segment goes between the host and the resource's path; a
    // proxy may have stripped a prefix, so the endpoint's own path is served too, and the root
    // for clients that only try it (the 2025-03-26 era).
    this.metadataPaths = new Set([wellKnown(resourcePath), wellKnown(endpointPath), METADATA_PREFIX]);
  }

  /** The resource identifier for a request to this server (see {@link ProtectedResourceOptions.resource}). */
  resourceOf(req: IncomingMessage): string {
    return this.options.resource ?? `http://${req.headers.host ?? "localhost"}${this.endpointPath}`;
  }

  /** Whether `req` asks for the metadata document (then {@link serveMetadata} answers it). */
  isMetadataRequest(req: IncomingMessage): boolean {
    return this.metadataPaths.has(targetPath(req.url));
  }

  /** Answers a metadata request: GET (or HEAD) only; readable from any origin, as it is public. */
  serveMetadata(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed", { allow: "GET, HEAD" });
      return;
    }
    const doc: Record<string, unknown> = {
      resource: this.resourceOf(req),
      authorization_servers: [...this.options.authorizationServers],
      bearer_methods_supported: ["header"],
    };
    if (this.options.scopesSupported !== undefined) doc.scopes_supported = [...this.options.scopesSupported];
    if (this.options.resourceName !== undefined) doc.resource_name = this.options.resourceName;
    res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*", "cache-control": "max-age=300" });
    res.end(req.method === "HEAD" ? undefined : JSON.stringify(doc));
  }

  /**
   * Verifies the request's bearer token. Resolves its {@link AuthInfo}, or undefined after
   * writing 401 (no or bad token) or 503 (the verifier failed).
   */
  async authenticate(req: IncomingMessage, res: ServerResponse): Promise<AuthInfo | undefined> {
    const header = req.headers.authorization;
    const m = header === undefined ? null : /^bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i.exec(header);
    if (m === null) {
      this.challenge(req, res, 401, header === undefined ? undefined : "invalid_request", "Unauthorized: bearer token required");
      return undefined;
    }
    let info: AuthInfo | undefined;
    try {
      info = await this.verify(m[1]!);
    } catch (err) {
      sendRpcError(res, 503, HTTP_REFUSAL_CODE, `Service Unavailable: the access token could not be checked (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
    const problem = info === undefined ? "the token is not valid" : this.invalidBecause(info, this.resourceOf(req));
    if (problem !== undefined) {
      this.challenge(req, res, 401, "invalid_token", `Unauthorized: ${problem}`);
      return undefined;
    }
    return info;
  }

  /**
   * Whether `info` holds every scope the messages of a POST need; false after writing 403
   * `insufficient_scope` naming all of them (what it holds and what it lacks).
   */
  authorize(info: AuthInfo, messages: readonly ScopedMessage[], req: IncomingMessage, res: ServerResponse): boolean {
    const needed = new Set(this.options.requiredScopes ?? []);
    const per = this.options.scopesFor;
    if (per !== undefined) for (const m of messages) for (const s of per(m) ?? []) needed.add(assertScopeToken(s));
    const held = new Set(info.scopes);
    const missing = [...needed].filter((s) => !held.has(s));
    if (missing.length === 0) return true;
    // The scopes to ask for next: what it has plus what it lacks, so a step-up loses nothing.
    const wanted = [...new Set([...info.scopes, ...needed])];
    this.challenge(req, res, 403, "insufficient_scope", `Forbidden: the token lacks scope ${missing.join(" ")}`, wanted);
    return false;
  }

  private verify(token: string): Promise<AuthInfo | undefined> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      this.options.verifier(token).then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  private invalidBecause(info: AuthInfo, resource: string): string | undefined {
    if (!Array.isArray(info.scopes)) return "the verifier returned no scopes";
    if (info.expiresAt !== undefined && info.expiresAt * 1000 <= Date.now()) return "the token has expired";
    if (info.audience !== undefined) {
      const aud = typeof info.audience === "string" ? [info.audience] : info.audience;
      if (!aud.includes(resource)) return "the token was issued for another resource";
    }
    return undefined;
  }

  private challenge(req: IncomingMessage, res: ServerResponse, status: 401 | 403, error: string | undefined, message: string, scopes?: readonly string[]): void {
    const scope = scopes ?? this.options.requiredScopes ?? [];
    const resource = new URL(this.resourceOf(req));
    const params = [`resource_metadata="${resource.origin}${wellKnown(resource.pathname)}"`];
    if (error !== undefined) params.unshift(`error="${error}"`);
    if (scope.length > 0) params.push(`scope="${scope.join(" ")}"`);
    sendRpcError(res, status, HTTP_REFUSAL_CODE, message, { "www-authenticate": `Bearer ${params.join(", ")}` });
  }
}

/** The messages of a POST body that name a method (requests and notifications), for {@link ProtectedResource.authorize}. */
export function scopedMessages(body: unknown): ScopedMessage[] {
  const out: ScopedMessage[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m === "object" && m !== null && typeof (m as { method?: unknown }).method === "string") {
      out.push({ method: (m as { method: string }).method, params: (m as { params?: unknown }).params });
    }
  }
  return out;
}

/**
 * Whether two verified tokens belong to the same principal: the same client and the same
 * subject. A session opened with one is refused to the other.
 */
export function samePrincipal(a: AuthInfo | undefined, b: AuthInfo): boolean {
  return a !== undefined && a.clientId === b.clientId && a.subject === b.subject;
}

/** The metadata path for a resource path (`/mcp` -> `/.well-known/oauth-protected-resource/mcp`). */
function wellKnown(resourcePath: string): string {
  return resourcePath === "/" || resourcePath === "" ? METADATA_PREFIX : `${METADATA_PREFIX}${resourcePath.replace(/\/$/, "")}`;
}

/** A scope must be a scope-token (RFC 6749 3.3): it goes into a quoted header value as is. */
function assertScopeToken(scope: string): string {
  if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new RangeError(`not a valid OAuth scope: ${JSON.stringify(scope)}`);
  return scope;
}
