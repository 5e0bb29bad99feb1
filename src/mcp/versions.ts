/**
 * Protocol versions of the handshake era and what each one allows.
 *
 * Versions are `YYYY-MM-DD` strings, so for well-formed versions string order is date order.
 * Every gate checks the format first: `"abc" > "2025"` is true as strings.
 */

/** The versions of the handshake era (`initialize`) this library speaks, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

/** The version a client offers and a server falls back to. */
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

/**
 * Versions of the stateless era (no `initialize`, per-request `_meta`) this library speaks,
 * newest first. A request carrying one of them is served without a session.
 */
export const MODERN_PROTOCOL_VERSIONS = ["2026-07-28"] as const;

/** The first version of the stateless era: any well-formed version from it on is modern. */
const FIRST_MODERN_VERSION = "2026-07-28";

const VERSION_FORMAT = /^\d{4}-\d{2}-\d{2}$/;

/** True for a version this library speaks. */
export function isSupportedVersion(v: unknown): v is ProtocolVersion {
  return typeof v === "string" && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/**
 * Server side of the handshake: echo the requested version when we speak it, else answer
 * the newest version we speak (the client then decides whether to disconnect). Never echoes
 * a version outside `supported`.
 *
 * ```ts
 * negotiateVersion("2025-03-26") // "2025-03-26"
 * negotiateVersion("1999-01-01") // "2025-11-25"
 * ```
 *
 * @param supported versions the server is willing to speak (default: all we support); must
 *   not be empty.
 */
export function negotiateVersion(
  requested: unknown,
  supported: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS,
): string {
  if (supported.length === 0) throw new RangeError("negotiateVersion: no supported versions given");
  if (typeof requested === "string" && supported.includes(requested)) return requested;
  return newest(supported);
}

function newest(versions: readonly string[]): string {
  let best = versions[0];
  for (const v of versions) if (v > best) best = v;
  return best;
}

/**
 * True when `v` is a well-formed version at or after `min`. Unknown newer dates count as
 * newer, so a gate stays open for them; `undefined` (not negotiated yet) is false.
 */
export function versionAtLeast(v: string | undefined, min: string): boolean {
  return v !== undefined && VERSION_FORMAT.test(v) && v >= min;
}

/**
 * True for a version of the stateless era, known or not (a newer date counts): such a request
 * must be answered statelessly, with -32022 when we do not speak it.
 */
export function isModernVersion(v: unknown): v is string {
  return typeof v === "string" && versionAtLeast(v, FIRST_MODERN_VERSION);
}

/** JSON-RPC batches (arrays) are allowed only when `2025-03-26` was negotiated. */
export function allowsBatches(v: string | undefined): boolean {
  return v === "2025-03-26";
}

/** Streamable HTTP replaced HTTP+SSE in 2025-03-26. */
export function hasStreamableHttp(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-03-26");
}

/** `audio` content blocks (2025-03-26). */
export function hasAudio(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-03-26");
}

/** Tool `annotations` (2025-03-26). */
export function hasToolAnnotations(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-03-26");
}

/** The `completions` server capability (2025-03-26). */
export function hasCompletionsCapability(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-03-26");
}

/** `structuredContent` results and tool `outputSchema` (2025-06-18). */
export function hasStructuredContent(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-06-18");
}

/** `resource_link` content blocks (2025-06-18). */
export function hasResourceLinks(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-06-18");
}

/** Form elicitation, `elicitation/create` (2025-06-18). */
export function hasElicitation(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-06-18");
}

/** The `MCP-Protocol-Version` header on HTTP requests after initialize (2025-06-18). */
export function hasProtocolVersionHeader(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-06-18");
}

/** URL-mode elicitation and the -32042 error (2025-11-25). */
export function hasUrlElicitation(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-11-25");
}

/** Tool use inside `sampling/createMessage` (2025-11-25). */
export function hasSamplingTools(v: string | undefined): boolean {
  return versionAtLeast(v, "2025-11-25");
}
