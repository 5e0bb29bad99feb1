/**
 * The OAuth 2.1 client for remote MCP servers: `OAuthProvider` for the HTTP transports, the
 * token stores, and the steps it is made of for hosts that run the flow themselves.
 */
export { OAuthProvider, type AuthorizeCallback, type OAuthProviderOptions } from "./oauth-provider.ts";
export { OAuthError, type OAuthFailure } from "./oauth-error.ts";
export { MemoryTokenStore, type StoredTokens, type TokenStore } from "./token-store.ts";
export { FileTokenStore } from "./file-token-store.ts";
export { discoverResourceMetadata, type DiscoveredResource, type ProtectedResourceMetadata } from "./resource-metadata.ts";
export { discoverServerMetadata, legacyServerMetadata, type AuthorizationServerMetadata } from "./server-metadata.ts";
export { registerClient, type ClientRegistrationOptions, type PreRegisteredClient, type RegisteredClientResult } from "./registration.ts";
export { AuthorizationRequest, type AuthorizationGrant, type AuthorizationRequestParams } from "./authorization-request.ts";
export {
  exchangeCode,
  refreshAccessToken,
  requestClientCredentialsToken,
  requestJwtBearerToken,
  JWT_BEARER_GRANT_TYPE,
  type ClientCredentials,
  type TokenEndpointAuthMethod,
  type TokenSet,
} from "./token-request.ts";
export { requestIdJag, ID_JAG_TOKEN_TYPE, type IdJagRequest } from "./token-exchange.ts";
export { startLoopbackRedirect, type LoopbackRedirect, type LoopbackRedirectOptions } from "./loopback-redirect.ts";
export { chooseScope, type ScopeSources } from "./scopes.ts";
export type { OAuthHttpOptions } from "./http-fetch.ts";
