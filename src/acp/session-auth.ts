/**
 * OAuth for the HTTP servers of ACP sessions: one `OAuthProvider` per server of a session, whose
 * user step is the agent's own (it shows the authorization URL in its UI and resolves with the
 * redirect), and one token store for every session of the connection, so a server authorized in
 * one session is not authorized again in the next.
 */
import type { ResolvedServerConfig } from "../config/types.ts";
import { OAuthProvider, type OAuthProviderOptions } from "../auth/oauth-provider.ts";
import { MemoryTokenStore, type TokenStore } from "../auth/token-store.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";

/** What the agent brings for authorization (`AcpMcpSessionsOptions.auth`). */
export interface AcpSessionAuth {
  /**
   * Shows the user `url` and resolves with the redirect that came back to `redirectUri` (the
   * URL or its query). Rejecting fails that server's connection with the rejection.
   */
  authorize(url: string, info: { sessionId: string; server: string; issuer: string }): Promise<string | URL | URLSearchParams>;
  /** Where the authorization server sends the user back (registered with it too). */
  redirectUri: string;
  /** Default: one in-memory store shared by every session of these options. */
  store?: TokenStore;
  /** Configured client credentials, a client metadata document URL, DCR fields. */
  registration?: OAuthProviderOptions["registration"];
}

const sharedStores = new WeakMap<AcpSessionAuth, TokenStore>();

/**
 * The manager's `auth` option for one session: an `OAuthProvider` for each HTTP server, its
 * `authorize` step told which session and server asks.
 */
export function sessionAuth(auth: AcpSessionAuth, sessionId: string): (server: ResolvedServerConfig) => HttpAuthProvider | undefined {
  let store = auth.store ?? sharedStores.get(auth);
  if (store === undefined) {
    store = new MemoryTokenStore();
    sharedStores.set(auth, store);
  }
  const shared = store;
  return (server) => {
    if (server.url === undefined) return undefined;
    const options: OAuthProviderOptions = {
      serverUrl: server.url,
      redirectUri: auth.redirectUri,
      store: shared,
      authorize: (url, info) => auth.authorize(url, { sessionId, server: server.name, issuer: info.issuer }),
    };
    if (auth.registration !== undefined) options.registration = auth.registration;
    return new OAuthProvider(options);
  };
}

/** A session's manager `auth`: the configured one first, then the agent's OAuth, if either is given. */
export function authFor(
  sessionId: string,
  configured: ((server: ResolvedServerConfig) => HttpAuthProvider | undefined) | undefined,
  agent: AcpSessionAuth | undefined,
): ((server: ResolvedServerConfig) => HttpAuthProvider | undefined) | undefined {
  if (agent === undefined) return configured;
  const oauth = sessionAuth(agent, sessionId);
  return (server) => configured?.(server) ?? oauth(server);
}
