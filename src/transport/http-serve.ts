/**
 * What the Streamable HTTP and legacy HTTP+SSE servers share beyond request checks (those are
 * in http-guard.ts): running on a listener of their own, shutting it down, and starting the MCP
 * side of a new session.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { Transport } from "./transport.ts";

/** The `onSession` callback of both servers. */
export type OnSession = (transport: Transport, info: { sessionId: string | undefined }) => Promise<unknown> | unknown;

/** A node:http server that hands every request to `handler` (not yet listening). */
export function createHttpServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer(handler);
  // Longer than common client idle timeouts, so a reused keep-alive socket is rarely cut
  // under a client that is about to send on it.
  server.keepAliveTimeout = 65_000;
  return server;
}

/** Listens on `host:port` (0 = ephemeral) and returns the URL of `path` there, with the bound port. */
export async function listenAt(server: Server, port: number, host: string, path: string): Promise<{ url: URL; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return { url: new URL(`http://${hostPart}:${bound}${path}`), port: bound };
}

/** Stops listening and cuts every connection still open (idle keep-alive ones included). */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Why a new session cannot go on, as the HTTP answer the caller writes. */
export interface SessionRefusal {
  /** 503 when `onSession` refused with BridgeError `LIMIT_EXCEEDED` (a cap, worth retrying later), else 500. */
  status: 500 | 503;
  message: string;
}

/**
 * Runs `onSession` for a new session's transport. Returns why the session cannot go on (the
 * callback threw, did not connect the transport, or the transport closed meanwhile), or
 * undefined when it is ready. The caller closes the transport and answers with the refusal.
 */
export async function startSession(
  onSession: OnSession,
  transport: Transport & { readonly connected: boolean; readonly closed: boolean },
  sessionId: string | undefined,
): Promise<SessionRefusal | undefined> {
  try {
    await onSession(transport, { sessionId });
    if (!transport.connected) return { status: 500, message: "Internal error: onSession did not connect the transport" };
  } catch (err) {
    // A cap the application enforces (a gateway's session limit) is no internal error: the
    // client is told the limit's own words and may retry later.
    if (err instanceof BridgeError && err.code === "LIMIT_EXCEEDED") return { status: 503, message: `Service Unavailable: ${err.message}` };
    return { status: 500, message: `Internal error: could not start the session: ${errorMessage(err)}` };
  }
  return transport.closed ? { status: 500, message: "Internal error: the session closed at once" } : undefined;
}
