/** The HTTP transports (`mcp-bridge/transport/http`): Streamable HTTP and legacy HTTP+SSE, both sides. */
export { StreamableHttpClientTransport, type StreamableHttpClientTransportOptions, type HttpClientOptions } from "./http-client.ts";
export { SseClientTransport, type SseClientTransportOptions, type SseClientOptions } from "./sse-client.ts";
export { AutoHttpClientTransport } from "./http-auto.ts";
export { AuthError, parseWwwAuthenticate, type AuthChallenge, type WwwAuthenticateChallenge } from "./auth-error.ts";
export { StreamableHttpServer, StreamableHttpSessionTransport, type StreamableHttpServerOptions } from "./http-server.ts";
export type { AccessTokenVerifier, AuthInfo, ProtectedResourceOptions, ScopedMessage } from "./http-protected.ts";
export type { HttpAuthProvider } from "./auth-provider.ts";
export { SseServer, SseSessionTransport, type SseServerOptions } from "./sse-server.ts";
