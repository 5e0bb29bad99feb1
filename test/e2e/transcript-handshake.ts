/**
 * The `{"handshake": ...}` line of a golden transcript: initialize, its result, then
 * notifications/initialized, as three steps. Most transcripts test something after the
 * handshake, and spelling out the server's whole initialize result in each made one change to a
 * fixture's capabilities an edit of two dozen files. The result each server answers is written
 * once, in fixtures/transcripts/initialize-results.json; `handshake.jsonl` still spells it out
 * line by line, and a test checks the two agree.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isPlainObject } from "../../src/util/object.ts";

/** What a handshake line may say; every member is optional. */
export interface HandshakeSpec {
  /** The initialize request's id. Default 0. */
  id?: number | string;
  /** The version the client asks for (any JSON value: a transcript may send garbage). Default "2025-11-25". */
  protocolVersion?: unknown;
  /** The version the server must answer. Default: the one asked for. */
  negotiated?: string;
}

const KEYS: ReadonlySet<string> = new Set(["id", "protocolVersion", "negotiated"]);
const LATEST = "2025-11-25";

/** The initialize result of each fixture server, without its `protocolVersion`. */
export function initializeResults(root: string): Record<string, Record<string, unknown>> {
  return JSON.parse(readFileSync(join(root, "fixtures", "transcripts", "initialize-results.json"), "utf8")) as Record<string, Record<string, unknown>>;
}

/**
 * The three messages a handshake line stands for, or a reason it is malformed. `result` is the
 * server's entry of {@link initializeResults}.
 */
export function handshakeMessages(value: unknown, result: Record<string, unknown>): { send: unknown; expect: unknown; initialized: unknown } | string {
  if (!isPlainObject(value)) return "handshake must be an object (use {} for the defaults)";
  const unknown = Object.keys(value).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) return `handshake has unknown members ${JSON.stringify(unknown)}; allowed: ${[...KEYS].join(", ")}`;
  const spec = value as HandshakeSpec;
  if (spec.id !== undefined && typeof spec.id !== "number" && typeof spec.id !== "string") return "handshake id must be a number or a string";
  if (spec.negotiated !== undefined && typeof spec.negotiated !== "string") return "handshake negotiated must be a string";
  const id = spec.id ?? 0;
  const asked = Object.hasOwn(spec, "protocolVersion") ? spec.protocolVersion : LATEST;
  const negotiated = spec.negotiated ?? asked;
  if (typeof negotiated !== "string") return "handshake negotiated is needed when protocolVersion is not a string";
  return {
    send: {
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: "transcript", version: "1.0.0" } },
    },
    expect: { jsonrpc: "2.0", id, result: { protocolVersion: negotiated, ...result } },
    initialized: { jsonrpc: "2.0", method: "notifications/initialized" },
  };
}
