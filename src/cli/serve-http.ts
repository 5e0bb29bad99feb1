/**
 * The HTTP side of `mcp-bridge serve`: Streamable HTTP at `/mcp` and, with `--sse`, the legacy
 * HTTP+SSE endpoint (`GET /sse`, `POST /messages`) on the same listener. Both run the same
 * guard (Host and Origin allow-lists, bearer tokens, body limits: transport/http-guard.ts)
 * and hand each new session to the same `onSession`.
 */
import type { HttpGuardOptions } from "../transport/http-guard.ts";
import { closeHttpServer, createHttpServer, listenAt, type OnSession } from "../transport/http-serve.ts";
import { StreamableHttpServer } from "../transport/http-server.ts";
import { SseServer } from "../transport/sse-server.ts";

export interface ServeHttpOptions {
  host: string;
  port: number;
  /** Also serve the legacy HTTP+SSE endpoint. */
  sse: boolean;
  guard: HttpGuardOptions;
  /** The gateway's own cap, enforced by `onSession`; see {@link listenHttp}. */
  maxSessions: number;
  sessionIdleMs?: number;
  onSession: OnSession;
}

export interface ServingHttp {
  /** The Streamable HTTP endpoint. */
  url: URL;
  /** The legacy SSE stream, with `--sse`. */
  sseUrl?: URL;
  close(): Promise<void>;
}

export const SSE_PATH = "/sse";
export const MESSAGES_PATH = "/messages";

/** Listens on `host:port` and serves until `close()`, which ends every session first. */
export async function listenHttp(options: ServeHttpOptions): Promise<ServingHttp> {
  // The gateway refuses a session beyond its cap with a 503 naming it (onSession throws
  // LIMIT_EXCEEDED). The transports' own limits sit above it, so that a full gateway answers
  // with its cap rather than the Streamable HTTP server closing an idle client's session to
  // make room (its policy at its own limit): twice the cap leaves room for as many sessions
  // being refused at once as are open.
  const transportCap = options.maxSessions * 2;
  const streamable = new StreamableHttpServer({ ...options.guard, onSession: options.onSession, maxSessions: transportCap, sessionIdleMs: options.sessionIdleMs });
  const legacy = options.sse ? new SseServer({ ...options.guard, onSession: options.onSession, maxSessions: transportCap, ssePath: SSE_PATH, messagesPath: MESSAGES_PATH }) : undefined;
  const server = createHttpServer((req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0];
    if (legacy !== undefined && (path === SSE_PATH || path === MESSAGES_PATH)) void legacy.handle(req, res);
    else void streamable.handle(req, res);
  });
  const { url } = await listenAt(server, options.port, options.host, "/mcp");
  return {
    url,
    sseUrl: legacy === undefined ? undefined : new URL(SSE_PATH, url),
    close: async () => {
      await Promise.all([streamable.close(), legacy?.close()]);
      await closeHttpServer(server);
    },
  };
}
