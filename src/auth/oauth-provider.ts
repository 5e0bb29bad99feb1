/**
 * The OAuth client in one object, for the HTTP transports: `accessToken()` before a request,
 * `handleUnauthorized()` on a 401/403. It discovers the protected resource and its
 * authorization server, registers, runs the authorization code flow through a host-supplied
 * `authorize` callback (the host owns the browser or UI), and refreshes, one flow at a time
 * (docs/decisions.md 116).
 */
import { parseWwwAuthenticate, summarizeChallenges, type AuthChallenge } from "../transport/auth-error.ts";
import type { HttpAuthProvider, UnauthorizedResponse } from "../transport/auth-provider.ts";
import { DpopKey } from "./dpop.ts";
import { AuthorizationRequest } from "./authorization-request.ts";
import type { OAuthHttpOptions } from "./http-fetch.ts";
import { OAuthError, clipText, oauthError, showUrl } from "./oauth-error.ts";
import { registerClient, type ClientRegistrationOptions } from "./registration.ts";
import { discoverResourceMetadata, type ProtectedResourceMetadata } from "./resource-metadata.ts";
import { chooseScope, splitScope } from "./scopes.ts";
import { discoverServerMetadata, legacyServerMetadata, requirePkceS256, type AuthorizationServerMetadata } from "./server-metadata.ts";
import {
  exchangeCode,
  refreshAccessToken,
  requestClientCredentialsToken,
  requestJwtBearerToken,
  type ClientCredentials,
  type TokenRequestOptions,
  type TokenSet,
} from "./token-request.ts";
import { MemoryTokenStore, type StoredTokens, type TokenStore } from "./token-store.ts";

/** Shows the user `url` and resolves with the redirect that came back (the URL or its query). */
export type AuthorizeCallback = (url: string, info: { issuer: string; server: string }) => Promise<string | URL | URLSearchParams>;

export interface OAuthProviderOptions {
  /** The MCP endpoint this provider gets tokens for. */
  serverUrl: string;
  /** The redirect URI the `authorize` callback receives redirects on (sent in registration too). */
  redirectUri: string;
  /**
   * `authorization_code` (default): a user authorizes through `authorize`.
   * `client_credentials`: the client acts for itself with its configured secret or key.
   * `jwt_bearer`: a workload presents the JWT `assertion` gives (RFC 7523, workload identity).
   */
  grant?: "authorization_code" | "client_credentials" | "jwt_bearer";
  /**
   * `jwt_bearer`: the JWT to present, asked for each token request (such JWTs are short-lived):
   * a workload identity token, or an ID-JAG for this `issuer` and `resource` (token-exchange.ts).
   */
  assertion?: (target: { issuer: string; resource: string }) => string | Promise<string>;
  /** Runs the user's part; without it a flow that needs the user fails with `INTERACTION_REQUIRED`. */
  authorize?: AuthorizeCallback;
  /** Default: a new {@link MemoryTokenStore}. */
  store?: TokenStore;
  /** Configured credentials, client metadata document URL, DCR fields. */
  registration?: Omit<ClientRegistrationOptions, "redirectUri">;
  /** Time and size limits of every request of the flow. */
  http?: OAuthHttpOptions;
  /** Refresh this long before the expiry. Default 60 s. */
  refreshMarginMs?: number;
  /** Ask for `offline_access` when the authorization server lists it. Default true. */
  offlineAccess?: boolean;
  /**
   * Use DPoP (RFC 9449) with an authorization server that lists ES256 in
   * `dpop_signing_alg_values_supported`. Default false: the key lives in memory only, so a
   * program that keeps tokens for a later run (the CLI) cannot use what it would bind to it.
   */
  dpop?: boolean;
  /** Told every secret obtained (tokens, client secrets), e.g. to add it to a `Redactor`. */
  onSecret?: (value: string) => void;
  now?: () => number;
}

/** Re-authorizations for one challenged scope set before giving up (the specification: "a few"). */
const MAX_STEP_UPS = 3;

interface Discovered {
  metadata: AuthorizationServerMetadata;
  resource?: ProtectedResourceMetadata;
}

/**
 * ```ts
 * const oauth = new OAuthProvider({ serverUrl, redirectUri, authorize: async (url) => askUser(url) });
 * const token = await oauth.accessToken();              // before a request: stored, refreshed, or undefined
 * const fresh = await oauth.handleUnauthorized(401, res.headers.get("www-authenticate") ?? undefined);
 * ```
 */
export class OAuthProvider implements HttpAuthProvider {
  private readonly options: OAuthProviderOptions;
  private readonly store: TokenStore;
  private readonly server: string;
  private discovered: Discovered | undefined;
  /** Step-ups made for each challenged scope set (sorted), since the last 401. */
  private readonly stepUps = new Map<string, number>();
  /** This provider's DPoP key, made when a server first takes DPoP (docs/decisions.md 122). */
  private dpopKey: DpopKey | undefined;
  /** The access tokens bound to {@link dpopKey}. */
  private readonly dpopBound = new Set<string>();
  /** The one flow or refresh in flight; concurrent callers wait for it (a refresh race can revoke a token family). */
  private inFlight: Promise<string> | undefined;

  constructor(options: OAuthProviderOptions) {
    this.options = options;
    this.store = options.store ?? new MemoryTokenStore();
    this.server = showUrl(options.serverUrl);
  }

  /**
   * The access token to send now, or undefined when none is stored. A token within the refresh
   * margin of its expiry is refreshed first; if that fails the stored tokens are dropped and
   * undefined comes back, so the request goes without one and its 401 starts a new flow.
   * While a flow is in flight this waits for it, and rejects with its error.
   */
  async accessToken(): Promise<string | undefined> {
    if (this.inFlight) return this.inFlight;
    const stored = await this.store.getTokens(this.server);
    if (stored === undefined) return undefined;
    if (!this.expiring(stored)) return stored.accessToken;
    if (stored.refreshToken === undefined) return undefined;
    try {
      return await this.once(async () => this.refresh(stored, (await this.discover(undefined, false)).metadata));
    } catch (e) {
      // Only a refused refresh token is forgotten; one the server could not be asked about
      // (unreachable, too slow) is kept for the 401 that follows.
      if (refreshUnusable(e)) await this.store.deleteTokens(this.server);
      return undefined;
    }
  }

  /**
   * What a transport calls when the server answered 401 or 403: resolves with a new access
   * token to retry the request with, or rejects with an `OAuthError`. A stored refresh token is
   * tried first; then the whole flow runs. A 403 `insufficient_scope` asks for the union of the
   * scopes held and the ones the challenge names.
   */
  handleUnauthorized(status: number, wwwAuthenticate: string | undefined, response?: UnauthorizedResponse): Promise<string> {
    const challenge = summarizeChallenges(wwwAuthenticate ? parseWwwAuthenticate(wwwAuthenticate) : []);
    if (challenge.error === "use_dpop_nonce" && response?.dpopNonce !== undefined && this.dpopKey !== undefined) return this.takeNonce(response.dpopNonce);
    return this.once(async () => {
      // A 401 may mean the server moved to another authorization server: discover again.
      const found = await this.discover(challenge.resourceMetadata, true);
      const stored = await this.store.getTokens(this.server);
      const stepUp = status === 403 && challenge.error === "insufficient_scope";
      if (status === 403 && !stepUp) {
        throw oauthError("FORBIDDEN", `${this.server} refused access (HTTP 403) without asking for a scope; authorizing again would not change that`, {
          error: clipText(challenge.error ?? ""),
        });
      }
      if (stepUp) this.countStepUp(challenge.scope);
      else this.stepUps.clear();
      if (stored?.refreshToken !== undefined && !stepUp && stored.issuer === found.metadata.issuer) {
        try {
          return await this.refresh(stored, found.metadata);
        } catch (e) {
          // An unusable refresh token: forget it and let the user authorize again. Anything
          // else (the server unreachable) would fail the new authorization the same way.
          if (!refreshUnusable(e)) throw e;
        }
      }
      await this.store.deleteTokens(this.server);
      return this.authorizeAnew(found, challenge, stepUp ? (stored?.requestedScope ?? stored?.scope) : undefined);
    });
  }

  /** RFC 9449 §9: the server wants its nonce in the proofs; the token stays what it was. */
  private async takeNonce(nonce: string): Promise<string> {
    this.dpopKey!.setNonce(new URL(this.options.serverUrl), nonce);
    const stored = await this.store.getTokens(this.server);
    if (stored === undefined) throw oauthError("INTERACTION_REQUIRED", `${this.server} asked for a DPoP nonce, and no token is held to send with it`);
    return stored.accessToken;
  }

  /** Forgets the tokens of this server (its client registration stays, keyed by issuer). */
  async logout(): Promise<void> {
    await this.store.deleteTokens(this.server);
  }

  /**
   * A server that answers 403 for the same scopes after each new token would have the user
   * authorize forever: after {@link MAX_STEP_UPS} step-ups for one scope set, it is an error.
   */
  private countStepUp(scope: string | undefined): void {
    const key = [...new Set(splitScope(scope))].sort().join(" ");
    const count = (this.stepUps.get(key) ?? 0) + 1;
    if (count > MAX_STEP_UPS) {
      throw oauthError("STEP_UP_LIMIT", `${this.server} still answers insufficient_scope for "${clipText(key)}" after ${MAX_STEP_UPS} new authorizations`, { scope: clipText(key) });
    }
    this.stepUps.set(key, count);
  }

  private once(run: () => Promise<string>): Promise<string> {
    if (this.inFlight) return this.inFlight;
    const flow = run().finally(() => {
      if (this.inFlight === flow) this.inFlight = undefined;
    });
    this.inFlight = flow;
    return flow;
  }

  private expiring(tokens: StoredTokens): boolean {
    if (tokens.expiresAt === undefined) return false;
    return tokens.expiresAt - (this.options.refreshMarginMs ?? 60_000) <= this.now();
  }

  private async refresh(stored: StoredTokens, metadata: AuthorizationServerMetadata): Promise<string> {
    // Tokens of another authorization server are never sent to this one.
    if (metadata.issuer !== stored.issuer) throw oauthError("ISSUER_MISMATCH", `stored tokens of ${this.server} come from another authorization server`);
    const client = await this.store.getClient(metadata.issuer);
    if (client === undefined) throw oauthError("REGISTRATION_FAILED", `no client is registered with ${clipText(metadata.issuer)} to refresh with`);
    const extra = stored.resource === undefined ? {} : { resource: stored.resource };
    const tokens = await refreshAccessToken(metadata, client, stored.refreshToken!, extra, this.tokenOptions(metadata));
    const kept: StoredTokens = { ...tokens, issuer: stored.issuer, ...extra };
    if (stored.requestedScope !== undefined) kept.requestedScope = stored.requestedScope;
    return this.keep(kept);
  }

  private async authorizeAnew(found: Discovered, challenge: AuthChallenge, heldScope: string | undefined): Promise<string> {
    const { metadata, resource } = found;
    const base = chooseScope({
      challengeScope: challenge.scope,
      resourceScopes: resource?.scopesSupported,
      serverScopes: metadata.scopesSupported,
      offlineAccess: this.options.offlineAccess,
    });
    const scope = heldScope === undefined ? base : [...new Set([...splitScope(heldScope), ...splitScope(base)])].join(" ") || undefined;
    const client = await this.client(metadata, scope);
    // RFC 8707 `resource` always goes, even to a 2025-03-26 server that has no metadata to
    // publish one: the specification says to send it whether or not the server supports it.
    const resourceUri = resource?.resource ?? canonicalServerUri(this.options.serverUrl);
    const extra = scope === undefined ? { resource: resourceUri } : { resource: resourceUri, scope };
    const grant = this.options.grant;
    const tokens = grant === "client_credentials"
      ? await requestClientCredentialsToken(metadata, client, extra, this.tokenOptions(metadata))
      : grant === "jwt_bearer"
        ? await requestJwtBearerToken(metadata, client, await this.assertion(metadata.issuer, resourceUri), extra, this.tokenOptions(metadata))
        : await this.authorizationCode(metadata, client, resourceUri, scope);
    const stored: StoredTokens = { ...tokens, issuer: metadata.issuer, resource: resourceUri };
    if (scope !== undefined) stored.requestedScope = scope;
    return this.keep(stored);
  }

  /** The user's part: the authorization URL through `authorize`, the redirect checked, the code redeemed. */
  private async authorizationCode(metadata: AuthorizationServerMetadata, client: ClientCredentials, resourceUri: string, scope: string | undefined): Promise<TokenSet> {
    const authorize = this.options.authorize;
    if (authorize === undefined) {
      throw oauthError("INTERACTION_REQUIRED", `${this.server} needs a user's authorization at ${clipText(metadata.issuer)}, and no authorize callback was given`, {
        issuer: clipText(metadata.issuer),
      });
    }
    const request = new AuthorizationRequest({ metadata, clientId: client.clientId, redirectUri: this.options.redirectUri, resource: resourceUri, scope });
    const grant = request.acceptRedirect(await authorize(request.url, { issuer: metadata.issuer, server: this.server }));
    return exchangeCode(metadata, client, grant, this.tokenOptions(metadata));
  }

  private async assertion(issuer: string, resource: string): Promise<string> {
    const source = this.options.assertion;
    if (source === undefined) throw oauthError("INTERACTION_REQUIRED", `${this.server}: the jwt_bearer grant needs an assertion, and none was configured`);
    return source({ issuer, resource });
  }

  private tokenOptions(metadata: AuthorizationServerMetadata): TokenRequestOptions {
    const options: TokenRequestOptions = { ...this.options.http, now: () => this.now() };
    // RFC 9449 §5.1: DPoP only with a server that says it takes ES256 proofs.
    if (this.options.dpop === true && metadata.dpopSigningAlgValuesSupported?.includes("ES256")) options.dpop = this.dpopKey ??= new DpopKey();
    return options;
  }

  /**
   * The headers of a request with `token`: a DPoP-bound token goes with the `DPoP` scheme and a
   * proof for this very request (its method, URL and the token's hash); any other as Bearer.
   */
  authorizationHeaders(token: string, method: string, url: URL): Record<string, string> {
    if (this.dpopKey === undefined || !this.dpopBound.has(token)) return { authorization: `Bearer ${token}` };
    return { authorization: `DPoP ${token}`, dpop: this.dpopKey.proof(method, url, token, this.now()) };
  }

  /** The stored client for this issuer, or a new registration (saved before it is used, unless configured). */
  private async client(metadata: AuthorizationServerMetadata, scope: string | undefined): Promise<ClientCredentials> {
    const known = await this.store.getClient(metadata.issuer);
    if (known !== undefined) return known;
    const registration: ClientRegistrationOptions = { ...this.options.registration, redirectUri: this.options.redirectUri };
    if (registration.scope === undefined && scope !== undefined) registration.scope = scope;
    const { client, via } = await registerClient(metadata, registration, this.options.http).catch((e: unknown) => {
      throw metadata.source === "defaults" ? noOAuthOffered(e) : e;
    });
    // Configured credentials come from the configuration every time; copying them (a private
    // key perhaps) into the store would only put them where they were not meant to be.
    if (via === "pre-registered") return client;
    if (client.clientSecret !== undefined) this.options.onSecret?.(client.clientSecret);
    await this.store.saveClient(client);
    return client;
  }

  /**
   * Protected resource metadata, then its first authorization server's metadata; without
   * protected resource metadata, the 2025-03-26 way. Kept for the refreshes before expiry;
   * `fresh` (on every 401/403) runs it again.
   */
  private async discover(challengeUrl: string | undefined, fresh: boolean): Promise<Discovered> {
    if (this.discovered !== undefined && !fresh) return this.discovered;
    const http = this.options.http;
    let found: Discovered;
    try {
      const { metadata: resource } = await discoverResourceMetadata(this.options.serverUrl, challengeUrl, http);
      const issuer = resource.authorizationServers?.[0];
      if (issuer === undefined) throw oauthError("METADATA_INVALID", `the protected resource metadata of ${this.server} names no authorization server`);
      found = { metadata: await discoverServerMetadata(issuer, http), resource };
    } catch (e) {
      if (!(e instanceof OAuthError) || e.reason !== "RESOURCE_METADATA_NOT_FOUND") throw e;
      found = { metadata: await legacyServerMetadata(this.options.serverUrl, http) };
    }
    if (found.metadata.source !== "defaults") requirePkceS256(found.metadata);
    this.discovered = found;
    return found;
  }

  private async keep(tokens: StoredTokens): Promise<string> {
    if (tokens.tokenType === "DPoP") this.dpopBound.add(tokens.accessToken);
    this.options.onSecret?.(tokens.accessToken);
    if (tokens.refreshToken !== undefined) this.options.onSecret?.(tokens.refreshToken);
    await this.store.saveTokens(this.server, tokens);
    return tokens.accessToken;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * A server that answered 401 but publishes no OAuth metadata at all, and whose 2025-03-26
 * default `/register` refuses too, most likely wants a token made elsewhere (a static bearer
 * token): the registration's own message would send the user looking in the wrong place.
 */
function noOAuthOffered(e: unknown): unknown {
  if (!(e instanceof OAuthError) || e.reason !== "REGISTRATION_FAILED" || (e.details?.status !== 404 && e.details?.status !== 405)) return e;
  const message =
    `the server asks for authorization but publishes no OAuth metadata (no protected resource metadata, no authorization server metadata) ` +
    `and its default registration endpoint answered HTTP ${String(e.details.status)}: it does not offer OAuth here. ` +
    `If you were given a token for it, pass it as a header, e.g. "Authorization: Bearer <token>"`;
  return oauthError("REGISTRATION_FAILED", message, { ...e.details, noOAuthMetadata: true }, e);
}

/** Whether a refresh failed because of the refresh token or client, not because of the network. */
function refreshUnusable(e: unknown): boolean {
  if (!(e instanceof OAuthError)) return false;
  return e.reason === "TOKEN_REQUEST_REJECTED" || e.reason === "TOKEN_RESPONSE_INVALID" || e.reason === "ISSUER_MISMATCH" || e.reason === "REGISTRATION_FAILED";
}

/** The MCP endpoint as an RFC 8707 resource: no query or fragment, no lone final `/`. */
function canonicalServerUri(serverUrl: string): string {
  const url = new URL(serverUrl);
  return url.pathname === "/" ? url.origin : `${url.origin}${url.pathname}`;
}
