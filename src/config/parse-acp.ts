/**
 * The ACP `McpServer[]` union that an editor sends in `session/new` (ACP protocol version 1):
 *
 * ```jsonc
 * {"name":"fs","command":"npx","args":["-y","fs-server"],"env":[{"name":"K","value":"v"}]}  // stdio, no type
 * {"type":"http","name":"api","url":"https://...","headers":[{"name":"Authorization","value":"..."}]}
 * {"type":"sse","name":"ev","url":"https://...","headers":[]}
 * ```
 *
 * Lenient where the reference SDK is strict: `type: "stdio"` (the v2 draft) is accepted and
 * missing `args`/`env`/`headers` mean empty. Strict where real agents went wrong: duplicate
 * names are errors (the duplicate is dropped; the ACP layer answers -32602), and HTTP servers
 * are parsed, never silently filtered out. `trust` is left unset: the ACP layer applies its own
 * default. Values in env and headers are never quoted in problems.
 */
import {
  checkEnvName,
  checkHeaderName,
  checkPairValue,
  checkServerName,
  NameRegistry,
  pointer,
  ProblemList,
  quoteEnum,
  readString,
  readStringArray,
  readUrl,
} from "./parse-common.ts";
import type { McpServerConfig, ParseResult } from "./types.ts";
import { describeType, isPlainObject } from "../util/object.ts";

/** `_meta` is ACP's extension point on every object; we carry it in the types and ignore it. */
type AcpMeta = { _meta?: Record<string, unknown> };

/** One `{name, value}` pair of `env` (stdio) or `headers` (http/sse). */
export interface AcpNameValue extends AcpMeta {
  name: string;
  value: string;
}

export interface AcpStdioServer extends AcpMeta {
  /** Absent in ACP v1; `"stdio"` in the v2 draft. */
  type?: "stdio";
  name: string;
  /** An absolute path or, as editors send it, a bare name such as `npx` (PATH lookup). */
  command: string;
  args: string[];
  env: AcpNameValue[];
}

export interface AcpHttpServer extends AcpMeta {
  type: "http";
  name: string;
  url: string;
  headers: AcpNameValue[];
}

export interface AcpSseServer extends AcpMeta {
  type: "sse";
  name: string;
  url: string;
  headers: AcpNameValue[];
}

/** An element of `session/new`'s `mcpServers`. */
export type AcpMcpServer = AcpStdioServer | AcpHttpServer | AcpSseServer;

const STDIO_KEYS = new Set(["type", "name", "command", "args", "env", "_meta"]);
const REMOTE_KEYS = new Set(["type", "name", "url", "headers", "_meta"]);

/**
 * Parses `session/new`'s `mcpServers` into native configs (env/header arrays become maps).
 * Every problem is reported; an element with an error is left out of `servers`.
 */
export function parseAcpMcpServers(value: unknown): ParseResult {
  const p = new ProblemList();
  if (!Array.isArray(value)) {
    p.error("", `mcpServers must be an array (got ${describeType(value)})`);
    return { servers: [], problems: p.items };
  }
  const names = new NameRegistry();
  const servers: McpServerConfig[] = [];
  value.forEach((entry: unknown, i) => {
    const path = pointer("", i);
    const config = readAcpServer(entry, path, p);
    const name = isPlainObject(entry) && typeof entry.name === "string" && entry.name !== "" ? entry.name : undefined;
    const unique = name === undefined || names.claim(name, pointer(path, "name"), p);
    if (config !== undefined && unique) servers.push(config);
  });
  return { servers, problems: p.items };
}

function readAcpServer(raw: unknown, path: string, p: ProblemList): McpServerConfig | undefined {
  if (!isPlainObject(raw)) {
    p.error(path, `server must be an object (got ${describeType(raw)})`);
    return undefined;
  }
  const errorsBefore = p.errorCount;
  const field = (key: string) => pointer(path, key);

  let name: string | undefined;
  if (raw.name === undefined) p.error(field("name"), "missing server name");
  else if (typeof raw.name !== "string") p.error(field("name"), `server name must be a string (got ${describeType(raw.name)})`);
  else if (checkServerName(raw.name, field("name"), p)) name = raw.name;

  const kind = readAcpType(raw.type, field("type"), p);
  if (kind === undefined) return undefined;

  const known = kind === "stdio" ? STDIO_KEYS : REMOTE_KEYS;
  for (const key of Object.keys(raw)) {
    if (known.has(key)) continue;
    const other = kind === "stdio" ? REMOTE_KEYS : STDIO_KEYS;
    p.warn(
      field(key),
      other.has(key) ? `ignored: ${key} does not apply to ${kind} servers` : `unknown key ${JSON.stringify(key)} (ignored)`,
    );
  }

  if (kind === "stdio") {
    let command: string | undefined;
    if (raw.command !== undefined) command = readString(raw.command, field("command"), p);
    else if (raw.type === undefined && raw.url !== undefined) {
      p.error(field("command"), 'missing command; an HTTP server needs type "http" (or "sse")');
    } else p.error(field("command"), "missing command (required for stdio)");
    const args = raw.args === undefined ? [] : readStringArray(raw.args, field("args"), p);
    const env = raw.env === undefined ? {} : readPairs(raw.env, "env", field("env"), p);
    if (p.errorCount > errorsBefore || name === undefined || command === undefined || !args || !env) return undefined;
    return { name, transport: "stdio", command, args, env };
  }

  let url: string | undefined;
  if (raw.url === undefined) p.error(field("url"), `missing url (required for ${kind})`);
  else url = readUrl(raw.url, field("url"), p);
  const headers = raw.headers === undefined ? {} : readPairs(raw.headers, "header", field("headers"), p);
  if (p.errorCount > errorsBefore || name === undefined || url === undefined || !headers) return undefined;
  return { name, transport: kind, url, headers };
}

function readAcpType(type: unknown, path: string, p: ProblemList): "stdio" | "http" | "sse" | undefined {
  if (type === undefined || type === "stdio" || type === "http" || type === "sse") return type ?? "stdio";
  if (type === "acp") {
    p.error(path, 'transport "acp" (MCP over ACP) is not supported here (expected stdio, http, sse)');
    return undefined;
  }
  const shown = typeof type === "string" ? quoteEnum(type) : `a ${describeType(type)}`;
  p.error(path, `unknown transport ${shown} (expected stdio, http, sse)`);
  return undefined;
}

/** `[{name, value}]` to a map. A repeated name is a warning; the last one wins, as in a map. */
function readPairs(
  value: unknown,
  kind: "env" | "header",
  path: string,
  p: ProblemList,
): Record<string, string> | undefined {
  if (!Array.isArray(value)) {
    p.error(path, `must be an array of {name, value} objects (got ${describeType(value)})`);
    return undefined;
  }
  const out: Record<string, string> = {};
  const seen = new Map<string, { path: string; name: string }>();
  let ok = true;
  value.forEach((item: unknown, i) => {
    const at = pointer(path, i);
    if (!isPlainObject(item)) {
      p.error(at, `must be a {name, value} object (got ${describeType(item)})`);
      ok = false;
      return;
    }
    for (const key of Object.keys(item)) {
      if (key !== "name" && key !== "value" && key !== "_meta") p.warn(pointer(at, key), `unknown key ${JSON.stringify(key)} (ignored)`);
    }
    let name: string | undefined;
    if (typeof item.name !== "string") p.error(pointer(at, "name"), `must be a string (got ${describeType(item.name)})`);
    else if (kind === "env" ? checkEnvName(item.name, pointer(at, "name"), p) : checkHeaderName(item.name, pointer(at, "name"), p)) {
      name = item.name;
    }
    const valueOk = checkPairValue(item.value, kind, pointer(at, "value"), p);
    if (name === undefined || !valueOk) {
      ok = false;
      return;
    }
    const key = kind === "header" ? name.toLowerCase() : name;
    const first = seen.get(key);
    if (first !== undefined) {
      p.warn(pointer(at, "name"), `repeats the ${kind} name at ${first.path}; the last one wins`);
      delete out[first.name];
    }
    seen.set(key, { path: pointer(at, "name"), name });
    out[name] = item.value as string;
  });
  return ok ? out : undefined;
}
