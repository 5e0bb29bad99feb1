/**
 * The native config form, and the one server-entry reader that the file formats reuse.
 *
 * Native form: an array of server objects, or `{ "servers": [...] }`:
 *
 * ```json
 * { "servers": [{ "name": "fs", "command": "/usr/local/bin/mcp-fs", "args": ["--root", "."] }] }
 * ```
 *
 * Each entry has the fields of {@link McpServerConfig}. `type` is accepted as an alias of
 * `transport` and `disabled: true` as an alias of `enabled: false` (the spellings of the
 * file formats). Without a transport it is inferred: `command` means stdio, `url` means auto.
 * Parsing never fills defaults; see `withDefaults`.
 */
import {
  checkLiteral,
  checkServerName,
  NameRegistry,
  pointer,
  ProblemList,
  quoteEnum,
  readBoolean,
  readCount,
  readDuration,
  readEnum,
  readPairMap,
  readString,
  readStringArray,
  readUrl,
} from "./parse-common.ts";
import type { McpServerConfig, ParseResult, TransportKind, TrustLevel } from "./types.ts";
import { describeType, isPlainObject } from "../util/object.ts";

const TRANSPORTS: readonly TransportKind[] = ["stdio", "http", "sse", "auto"];
/** What the file formats call `type`; `auto` is accepted but not advertised there. */
const FILE_TYPES: readonly string[] = ["stdio", "http", "sse"];
const TRUST_LEVELS: readonly TrustLevel[] = ["trusted", "untrusted"];

/** Keys an entry may have besides `name`. */
const ENTRY_KEYS = new Set([
  "transport",
  "type",
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "enabled",
  "disabled",
  "timeout",
  "toolTimeout",
  "restartOnCrash",
  "maxRestarts",
  "toolPrefix",
  "trust",
  "resources",
  "resourceFilter",
  "allow",
  "deny",
]);

/** Keys of other tools' formats that we know and deliberately do not act on. */
const UNSUPPORTED_KEYS: Record<string, string> = {
  envFile: "envFile is not supported; list variables in env (secrets as secret://file/PATH)",
};

const STDIO_ONLY = ["command", "args", "env", "cwd"] as const;
const REMOTE_ONLY = ["url", "headers"] as const;

/**
 * Reads one server entry. `name` is the map key for the file formats, or undefined to take
 * it from the entry's own `name` field (native form). Returns undefined if the entry has any
 * error, after reporting all of them.
 */
export function readServerEntry(
  raw: unknown,
  path: string,
  p: ProblemList,
  name?: string,
): McpServerConfig | undefined {
  if (!isPlainObject(raw)) {
    p.error(path, `server entry must be an object (got ${describeType(raw)})`);
    return undefined;
  }
  const errorsBefore = p.errorCount;
  let serverName: string | undefined = name;
  if (name === undefined) {
    if (raw.name === undefined) p.error(pointer(path, "name"), "missing server name");
    else if (typeof raw.name !== "string") p.error(pointer(path, "name"), `server name must be a string (got ${describeType(raw.name)})`);
    else if (checkServerName(raw.name, pointer(path, "name"), p)) serverName = raw.name;
  } else {
    if (!checkServerName(name, path, p)) serverName = undefined;
    if (raw.name !== undefined) p.warn(pointer(path, "name"), "ignored: the server's name is its key");
  }

  for (const key of Object.keys(raw)) {
    if (key === "name" || ENTRY_KEYS.has(key)) continue;
    const at = pointer(path, key);
    p.warn(at, UNSUPPORTED_KEYS[key] ?? `unknown key ${JSON.stringify(key)} (ignored)`);
  }

  const out: Partial<McpServerConfig> = {};
  const field = (key: string) => pointer(path, key);
  const has = (key: string) => raw[key] !== undefined;

  if (has("command")) out.command = readString(raw.command, field("command"), p);
  if (has("args")) out.args = readStringArray(raw.args, field("args"), p);
  if (has("env")) out.env = readPairMap(raw.env, "env", field("env"), p);
  if (has("cwd")) out.cwd = readString(raw.cwd, field("cwd"), p);
  if (has("url")) out.url = readUrl(raw.url, field("url"), p);
  if (has("headers")) out.headers = readPairMap(raw.headers, "header", field("headers"), p);
  for (const key of ["command", "cwd"] as const) {
    const value = out[key];
    if (value !== undefined) checkLiteral(value, field(key), p, false);
  }
  out.args?.forEach((arg, i) => checkLiteral(arg, pointer(path, "args", i), p, false));

  const enabled = readEnabled(raw, path, p);
  if (enabled !== undefined) out.enabled = enabled;
  if (has("timeout")) out.timeout = readDuration(raw.timeout, field("timeout"), p);
  if (has("toolTimeout")) out.toolTimeout = readDuration(raw.toolTimeout, field("toolTimeout"), p);
  if (has("restartOnCrash")) out.restartOnCrash = readBoolean(raw.restartOnCrash, field("restartOnCrash"), p);
  if (has("maxRestarts")) out.maxRestarts = readCount(raw.maxRestarts, field("maxRestarts"), p);
  if (has("toolPrefix")) out.toolPrefix = readString(raw.toolPrefix, field("toolPrefix"), p);
  if (has("trust")) out.trust = readEnum(raw.trust, TRUST_LEVELS, "trust level", field("trust"), p);
  if (has("resources")) out.resources = readBoolean(raw.resources, field("resources"), p);
  for (const key of ["resourceFilter", "allow", "deny"] as const) {
    if (has(key)) out[key] = readStringArray(raw[key], field(key), p);
  }

  const transport = readTransport(raw, path, p, enabled === false);
  if (transport !== undefined) {
    out.transport = transport;
    warnMisplacedKeys(raw, transport, path, p);
  }

  if (p.errorCount > errorsBefore || serverName === undefined || transport === undefined) return undefined;
  return compact({ name: serverName, transport, ...out });
}

/** `enabled`, or its file-format spelling `disabled`; both present and disagreeing is an error. */
function readEnabled(raw: Record<string, unknown>, path: string, p: ProblemList): boolean | undefined {
  const enabled = raw.enabled === undefined ? undefined : readBoolean(raw.enabled, pointer(path, "enabled"), p);
  const disabled = raw.disabled === undefined ? undefined : readBoolean(raw.disabled, pointer(path, "disabled"), p);
  if (enabled !== undefined && disabled !== undefined && enabled === disabled) {
    p.error(pointer(path, "disabled"), "contradicts enabled");
    return undefined;
  }
  return enabled ?? (disabled === undefined ? undefined : !disabled);
}

/**
 * The transport: `transport` or `type` if given (both given must agree), else inferred from
 * `command` (stdio) or `url` (auto). Then checks that what the transport needs is there. A
 * disabled entry (which only removes an inherited server) needs neither command nor url.
 */
function readTransport(
  raw: Record<string, unknown>,
  path: string,
  p: ProblemList,
  disabled: boolean,
): TransportKind | undefined {
  let declared: TransportKind | undefined;
  let declaredOk = true;
  if (raw.transport !== undefined) {
    declared = readEnum(raw.transport, TRANSPORTS, "transport", pointer(path, "transport"), p);
    declaredOk = declared !== undefined;
  }
  if (raw.type !== undefined) {
    const at = pointer(path, "type");
    const asType =
      raw.type === "auto" ? "auto" : (readEnum(raw.type, FILE_TYPES, "transport", at, p) as TransportKind | undefined);
    if (asType === undefined) declaredOk = false;
    else if (declared !== undefined && declared !== asType) {
      p.error(at, `type ${quoteEnum(asType)} contradicts transport ${quoteEnum(declared)}`);
      declaredOk = false;
    } else declared = asType;
  }
  if (!declaredOk) return undefined;

  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (declared === undefined) {
    if (hasCommand && hasUrl) {
      p.error(path, "has both command and url; set type to stdio, http or sse");
      return undefined;
    }
    if (hasCommand) return "stdio";
    if (hasUrl) return "auto";
    if (disabled) return "stdio";
    p.error(path, "needs a command (stdio server) or a url (http/sse server)");
    return undefined;
  }
  if (!disabled) {
    if (declared === "stdio" && !hasCommand) p.error(pointer(path, "command"), "missing command (required for stdio)");
    if (declared !== "stdio" && !hasUrl) p.error(pointer(path, "url"), `missing url (required for ${declared})`);
  }
  return declared;
}

function warnMisplacedKeys(raw: Record<string, unknown>, transport: TransportKind, path: string, p: ProblemList): void {
  const misplaced = transport === "stdio" ? REMOTE_ONLY : STDIO_ONLY;
  for (const key of misplaced) {
    if (raw[key] !== undefined) p.warn(pointer(path, key), `ignored: ${key} does not apply to ${transport} servers`);
  }
}

/** Drops keys whose value is undefined, so results compare cleanly and print tidily. */
function compact(config: McpServerConfig): McpServerConfig {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) if (value !== undefined) out[key] = value;
  return out as unknown as McpServerConfig;
}

/**
 * Parses the native form: an array of server objects, or `{ "servers": [...] }`. Entries with
 * errors are left out of `servers`; later duplicates of a name are errors and left out too.
 * Does not check for plaintext credentials (call `findPlaintextCredentials` for that).
 */
export function parseNativeConfig(value: unknown): ParseResult {
  const p = new ProblemList();
  return { servers: readNativeList(value, "", p).map((e) => e.config), problems: p.items };
}

/** A parsed entry and where it was, for problems found about it later. */
export interface LocatedServer {
  config: McpServerConfig;
  path: string;
}

/** The native list inside a larger value; shared with the file parser. */
export function readNativeList(
  value: unknown,
  path: string,
  p: ProblemList,
  names = new NameRegistry(),
): LocatedServer[] {
  let list: unknown = value;
  let listPath = path;
  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      if (key !== "servers") p.warn(pointer(path, key), `unknown key ${JSON.stringify(key)} (ignored)`);
    }
    list = value.servers;
    listPath = pointer(path, "servers");
  }
  if (!Array.isArray(list)) {
    p.error(listPath, `must be an array of servers, or an object with a servers array (got ${describeType(list)})`);
    return [];
  }
  const servers: LocatedServer[] = [];
  list.forEach((entry: unknown, i) => {
    const at = pointer(listPath, i);
    const config = readServerEntry(entry, at, p);
    // Claim the name even when the entry failed, so a later entry cannot take it silently.
    const name = isPlainObject(entry) && typeof entry.name === "string" && entry.name !== "" ? entry.name : undefined;
    const unique = name === undefined || names.claim(name, pointer(at, "name"), p);
    if (config !== undefined && unique) servers.push({ config, path: at });
  });
  return servers;
}
