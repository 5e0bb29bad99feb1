/**
 * Bearer tokens for the HTTP client transports, from the {@link HttpAuthProvider} given as
 * their `auth` option (docs/decisions.md 120):
 *
 * - every request (POST, GET stream, resumption GET, DELETE, the legacy SSE GET and POSTs)
 *   carries `Authorization: Bearer <token>` when the provider has one, or the headers the
 *   provider signs for that request (`authorizationHeaders`, DPoP);
 * - a request answered 401 or 403 is sent once more after the provider handled the challenge
 *   (`handleUnauthorized`); only a 403 `insufficient_scope` (a step-up to more scopes) may
 *   follow, within 3 challenges per request in all. Any other refusal fails the request with
 *   its `AuthError`, and a provider that cannot help rejects with its own error, which the
 *   request fails with. A DPoP `use_dpop_nonce` challenge is one retry more, with the nonce;
 * - one challenge is handled at a time per provider, whichever transports share it: requests
 *   refused together wait for that one refresh or authorization (a refresh race revokes the
 *   whole token family at some authorization servers), and a request refused with a token
 *   already replaced is only sent again with the new one.
 *
 * Tokens live here and in the provider, never in a message: `AuthError` and the provider's
 * errors name the endpoint and the challenge, not the token.
 */
import type * as http from "node:http";
import { AuthError } from "./auth-error.ts";
import type { HttpAuthProvider } from "./auth-provider.ts";

/** What the transports sharing one provider know together. */
interface ProviderState {
  /** The token requests go out with now (the last one the provider handed out). */
  current: string | undefined;
  /** The challenge being handled; shared by every request it refused. */
  recovering: { promise: Promise<void> } | undefined;
  /** Connects under way through transports of this provider (see {@link BearerAuth.connecting}). */
  connects: number;
  /** While a connect is under way: the challenges handled for all of its requests. */
  connectBudget: AuthBudget | undefined;
}

/** Challenges handled so far, against {@link MAX_AUTHORIZATIONS}. */
interface AuthBudget {
  handled: number;
}

const states = new WeakMap<HttpAuthProvider, ProviderState>();

/**
 * Challenges one request may have handled, the first authorization included: a server that
 * answers `insufficient_scope` to every new token stops costing the user a consent after the
 * third (the specification asks for a bound; its conformance suite allows 3).
 */
const MAX_AUTHORIZATIONS = 3;

/** One transport's view of its provider: headers to send and the retry after a 401/403. */
export class BearerAuth {
  private readonly provider: HttpAuthProvider;
  private readonly state: ProviderState;

  constructor(provider: HttpAuthProvider) {
    this.provider = provider;
    let state = states.get(provider);
    if (state === undefined) {
      state = { current: undefined, recovering: undefined, connects: 0, connectBudget: undefined };
      states.set(provider, state);
    }
    this.state = state;
  }

  /** The token the next request carries (compare it after a 401 with {@link recover}). */
  get current(): string | undefined {
    return this.state.current;
  }

  /**
   * The MCP layer's connect starts (`true`) or ends (`false`). Meanwhile every request of
   * every transport of this provider draws on one budget of {@link MAX_AUTHORIZATIONS}
   * challenges: a connect that probes with `server/discover` and then sends `initialize`
   * costs the user no more consents than one request may (docs/decisions.md 144).
   * Overlapping connects share it; it goes when the last one ends.
   */
  connecting(on: boolean): void {
    const s = this.state;
    if (on && s.connects++ === 0) s.connectBudget = { handled: 0 };
    if (!on && s.connects > 0 && --s.connects === 0) s.connectBudget = undefined;
  }

  /** Asks the provider for the token to send now (it may refresh one near its expiry first). */
  async prepare(): Promise<void> {
    if (this.state.recovering) await this.state.recovering.promise;
    this.state.current = await this.provider.accessToken();
  }

  /**
   * `headers` with the token added for a `method` request to `url`, when there is one (a new
   * object; `headers` is kept): `Authorization: Bearer`, or what the provider signs (DPoP).
   */
  apply(headers: http.OutgoingHttpHeaders, method: string, url: URL): http.OutgoingHttpHeaders {
    const token = this.state.current;
    if (token === undefined) return headers;
    const signed = this.provider.authorizationHeaders?.(token, method, url);
    return signed === undefined ? { ...headers, authorization: `Bearer ${token}` } : { ...headers, ...signed };
  }

  /**
   * After `refused` (a 401/403 to a request sent with `sentWith`): resolves once a request may
   * be sent again with {@link current}, or rejects with the provider's error.
   */
  async recover(refused: AuthError, sentWith: string | undefined): Promise<void> {
    const s = this.state;
    if (s.recovering === undefined && s.current !== sentWith) return; // already replaced
    if (s.recovering === undefined) {
      const extra = refused.dpopNonce === undefined ? undefined : { dpopNonce: refused.dpopNonce };
      const promise = this.provider.handleUnauthorized(refused.status, refused.wwwAuthenticate, extra).then((token) => {
        s.current = token;
      });
      const entry = { promise };
      s.recovering = entry;
      void promise.then(
        () => (s.recovering === entry ? (s.recovering = undefined) : undefined),
        () => (s.recovering === entry ? (s.recovering = undefined) : undefined),
      );
    }
    await s.recovering.promise;
  }

  /**
   * Runs `attempt` (which must build its request synchronously, before its first `await`),
   * again after each 401/403 the provider could handle, within {@link MAX_AUTHORIZATIONS}:
   * a 401 or a plain 403 is retried only as the request's first refusal, a 403
   * `insufficient_scope` (a step-up) while the budget lasts: the request's own, or during a
   * connect the connect's ({@link connecting}). Past that the refusal's `AuthError` is the
   * request's error.
   */
  async run<T>(attempt: () => Promise<T>): Promise<T> {
    await this.prepare();
    const budget = this.state.connectBudget ?? { handled: 0 };
    let handledHere = 0;
    let nonceTaken = false;
    for (;;) {
      const sentWith = this.state.current;
      try {
        return await attempt();
      } catch (e) {
        if (!(e instanceof AuthError)) throw e;
        // A DPoP nonce asked for (RFC 9449 §9) is no refusal of the token: one retry with it.
        const nonce = e.challenge.error === "use_dpop_nonce" && e.dpopNonce !== undefined && !nonceTaken;
        const stepUp = e.status === 403 && e.challenge.error === "insufficient_scope";
        if (nonce) nonceTaken = true;
        else if (budget.handled >= MAX_AUTHORIZATIONS || (!stepUp && handledHere > 0)) throw e;
        else {
          budget.handled++;
          handledHere++;
        }
        await this.recover(e, sentWith);
      }
    }
  }
}

/** The transport's {@link BearerAuth}, or undefined without an `auth` option. */
export function bearerAuth(provider: HttpAuthProvider | undefined): BearerAuth | undefined {
  return provider === undefined ? undefined : new BearerAuth(provider);
}
