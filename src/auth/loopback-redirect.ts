/**
 * The redirect URI of a native client (RFC 8252 §7.3): a one-shot HTTP listener on 127.0.0.1
 * at a port the system picks. It takes the first request to its callback path, answers a
 * page that echoes nothing back, and closes; anything else gets a 404 and does not count.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { oauthError } from "./oauth-error.ts";

/** A listening redirect URI. */
export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port><path>`, to register and to send as `redirect_uri`. */
  readonly redirectUri: string;
  /** Resolves with the redirect (its full URL) once it arrives; rejects at the time limit. */
  readonly redirect: Promise<URL>;
  /** Stops listening (also done after the redirect and at the time limit). */
  close(): Promise<void>;
}

export interface LoopbackRedirectOptions {
  /** The callback path. Default `/callback`. */
  path?: string;
  /** How long to wait for the user, in ms. Default 5 minutes. */
  timeoutMs?: number;
}

const PAGE = "<!doctype html><meta charset=utf-8><title>mcp-bridge</title><p>Authorization received. You can close this window.</p>\n";

/** Starts listening; the redirect URI is known once this resolves. */
export async function startLoopbackRedirect(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const path = options.path ?? "/callback";
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  let settle: { resolve: (u: URL) => void; reject: (e: unknown) => void } | undefined;
  const redirect = new Promise<URL>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Nobody may be waiting yet when the time runs out; the rejection is still the caller's to see.
  redirect.catch(() => {});
  let origin = "";
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin);
    if (req.method !== "GET" || url.pathname !== path || settle === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const done = settle;
    settle = undefined;
    // The page says nothing of what came in: the query holds the code.
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", connection: "close" }).end(PAGE);
    done.resolve(url);
    void stop();
  });
  const timer = setTimeout(() => {
    settle?.reject(oauthError("INTERACTION_REQUIRED", `no authorization redirect arrived within ${timeoutMs} ms`, { timeoutMs }));
    settle = undefined;
    void stop();
  }, timeoutMs);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => {
      clearTimeout(timer);
      settle?.reject(oauthError("INTERACTION_REQUIRED", "the redirect listener was closed before a redirect arrived"));
      settle = undefined;
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    return stopped;
  };
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { redirectUri: `${origin}${path}`, redirect, close: stop };
}
