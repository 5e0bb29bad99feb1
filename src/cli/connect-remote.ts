/**
 * The CLI's remote transports (Streamable HTTP, legacy HTTP+SSE, auto), loaded only for a
 * `--url` target: their modules import `node:http` and `node:https`, and an ES module import
 * of either makes Node 24 load its bundled undici too (the ESM facade reads the lazy
 * `WebSocket` exports), start-up a stdio target would pay for nothing (docs/decisions.md 77).
 */
import type { McpServerConfig } from "../config/types.ts";
import { AutoHttpClientTransport } from "../transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../transport/http-client.ts";
import { SseClientTransport } from "../transport/sse-client.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import type { Transport } from "../transport/transport.ts";

/** The transport for a remote config (`transport` is "http", "sse" or "auto"). */
export function remoteTransport(config: McpServerConfig, auth?: HttpAuthProvider): Transport {
  const http = { url: config.url ?? "", headers: config.headers ?? {}, auth };
  if (config.transport === "http") return new StreamableHttpClientTransport(http);
  if (config.transport === "sse") return new SseClientTransport(http);
  return new AutoHttpClientTransport(http);
}

/** Which protocol a connected remote transport speaks: `http`, `sse` or `auto: <chosen>`. */
export function remoteProtocol(transport: Transport): string {
  if (transport instanceof AutoHttpClientTransport) return `auto: ${transport.selected}`;
  return transport instanceof SseClientTransport ? "sse" : "http";
}
