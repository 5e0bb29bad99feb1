/**
 * The `serve` section of a config file: what `mcp-bridge serve` needs beyond the upstreams
 * (which every config format already lists). The config parsers ignore unknown top-level keys,
 * so a file with this section still works in Claude Desktop, Cursor or VS Code.
 *
 * ```json
 * {
 *   "mcpServers": { "fs": { "command": "...", "trust": "trusted" } },
 *   "serve": {
 *     "isolation": { "fs": "shared" },
 *     "maxSessions": 8,
 *     "maxUpstreamConnections": 40,
 *     "sessionIdleMs": 600000,
 *     "bearerTokens": ["secret://env/GATEWAY_TOKEN"],
 *     "allowedHosts": ["gateway.internal:8080"],
 *     "allowedOrigins": ["https://app.example.com"]
 *   }
 * }
 * ```
 *
 * Pure (no I/O): every problem is reported at once, and no value that may be a secret (a
 * token) is ever quoted in a message.
 */
import { findSecretReference } from "../config/credentials.ts";
import { pointer, ProblemList, quoteEnum, readCount, readDuration, readEnum, readStringArray } from "../config/parse-common.ts";
import type { ConfigProblem } from "../config/types.ts";
import { describeType, isPlainObject } from "../util/object.ts";

/**
 * Who an upstream's connections belong to. `per-client`: each downstream session gets its own
 * (the only safe choice for a stateful server, whose session is the client's); `shared`: one
 * connection serves every downstream client (for stateless servers, e.g. 2026-07-28 ones).
 */
export type Isolation = "per-client" | "shared";

export const ISOLATIONS: readonly Isolation[] = ["per-client", "shared"];

/** Defaults: a gateway on a workstation, where each session costs one process per per-client upstream. */
export const DEFAULT_MAX_SESSIONS = 32;
export const DEFAULT_MAX_UPSTREAM_CONNECTIONS = 100;

/** The `serve` section, checked; limits not given are left out (the CLI's flags and defaults fill them). */
export interface ServeSettings {
  /** Isolation by upstream name; an upstream not named is `per-client`. */
  isolation: Record<string, Isolation>;
  maxSessions?: number;
  maxUpstreamConnections?: number;
  sessionIdleMs?: number;
  /** Tokens as written: plain values or `secret://` references, resolved at start. */
  bearerTokens: string[];
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

const KEYS = new Set(["isolation", "maxSessions", "maxUpstreamConnections", "sessionIdleMs", "bearerTokens", "allowedHosts", "allowedOrigins"]);

/**
 * Reads the `serve` member of a config file's top-level value (absent: every default).
 * `upstreams` are the names the file defines, so an isolation entry for no server is reported.
 */
export function readServeSettings(file: unknown, upstreams: readonly string[], source: string): { settings: ServeSettings; problems: ConfigProblem[] } {
  const p = new ProblemList(source);
  const settings: ServeSettings = { isolation: {}, bearerTokens: [] };
  const raw = isPlainObject(file) ? file.serve : undefined;
  if (raw === undefined) return { settings, problems: [] };
  if (!isPlainObject(raw)) {
    p.error("/serve", `must be an object (got ${describeType(raw)})`);
    return { settings, problems: p.items };
  }
  for (const key of Object.keys(raw)) if (!KEYS.has(key)) p.warn(pointer("/serve", key), `unknown key ${JSON.stringify(key)} (ignored)`);

  if (raw.isolation !== undefined) {
    if (!isPlainObject(raw.isolation)) p.error("/serve/isolation", `must be an object mapping upstream names to ${ISOLATIONS.join(" or ")} (got ${describeType(raw.isolation)})`);
    else {
      for (const [name, value] of Object.entries(raw.isolation)) {
        const at = pointer("/serve/isolation", name);
        const isolation = readEnum(value, ISOLATIONS, "isolation", at, p);
        if (!upstreams.includes(name)) p.error(at, `no enabled upstream is named ${quoteEnum(name)}`);
        else if (isolation !== undefined) settings.isolation[name] = isolation;
      }
    }
  }
  for (const key of ["maxSessions", "maxUpstreamConnections"] as const) {
    if (raw[key] === undefined) continue;
    const n = readCount(raw[key], pointer("/serve", key), p);
    if (n === 0) p.error(pointer("/serve", key), "must be at least 1");
    else if (n !== undefined) settings[key] = n;
  }
  if (raw.sessionIdleMs !== undefined) settings.sessionIdleMs = readDuration(raw.sessionIdleMs, "/serve/sessionIdleMs", p);
  if (raw.bearerTokens !== undefined) {
    const tokens = readStringArray(raw.bearerTokens, "/serve/bearerTokens", p) ?? [];
    tokens.forEach((token, i) => {
      const at = pointer("/serve/bearerTokens", i);
      if (token.length === 0) p.error(at, "an empty token would admit anyone");
      else if (findSecretReference(token) === undefined) p.warn(at, "a bearer token written as plaintext; use secret://env/NAME or secret://file/PATH");
      else if (findSecretReference(token)!.prefix !== "") p.error(at, "a token is the whole value: write secret://... alone, without text before it");
      if (token.length > 0) settings.bearerTokens.push(token);
    });
  }
  for (const key of ["allowedHosts", "allowedOrigins"] as const) {
    if (raw[key] !== undefined) settings[key] = readStringArray(raw[key], pointer("/serve", key), p);
  }
  return { settings, problems: p.items };
}

/** The isolation of one upstream under these settings. */
export function isolationOf(settings: ServeSettings, upstream: string): Isolation {
  return settings.isolation[upstream] ?? "per-client";
}
