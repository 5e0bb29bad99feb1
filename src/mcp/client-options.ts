/**
 * {@link McpClientOptions} with every default filled in. The client resolves its options once,
 * in its constructor, so each default is written in one place and every use reads a value;
 * and what follows from them (the declared capabilities, the versions accepted).
 */
import type { PeerOptions } from "../jsonrpc/peer-types.ts";
import type { ClientHandlers, McpClientOptions } from "./client-types.ts";
import type { PageLimits } from "./paging.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import type { ClientCapabilities, Implementation, InitializeResult, LoggingLevel } from "./types.ts";
import { isInitializeResult } from "./types.ts";
import { isModernVersion, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from "./versions.ts";

const DEFAULT_CLIENT_INFO: Implementation = { name: "mcp-bridge", version: "0.1.0" };
/** Long enough for a cold server process to answer, short enough that a silent legacy one costs little. */
const DEFAULT_DISCOVER_TIMEOUT_MS = 5_000;

/** See `McpClientOptions.listenReconnect`. */
export interface ListenReconnect {
  initialDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
}

export interface ResolvedClientOptions {
  clientInfo: Implementation;
  era: "auto" | "legacy" | "modern";
  /** The version offered in `initialize`. */
  protocolVersion: string;
  /** The stateless-era version requests declare first. */
  modernVersion: string;
  /** At most `connectTimeoutMs`. */
  discoverTimeoutMs: number;
  maxInputRounds: number;
  listenReconnect: ListenReconnect;
  logLevel: LoggingLevel | undefined;
  supportedVersions: readonly string[];
  connectTimeoutMs: number;
  /** Undefined: the peer's own default applies. */
  requestTimeoutMs: number | undefined;
  toolTimeoutMs: number;
  pageLimits: PageLimits;
  validateStructuredContent: boolean;
  handlers: ClientHandlers;
  /** The modes declared when an elicitation handler is set. */
  elicitationModes: { form: boolean; url: boolean };
  rootsListChanged: boolean;
  peerOptions: PeerOptions | undefined;
}

export function resolveClientOptions(o: McpClientOptions): ResolvedClientOptions {
  checkClientOptions(o);
  const modes = o.elicitationModes;
  const connectTimeoutMs = o.connectTimeoutMs ?? 30_000;
  const modern = isModernVersion(o.protocolVersion);
  return {
    clientInfo: o.clientInfo ?? DEFAULT_CLIENT_INFO,
    era: o.era ?? "auto",
    // A stateless-era version is what requests declare; initialize then offers our newest.
    protocolVersion: modern ? LATEST_PROTOCOL_VERSION : (o.protocolVersion ?? LATEST_PROTOCOL_VERSION),
    modernVersion: modern ? o.protocolVersion! : MODERN_PROTOCOL_VERSIONS[0],
    discoverTimeoutMs: Math.min(o.discoverTimeoutMs ?? DEFAULT_DISCOVER_TIMEOUT_MS, connectTimeoutMs),
    maxInputRounds: o.maxInputRounds ?? 8,
    listenReconnect: {
      initialDelayMs: o.listenReconnect?.initialDelayMs ?? 1000,
      maxDelayMs: o.listenReconnect?.maxDelayMs ?? 30_000,
      maxAttempts: o.listenReconnect?.maxAttempts ?? 5,
    },
    logLevel: o.logLevel,
    supportedVersions: o.supportedVersions ?? SUPPORTED_PROTOCOL_VERSIONS,
    connectTimeoutMs,
    requestTimeoutMs: o.requestTimeoutMs,
    toolTimeoutMs: o.toolTimeoutMs ?? 120_000,
    pageLimits: { maxPages: o.pageLimits?.maxPages ?? 100, maxItems: o.pageLimits?.maxItems ?? 10_000 },
    validateStructuredContent: o.validateStructuredContent !== false,
    handlers: o.handlers ?? {},
    // Given modes declare form unless it is turned off, and url only when it is turned on.
    elicitationModes: modes === undefined ? { form: true, url: true } : { form: modes.form !== false, url: modes.url === true },
    rootsListChanged: o.rootsListChanged === true,
    peerOptions: o.peerOptions,
  };
}

const ERAS: readonly unknown[] = ["auto", "legacy", "modern"];
const DURATIONS = ["connectTimeoutMs", "requestTimeoutMs", "toolTimeoutMs", "discoverTimeoutMs"] as const;

/** Refuses options a caller without type checks got wrong, at construction rather than at the first call. */
function checkClientOptions(o: McpClientOptions): void {
  if (o.era !== undefined && !ERAS.includes(o.era)) throw new TypeError(`McpClient: era must be "auto", "legacy" or "modern", got ${JSON.stringify(o.era)}`);
  for (const key of DURATIONS) {
    const v: unknown = o[key];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < 0)) {
      throw new TypeError(`McpClient: ${key} must be a finite number of milliseconds >= 0, got ${typeof v === "number" ? v : typeof v}`);
    }
  }
}

/** The capabilities a client declares: each handler it has (roots, sampling, elicitation modes). */
export function declaredCapabilities(o: ResolvedClientOptions): ClientCapabilities {
  const h = o.handlers;
  const caps: ClientCapabilities = {};
  if (h.roots) caps.roots = o.rootsListChanged ? { listChanged: true } : {};
  if (h.sampling) caps.sampling = {};
  if (h.elicitation) {
    caps.elicitation = {};
    if (o.elicitationModes.form) caps.elicitation.form = {};
    if (o.elicitationModes.url) caps.elicitation.url = {};
  }
  return caps;
}

/** `initialize`'s result, checked: its shape, and a version among `accepted`. */
export function checkInitializeResult(raw: unknown, accepted: readonly string[]): InitializeResult {
  if (!isInitializeResult(raw)) {
    throw new BridgeError("INVALID_RESULT", "initialize: the server's result lacks protocolVersion, capabilities or serverInfo");
  }
  if (!accepted.includes(raw.protocolVersion)) {
    throw new BridgeError(
      "UNSUPPORTED_VERSION",
      `initialize: server "${raw.serverInfo.name}" answered protocol version ${JSON.stringify(raw.protocolVersion)}, which this client does not speak (supported: ${accepted.join(", ")})`,
      { details: { received: raw.protocolVersion, supported: [...accepted] } },
    );
  }
  return raw;
}
