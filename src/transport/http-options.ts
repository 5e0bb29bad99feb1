/**
 * Option helpers for the HTTP client transports: URL and header validation done once at
 * construction, the keep-alive agent, and whether a POST may be repeated.
 */
import * as http from "node:http";
import * as https from "node:https";
import { BridgeError } from "../jsonrpc/errors.ts";
import { DEFAULT_MAX_LINE_BYTES } from "../jsonrpc/ndjson.ts";
import type { StreamableHttpClientTransportOptions } from "./http-client.ts";
import { bearerAuth, type BearerAuth } from "./http-auth.ts";
import { displayUrl } from "./http-request.ts";

/** Whether a message (or batch) holds a request, whose POST must not be sent twice. */
export function carriesRequest(message: unknown): boolean {
  const items = Array.isArray(message) ? message : [message];
  return items.some((m) => typeof m === "object" && m !== null && "method" in m && "id" in m);
}

/** A keep-alive agent for a URL's scheme. */
export function keepAliveAgent(url: URL): http.Agent {
  return url.protocol === "https:" ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
}

/** Checks a URL is http(s) and returns it parsed. */
export function httpUrl(url: string | URL, what: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BridgeError("INVALID_MESSAGE", `${what}: not a valid URL`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new BridgeError("INVALID_MESSAGE", `${what}: only http: and https: URLs are supported, got ${parsed.protocol}`);
  }
  return parsed;
}

/**
 * Validates and lower-cases configured headers once, so a bad one fails at construction and
 * never at the first request. The message names the header, never its value.
 */
export function normalizeHeaders(headers: Record<string, string> | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch {
      throw new BridgeError("INVALID_MESSAGE", `${what}: header "${name.replace(/[^\x21-\x7e]/g, "?")}" has an invalid name or value`);
    }
    out[name.toLowerCase()] = value;
  }
  return out;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** What both HTTP client transports resolve from their options at construction. */
export interface HttpClientBasics {
  readonly url: URL;
  /** The URL as shown in messages and logs (no credentials). */
  readonly target: string;
  /** The configured headers, checked and with lower-case names. */
  readonly configured: Record<string, string>;
  readonly timeoutMs: number;
  readonly maxBody: number;
  /** `onLog`, each line prefixed with the target; a no-op without it. */
  readonly log: (msg: string) => void;
  readonly agent: http.Agent;
  /** True when the agent was made here, so the transport destroys it on close. */
  readonly ownAgent: boolean;
  /** The bearer tokens of the `auth` option, if given. */
  readonly auth: BearerAuth | undefined;
}

/**
 * Checks the URL and headers (throwing as a constructor should) and fills the defaults.
 * `label` names the transport in those errors, e.g. `"SSE transport"`.
 */
export function clientBasics(options: StreamableHttpClientTransportOptions, label: string): HttpClientBasics {
  const url = httpUrl(options.url, label);
  const target = displayUrl(url);
  const configured = normalizeHeaders(options.headers, `${label} for ${target}`);
  const onLog = options.onLog;
  return {
    url,
    target,
    configured,
    timeoutMs: options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBody: options.maxBodyBytes ?? DEFAULT_MAX_LINE_BYTES,
    log: onLog ? (m) => onLog(`${target}: ${m}`) : () => undefined,
    agent: options.agent ?? keepAliveAgent(url),
    ownAgent: options.agent === undefined,
    auth: bearerAuth(options.auth),
  };
}
