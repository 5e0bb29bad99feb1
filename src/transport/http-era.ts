/**
 * Which era a Streamable HTTP POST speaks, and the header checks of the stateless era
 * (2026-07-28, SEP-2243): `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` mirror the
 * body, and a mismatch is refused (400 -32020) before any handler runs. Its JSON errors are
 * 404 (-32601) or 400 (bad params or `_meta`, -32021, -32022); GET and DELETE at its version
 * are 405 (docs/decisions.md 106).
 */
import type { IncomingMessage } from "node:http";
import { ErrorCode } from "../jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../jsonrpc/message.ts";
import { declaresEra, EraMeta } from "../mcp/era-meta.ts";
import { decodeHeaderValue } from "../mcp/param-headers.ts";
import { McpMethod } from "../mcp/types.ts";
import { MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from "../mcp/versions.ts";
import { isPlainObject } from "../util/object.ts";

/** Methods whose target (`params.name` or `params.uri`) is mirrored in `Mcp-Name`. */
const NAMED: Readonly<Record<string, "name" | "uri">> = {
  [McpMethod.ToolsCall]: "name",
  [McpMethod.PromptsGet]: "name",
  [McpMethod.ResourcesRead]: "uri",
};

/**
 * True when a POST belongs to the stateless era: its `MCP-Protocol-Version` is a stateless
 * version this library speaks, or, with no session id and no handshake-era version in that
 * header, its body (not an `initialize`) declares a protocol version in `_meta` (an unknown
 * one then gets -32022). Everything else keeps the 2025 behaviour, so one endpoint serves
 * both eras (docs/decisions.md 106).
 */
export function isStatelessPost(req: IncomingMessage, body: unknown): boolean {
  const version = req.headers["mcp-protocol-version"];
  if ((SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(version)) return false;
  if (isStatelessVersionHeader(req)) return true;
  if (req.headers["mcp-session-id"] !== undefined || !isPlainObject(body) || body.method === McpMethod.Initialize) return false;
  return declaresEra(body.params);
}

/** True when `MCP-Protocol-Version` names a stateless-era version this library speaks. */
export function isStatelessVersionHeader(req: IncomingMessage): boolean {
  return (MODERN_PROTOCOL_VERSIONS as readonly unknown[]).includes(req.headers["mcp-protocol-version"]);
}

/** Why a stateless POST is refused before it reaches a session (answered 400), or `undefined`. */
export function eraRefusal(req: IncomingMessage, body: unknown): { code: number; message: string } | undefined {
  if (Array.isArray(body)) return { code: ErrorCode.InvalidRequest, message: "Invalid Request: batches are not part of protocol 2026-07-28" };
  const mismatch = headerMismatch(req, body);
  return mismatch === undefined ? undefined : { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${mismatch}` };
}

/**
 * The reason a stateless POST's headers disagree with its body (answered 400, -32020), or
 * `undefined` when they agree. A body field that is absent is not compared: the MCP layer
 * refuses it with -32602. A notification needs no `Mcp-Method` or `Mcp-Name` (the revision
 * defines no header rules for them), but one it sends must match.
 */
export function headerMismatch(req: IncomingMessage, body: unknown): string | undefined {
  const version = req.headers["mcp-protocol-version"];
  if (typeof version !== "string") return "the MCP-Protocol-Version header is required";
  if (!isPlainObject(body) || typeof body.method !== "string") return undefined;
  const params = isPlainObject(body.params) ? body.params : {};
  const meta = isPlainObject(params._meta) ? params._meta : {};
  const declared = meta[EraMeta.ProtocolVersion];
  if (typeof declared === "string" && declared !== version) {
    return `MCP-Protocol-Version header ${JSON.stringify(version)} does not match _meta protocolVersion ${JSON.stringify(declared)}`;
  }
  const request = body.id !== undefined;
  const method = single(req, "mcp-method");
  if (method === undefined && request) return "the Mcp-Method header is required";
  if (method !== undefined && method !== body.method) return `Mcp-Method header ${JSON.stringify(method)} does not match body method ${JSON.stringify(body.method)}`;
  const field = NAMED[body.method];
  if (field === undefined) return undefined;
  const raw = single(req, "mcp-name");
  if (raw === undefined) return request ? `the Mcp-Name header is required for ${body.method}` : undefined;
  const name = decodeHeaderValue(raw);
  if (name === undefined) return "the Mcp-Name header holds invalid characters or a malformed Base64 value";
  if (typeof params[field] === "string" && name !== params[field]) {
    return `Mcp-Name header ${JSON.stringify(name)} does not match params.${field} ${JSON.stringify(params[field])}`;
  }
  return undefined;
}

/**
 * The HTTP status of a stateless-era JSON answer: 404 for an unknown method, 400 for a
 * request the client must change (bad params or `_meta`, header mismatch, missing client
 * capability, unsupported version), 200 for results and other errors.
 */
export function statelessStatus(message: JsonRpcMessage | JsonRpcMessage[]): number {
  if (Array.isArray(message) || !("error" in message) || message.error === undefined) return 200;
  const code = message.error.code;
  if (code === ErrorCode.MethodNotFound) return 404;
  return REFUSED.has(code) ? 400 : 200;
}

const REFUSED: ReadonlySet<number> = new Set([
  ErrorCode.InvalidRequest,
  ErrorCode.InvalidParams,
  ErrorCode.HeaderMismatch,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.UnsupportedProtocolVersion,
]);

/** A header sent once; a repeated one (Node joins them with ", ") is taken as sent. */
function single(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}
