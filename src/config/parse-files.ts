/**
 * The JSON config files people already have, plus JSON text decoding for them. Pure: the
 * caller reads the file (see discovery.ts) and passes its text or value.
 *
 * Accepted shapes (one file may hold several sections; names must be unique across them):
 * - `{"mcpServers": {name: {command, args, env, cwd, url, type?, headers?, disabled?}}}`:
 *   Claude Desktop, Cursor, Claude Code's `.mcp.json` (`type` is `stdio`, `http` or `sse`).
 * - `{"servers": {name: {type, command, args, env, url, headers}}, "inputs": [...]}`: VS Code.
 *   `inputs` and `${input:...}` are not supported and produce warnings.
 * - `{"servers": [...]}` or a bare array: the native form (see parse-native.ts); an array
 *   under `servers` is what tells it apart from VS Code's object.
 *
 * Entries of every shape may also carry the native fields (`timeout`, `trust`, `allow`, ...).
 * Servers from files get `trust: "untrusted"` unless the entry says otherwise, so no later
 * default (such as the ACP layer's) can promote them. Other top-level keys are ignored
 * silently: Claude Desktop keeps unrelated settings in the same file.
 */
import {
  findPlaintextCredentials,
  NameRegistry,
  pointer,
  ProblemList,
} from "./parse-common.ts";
import { type LocatedServer, readNativeList, readServerEntry } from "./parse-native.ts";
import type { ConfigProblem, McpServerConfig, ParseResult } from "./types.ts";
import { describeType, isPlainObject } from "../util/object.ts";

/**
 * Parses a config file's JSON value. `source` (usually the file path) is copied into every
 * problem. Entries with errors are left out; plaintext credentials give warnings.
 */
export function parseMcpJsonFile(value: unknown, source?: string): ParseResult {
  const p = new ProblemList(source);
  const found: LocatedServer[] = [];
  const names = new NameRegistry();

  const readMap = (map: unknown, path: string) => {
    if (!isPlainObject(map)) {
      p.error(path, `must be an object mapping server names to servers (got ${describeType(map)})`);
      return;
    }
    for (const [name, entry] of Object.entries(map)) {
      const at = pointer(path, name);
      const config = readServerEntry(entry, at, p, name);
      const unique = name === "" || names.claim(name, at, p);
      if (config !== undefined && unique) found.push({ config, path: at });
    }
  };
  const readList = (list: unknown, path: string) => {
    found.push(...readNativeList(list, path, p, names));
  };

  if (Array.isArray(value)) {
    readList(value, "");
  } else if (!isPlainObject(value)) {
    p.error("", `config file must hold a JSON object (got ${describeType(value)})`);
  } else {
    if (value.mcpServers === undefined && value.servers === undefined) {
      p.error("", "no servers found: expected mcpServers (Claude Desktop, Cursor, Claude Code) or servers (VS Code, native)");
    }
    if (value.mcpServers !== undefined) readMap(value.mcpServers, "/mcpServers");
    if (Array.isArray(value.servers)) readList(value.servers, "/servers");
    else if (value.servers !== undefined) readMap(value.servers, "/servers");
    if (value.inputs !== undefined) {
      p.warn("/inputs", "VS Code inputs are not supported; ${input:...} references are used as written");
    }
  }

  const servers: McpServerConfig[] = [];
  for (const { config, path } of found) {
    const withTrust: McpServerConfig = config.trust === undefined ? { ...config, trust: "untrusted" } : config;
    for (const problem of findPlaintextCredentials(withTrust, path)) addSourced(p, problem);
    servers.push(withTrust);
  }
  return { servers, problems: p.items };
}

function addSourced(p: ProblemList, problem: ConfigProblem): void {
  if (problem.severity === "error") p.error(problem.path, problem.message);
  else p.warn(problem.path, problem.message);
}

/** The result of decoding a config file's text: a value, or the one problem that stopped it. */
export type JsonTextResult = { ok: true; value: unknown } | { ok: false; problem: ConfigProblem };

/**
 * Decodes a config file's text. Tolerates what VS Code's `mcp.json` allows (comments,
 * trailing commas) and a leading BOM. A syntax error is reported by line and column only:
 * the engine's own message quotes the text around the error, which may be a secret.
 */
export function parseJsonText(text: string, source?: string): JsonTextResult {
  const cleaned = dropTrailingCommas(blankComments(text.startsWith("\uFEFF") ? text.slice(1) : text));
  try {
    return { ok: true, value: JSON.parse(cleaned) as unknown };
  } catch (err) {
    const message = err instanceof Error ? err.message : "";
    const at = /at position (\d+)/.exec(message);
    let reason = "invalid JSON";
    if (at) {
      const offset = Number(at[1]);
      const before = cleaned.slice(0, offset);
      const line = before.split("\n").length;
      const column = offset - before.lastIndexOf("\n");
      reason = `invalid JSON at line ${line}, column ${column}`;
    } else if (/end of JSON input/i.test(message)) {
      reason = "invalid JSON: the text ends too early";
    } else if (/^Unexpected token/.test(message)) {
      reason = "invalid JSON: unexpected character";
    }
    const problem: ConfigProblem = { path: "", message: reason, severity: "error" };
    if (source !== undefined) problem.source = source;
    return { ok: false, problem };
  }
}

/**
 * Replaces `//` and `/* *\/` comments outside strings with spaces (newlines kept), so that
 * offsets in later error messages still point at the original text.
 */
function blankComments(text: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") {
        out.push(" ");
        i++;
      }
    } else if (c === "/" && text[i + 1] === "*") {
      const close = text.indexOf("*/", i + 2);
      const end = close === -1 ? text.length : close + 2;
      out.push(text.slice(i, end).replace(/[^\n]/g, " "));
      i = end;
    } else {
      out.push(c);
      i++;
    }
  }
  return out.join("");
}

/** Replaces a comma that is followed (after whitespace) by `}` or `]` with a space. */
function dropTrailingCommas(text: string): string {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out.push(text.slice(i, end));
      i = end;
      continue;
    }
    if (c === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      out.push(text[j] === "}" || text[j] === "]" ? " " : c);
    } else out.push(c);
    i++;
  }
  return out.join("");
}

/** Index just past the string literal starting at `start` (or the end of an unclosed one). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"') return i + 1;
    else i++;
  }
  return text.length;
}
