/**
 * The `server/discover` probe with which McpClient finds the stateless era (MCP 2026-07-28)
 * under `era: "auto"` and checks it under `"modern"` (docs/decisions.md 129). Apart from the
 * stateless client (client-stateless.ts, with the listen stream and the SEP-2243 headers),
 * which loads only once a server turned out to speak that era: a client of a handshake-era
 * server, still most of them, never loads it (docs/decisions.md 156).
 *
 * A server is of the handshake era when the probe gets any error that is not one of the
 * stateless era's own refusals, or no answer within `discoverTimeoutMs`. A -32022 naming a
 * stateless version we speak is retried once with that version.
 */
import { BridgeError, ErrorCode, errorMessage, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcPeer } from "../jsonrpc/peer.ts";
import type { MessageHeaders, Transport } from "../jsonrpc/transport.ts";
import { isPlainObject } from "../util/object.ts";
import type { ResolvedClientOptions } from "./client-options.ts";
import { EraMeta } from "./era-meta.ts";
import type { ClientCapabilities, Implementation, InitializeResult, LoggingLevel, ServerCapabilities } from "./types.ts";
import { McpMethod } from "./types.ts";
import { isSupportedVersion, MODERN_PROTOCOL_VERSIONS } from "./versions.ts";

/** Codes by which a server shows it is of the stateless era even while refusing a request. */
const MODERN_REFUSALS: ReadonlySet<number> = new Set([
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
]);

/** A server found to speak the stateless era: what it declared, and the version both speak. */
export interface Discovered {
  init: InitializeResult;
  version: string;
}

/** The `_meta` every request of the era carries. */
export function eraMeta(version: string, capabilities: ClientCapabilities, clientInfo: Implementation, level: LoggingLevel | undefined): Record<string, unknown> {
  const meta: Record<string, unknown> = {
    [EraMeta.ProtocolVersion]: version,
    [EraMeta.ClientCapabilities]: capabilities,
    [EraMeta.ClientInfo]: clientInfo,
  };
  if (level !== undefined) meta[EraMeta.LogLevel] = level;
  return meta;
}

/** The SEP-2243 headers that depend on nothing but the version and the method. */
export function eraHeaders(version: string, method: string): Record<string, string> {
  return { "mcp-protocol-version": version, "mcp-method": method };
}

/**
 * Probes `peer` with `server/discover` (limit `discoverTimeoutMs`, or the connect limit under
 * `era: "modern"`, which has nothing to fall back to). Resolves with the server's declaration,
 * or `legacy` with the error that said so, if one did (the transport's era headers are then
 * taken back). Throws what says nothing about the era (a closed connection, an auth failure,
 * a cancel), a stateless refusal, `UNSUPPORTED_VERSION` when no version is in common (and
 * under `era: "modern"` for a handshake-era server) and `INVALID_RESULT`.
 */
export async function discoverEra(
  peer: JsonRpcPeer,
  transport: Transport,
  o: ResolvedClientOptions,
  capabilities: ClientCapabilities,
  signal: AbortSignal | undefined,
): Promise<Discovered | { legacy: Error | undefined }> {
  let version = o.modernVersion;
  const headers: MessageHeaders = ({ method }) => eraHeaders(version, method);
  transport.setMessageHeaders?.(headers);
  const timeoutMs = o.era === "modern" ? o.connectTimeoutMs : o.discoverTimeoutMs;
  let failure: Error | undefined;
  let raw: unknown;
  for (let attempt = 0; ; attempt++) {
    try {
      raw = await peer.request(McpMethod.ServerDiscover, { _meta: eraMeta(version, capabilities, o.clientInfo, o.logLevel) }, { timeoutMs, signal });
      break;
    } catch (err) {
      if (signal?.aborted || !(err instanceof Error) || isFatal(err)) throw err;
      failure = err;
      if (!(err instanceof RpcError)) break;
      if (err.code === ErrorCode.UnsupportedProtocolVersion) {
        const next = pickVersion(err.data);
        if (next !== undefined && attempt === 0) {
          version = next;
          continue;
        }
        // Handshake-era versions listed, or none at all (a dual-era server speaking no
        // stateless version): initialize will tell.
        if (listsHandshakeVersion(err.data) || supportedOf(err.data).length === 0) break;
        throw new BridgeError("UNSUPPORTED_VERSION", `server/discover: the server speaks none of our versions (${err.message})`, { cause: err, details: { supported: supportedOf(err.data) } });
      }
      if (MODERN_REFUSALS.has(err.code)) throw err;
      break;
    }
  }
  // An answer that is no discover result is an error of its own, not a sign of the era.
  const found = raw === undefined ? undefined : discovered(raw, version);
  if (found !== undefined) return found;
  transport.setMessageHeaders?.(undefined);
  if (o.era === "modern") {
    const why = failure === undefined ? "" : ` (server/discover: ${errorMessage(failure)})`;
    throw new BridgeError("UNSUPPORTED_VERSION", `connect: the server does not speak the stateless era (2026-07-28), and era "modern" was asked for${why}`, { cause: failure });
  }
  return { legacy: failure };
}

/** The declaration in a discover result, or undefined when it lists only handshake-era versions. */
function discovered(raw: unknown, offered: string): Discovered | undefined {
  if (!isPlainObject(raw) || !Array.isArray(raw.supportedVersions) || !isPlainObject(raw.capabilities)) {
    throw new BridgeError("INVALID_RESULT", "server/discover: the result lacks supportedVersions or capabilities");
  }
  const listed: unknown[] = raw.supportedVersions;
  const ours: string[] = MODERN_PROTOCOL_VERSIONS.filter((v) => listed.includes(v));
  if (ours.length === 0) {
    if (listsHandshakeVersion({ supported: raw.supportedVersions })) return undefined;
    throw new BridgeError("UNSUPPORTED_VERSION", `server/discover: the server speaks ${JSON.stringify(raw.supportedVersions)}, none of which this client speaks`, {
      details: { supported: raw.supportedVersions },
    });
  }
  const version = ours.includes(offered) ? offered : ours[0]!;
  const meta = isPlainObject(raw._meta) ? raw._meta : {};
  const info = meta[EraMeta.ServerInfo] ?? raw.serverInfo;
  const serverInfo = isPlainObject(info) && typeof info.name === "string" ? (info as unknown as Implementation) : { name: "unknown", version: "unknown" };
  const init: InitializeResult = { protocolVersion: version, capabilities: raw.capabilities as ServerCapabilities, serverInfo };
  if (typeof raw.instructions === "string") init.instructions = raw.instructions;
  return { init, version };
}

/** Failures that say nothing about the era: they end the connect as they are. */
function isFatal(err: Error): boolean {
  // AUTH_FAILED: AuthError and OAuthError; authorization never triggers a fallback.
  return err instanceof BridgeError && ["CLOSED", "PROCESS_EXITED", "SPAWN_FAILED", "CANCELLED", "AUTH_FAILED"].includes(err.code);
}

function supportedOf(data: unknown): unknown[] {
  const listed = isPlainObject(data) ? data.supported : undefined;
  return Array.isArray(listed) ? listed : [];
}

/** Our newest stateless-era version among those a -32022 lists. */
export function pickVersion(data: unknown): string | undefined {
  const listed = supportedOf(data);
  return MODERN_PROTOCOL_VERSIONS.find((v) => listed.includes(v));
}

function listsHandshakeVersion(data: unknown): boolean {
  return supportedOf(data).some(isSupportedVersion);
}
