/**
 * The per-request metadata of the stateless era (2026-07-28): what every request carries in
 * `params._meta` instead of an `initialize` handshake, and what every result carries back.
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import { copyFields, isPlainObject } from "../util/object.ts";
import { LOGGING_LEVELS, type ClientCapabilities, type Implementation, type LoggingLevel } from "./types.ts";

/** `_meta` keys of the stateless era. */
export const EraMeta = {
  ProtocolVersion: "io.modelcontextprotocol/protocolVersion",
  ClientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  ClientInfo: "io.modelcontextprotocol/clientInfo",
  ServerInfo: "io.modelcontextprotocol/serverInfo",
  LogLevel: "io.modelcontextprotocol/logLevel",
  SubscriptionId: "io.modelcontextprotocol/subscriptionId",
} as const;

/** What one stateless request declared about itself. */
export interface StatelessRequestMeta {
  readonly protocolVersion: string;
  readonly clientCapabilities: ClientCapabilities;
  /** A SHOULD for clients: its absence is served, never refused. */
  readonly clientInfo: Implementation | undefined;
  /** Log threshold for this request; `undefined` means no `notifications/message` at all. */
  readonly logLevel: LoggingLevel | undefined;
}

/** How long, and for whom, a list or read result may be cached (`ttlMs`, `cacheScope`). */
export interface CacheHints {
  /** Milliseconds the result stays fresh; 0 means stale at once. */
  ttlMs: number;
  /** `"public"`: shareable across authorization contexts; `"private"`: only within one. */
  cacheScope: "public" | "private";
}

/** True when request params declare a protocol version in `_meta`: the stateless era's mark. */
export function declaresEra(params: unknown): boolean {
  const meta = isPlainObject(params) ? params._meta : undefined;
  return isPlainObject(meta) && meta[EraMeta.ProtocolVersion] !== undefined;
}

/**
 * Reads and checks the `_meta` of a stateless request. Throws RpcError -32602 when
 * `_meta`, its protocol version or its client capabilities are missing or malformed, and
 * -32022 (data `{supported, requested}`) for a version outside `supported`.
 */
export function readRequestMeta(params: unknown, method: string, supported: readonly string[]): StatelessRequestMeta {
  const meta = isPlainObject(params) ? params._meta : undefined;
  if (!isPlainObject(meta)) {
    throw new RpcError(ErrorCode.InvalidParams, `${method}: params._meta is required (protocol version and client capabilities)`);
  }
  const version = meta[EraMeta.ProtocolVersion];
  if (typeof version !== "string") {
    throw new RpcError(ErrorCode.InvalidParams, `${method}: _meta["${EraMeta.ProtocolVersion}"] must be a string`);
  }
  const caps = meta[EraMeta.ClientCapabilities];
  if (!isPlainObject(caps)) {
    throw new RpcError(ErrorCode.InvalidParams, `${method}: _meta["${EraMeta.ClientCapabilities}"] must be an object`);
  }
  const info = meta[EraMeta.ClientInfo];
  if (info !== undefined && !isPlainObject(info)) {
    throw new RpcError(ErrorCode.InvalidParams, `${method}: _meta["${EraMeta.ClientInfo}"] must be an object when present`);
  }
  const level = meta[EraMeta.LogLevel];
  if (level !== undefined && !(LOGGING_LEVELS as readonly unknown[]).includes(level)) {
    throw new RpcError(ErrorCode.InvalidParams, `${method}: _meta["${EraMeta.LogLevel}"] must be one of ${LOGGING_LEVELS.join(", ")}`);
  }
  if (!supported.includes(version)) {
    throw new RpcError(ErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version ${JSON.stringify(version)} (supported: ${supported.join(", ")})`, {
      supported: [...supported],
      requested: version,
    });
  }
  return {
    protocolVersion: version,
    clientCapabilities: caps as ClientCapabilities,
    clientInfo: info as Implementation | undefined,
    logLevel: level as LoggingLevel | undefined,
  };
}

/**
 * A result as the stateless era sends it: `resultType` (kept when the handler set one) and
 * the server's identity in `_meta`, beside whatever `_meta` the handler returned.
 */
export function eraResult(result: unknown, serverInfo: Implementation, cache?: CacheHints): Record<string, unknown> {
  const body = isPlainObject(result) ? result : {};
  // Copied by copyFields, not spread, and then extended: this runs once per stateless request.
  const out: Record<string, unknown> = copyFields({}, body);
  out.resultType = body.resultType ?? "complete";
  const meta: Record<string, unknown> = isPlainObject(body._meta) ? copyFields({}, body._meta) : {};
  meta[EraMeta.ServerInfo] = serverInfo;
  out._meta = meta;
  if (cache !== undefined) {
    out.ttlMs = cache.ttlMs;
    out.cacheScope = cache.cacheScope;
  }
  return out;
}

/** The error for a request that needs a client capability it did not declare (-32021). */
export function missingCapability(method: string, capability: string): RpcError {
  return new RpcError(ErrorCode.MissingRequiredClientCapability, `${method}: the request did not declare the "${capability}" client capability`, {
    requiredCapabilities: { [capability]: {} },
  });
}
