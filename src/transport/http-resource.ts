/**
 * `StreamableHttpServer` as an OAuth protected resource (MCP authorization, RFC 9728, RFC 6750;
 * docs/decisions.md 5-auth): it publishes its protected resource metadata at
 * `/.well-known/oauth-protected-resource<path>` (and at the root), answers a request without a
 * valid token 401 with a challenge naming that document and the scopes to ask for, a token
 * without a required scope 403 `insufficient_scope`, and hands the verified principal to the
 * session's transport (`transport.authInfo`), where handlers read it:
 * `ctx.session.transport.authInfo?.subject`.
 *
 * Verifying the token is the host's: a JWT checked against the authorization server's keys,
 * or an introspection call. The verifier must check the audience (the token was issued for this
 * resource, RFC 8707): a token meant for another server is not valid here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "./transport.ts";
import { HTTP_REFUSAL_CODE, sendRpcError } from "./http-guard.ts";

/** The `auth` option of `StreamableHttpServer`. */
export interface ProtectedResourceOptions {
  /**
   * Who the bearer token belongs to, or undefined when it is not valid here (unknown, expired,
   * revoked, issued for another resource). A throw answers 500, never a pass.
   */
  verifyToken(token: string): AuthInfo | undefined | Promise<AuthInfo | undefined>;
  /** The authorization servers (their issuers) that issue tokens for this server. */
  authorizationServers: readonly string[];
  /**
   * The resource identifier clients ask tokens for. Default: `http://<Host><path>` of each
   * request (the Host the guard admitted); set it behind a proxy or TLS terminator.
   */
  resource?: string;
  /** Scopes every request needs; a token without one of them gets 403 `insufficient_scope`. */
  requiredScopes?: readonly string[];
  /** Published as `scopes_supported`. Default: `requiredScopes`. */
  scopesSupported?: readonly string[];
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** The principal each admitted request was verified as, by its response (see {@link bindPrincipal}). */
const principals = new WeakMap<ServerResponse, AuthInfo>();

/** The checks of one server, resolved once. */
export class ProtectedResource {
  private readonly options: ProtectedResourceOptions;
  private readonly path: string;
  private readonly required: readonly string[];

  /** `bearerToken`: the server's static token option, which excludes this one. */
  constructor(options: ProtectedResourceOptions, path: string, bearerToken?: string) {
    if (bearerToken !== undefined) throw new RangeError("StreamableHttpServer: give auth or bearerToken, not both");
    if (options.authorizationServers.length === 0) throw new RangeError("StreamableHttpServer auth: authorizationServers must name at least one issuer");
    this.options = options;
    this.path = path;
    this.required = options.requiredScopes ?? [];
  }

  /** Whether `target` (a path without query) is one of the metadata document's addresses. */
  isMetadataPath(target: string): boolean {
    return target === `${WELL_KNOWN}${this.path}` || target === WELL_KNOWN;
  }

  /** Answers a metadata request (GET only). */
  serveMetadata(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== "GET") {
      sendRpcError(res, 405, HTTP_REFUSAL_CODE, "Method Not Allowed", { allow: "GET" });
      return;
    }
    const doc: Record<string, unknown> = {
      resource: this.resourceOf(req),
      authorization_servers: this.options.authorizationServers,
      bearer_methods_supported: ["header"],
    };
    const scopes = this.options.scopesSupported ?? this.options.requiredScopes;
    if (scopes !== undefined) doc.scopes_supported = scopes;
    const body = JSON.stringify(doc);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "max-age=300" });
    res.end(body);
  }

  /**
   * The request's principal; or undefined after writing 401 (no token, a malformed header, a
   * token the verifier refused) or 403 (a required scope missing).
   */
  async authenticate(req: IncomingMessage, res: ServerResponse): Promise<AuthInfo | undefined> {
    const header = req.headers.authorization;
    const token = header === undefined ? undefined : /^bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i.exec(header)?.[1];
    if (token === undefined) {
      this.refuse(req, res, 401, header === undefined ? undefined : "invalid_request", "Unauthorized: a bearer token is required");
      return undefined;
    }
    const info = await this.options.verifyToken(token);
    if (info === undefined) {
      this.refuse(req, res, 401, "invalid_token", "Unauthorized: the token is not valid for this server");
      return undefined;
    }
    if (!this.required.every((s) => info.scopes.includes(s))) {
      this.refuse(req, res, 403, "insufficient_scope", `Forbidden: the token lacks a required scope (${this.required.join(" ")})`);
      return undefined;
    }
    principals.set(res, info);
    return info;
  }

  private refuse(req: IncomingMessage, res: ServerResponse, status: 401 | 403, error: string | undefined, message: string): void {
    const metadata = new URL(`${WELL_KNOWN}${this.path}`, this.resourceOf(req)).href;
    const params = [`resource_metadata="${metadata}"`];
    if (this.required.length > 0) params.push(`scope="${this.required.join(" ")}"`);
    if (error !== undefined) params.push(`error="${error}"`);
    sendRpcError(res, status, HTTP_REFUSAL_CODE, message, { "www-authenticate": `Bearer ${params.join(", ")}` });
  }

  private resourceOf(req: IncomingMessage): string {
    return this.options.resource ?? `http://${req.headers.host ?? "localhost"}${this.path}`;
  }
}

/**
 * Gives a session's transport the principal its request was verified as. A session belongs to
 * the subject that opened it: a request of another subject gets 403 and false (a session id
 * is no credential). True when no principal was verified (no `auth` option).
 */
export function bindPrincipal(transport: { authInfo: AuthInfo | undefined }, res: ServerResponse): boolean {
  const info = principals.get(res);
  if (info === undefined) return true;
  if (transport.authInfo !== undefined && transport.authInfo.subject !== info.subject) {
    sendRpcError(res, 403, HTTP_REFUSAL_CODE, "Forbidden: this session belongs to another principal");
    return false;
  }
  transport.authInfo = info;
  return true;
}
