/**
 * Building blocks shared by the config parsers: problem paths, field checks that report instead
 * of throwing, server-name rules, and the defaults. Pure: no I/O, no `node:` imports.
 *
 * The one rule every message here keeps: a value that might be a secret (an env or header
 * value, a command, an argument, a URL) is never quoted. Messages name the key or path instead.
 * Only values of enumerated fields (`type`, `transport`, `trust`) are quoted, and truncated.
 */
import { findSecretReference, isCredentialKey } from "./credentials.ts";
import type { ConfigProblem, McpServerConfig, ResolvedServerConfig } from "./types.ts";
import { describeType, isPlainObject } from "../util/object.ts";

/** Collects problems for one parse; every problem gets the same `source`, if any. */
export class ProblemList {
  readonly items: ConfigProblem[] = [];
  private readonly source: string | undefined;

  constructor(source?: string) {
    this.source = source;
  }

  error(path: string, message: string): void {
    this.add(path, message, "error");
  }

  warn(path: string, message: string): void {
    this.add(path, message, "warning");
  }

  /** Number of errors so far; an entry compares it before and after to know if it failed. */
  get errorCount(): number {
    return this.items.reduce((n, p) => (p.severity === "error" ? n + 1 : n), 0);
  }

  private add(path: string, message: string, severity: ConfigProblem["severity"]): void {
    const problem: ConfigProblem = { path, message, severity };
    if (this.source !== undefined) problem.source = this.source;
    this.items.push(problem);
  }
}

/** Appends segments to a JSON pointer, escaping `~`, `/` and control characters. */
export function pointer(base: string, ...segments: (string | number)[]): string {
  let out = base;
  for (const segment of segments) {
    const text = String(segment)
      .replace(/~/g, "~0")
      .replace(/\//g, "~1")
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    out += `/${text}`;
  }
  return out;
}

/** A quoted, length-capped rendering for enumerated fields only (never for free text). */
export function quoteEnum(value: string): string {
  const capped = value.length > 32 ? `${value.slice(0, 32)}...` : value;
  return JSON.stringify(capped);
}

/** Config files larger than this are refused rather than read (discovery and the CLI's --config). */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** Node's timers overflow above this many ms (and then fire at once). */
const MAX_TIMEOUT_MS = 2_147_483_647;

// --- field checks: each reports what is wrong at `path` and returns undefined on failure ---

export function readString(value: unknown, path: string, p: ProblemList): string | undefined {
  if (typeof value !== "string") {
    p.error(path, `must be a string (got ${describeType(value)})`);
    return undefined;
  }
  if (value.length === 0) {
    p.error(path, "must not be empty");
    return undefined;
  }
  if (value.includes("\0")) {
    p.error(path, "must not contain NUL characters");
    return undefined;
  }
  return value;
}

export function readStringArray(value: unknown, path: string, p: ProblemList): string[] | undefined {
  if (!Array.isArray(value)) {
    p.error(path, `must be an array of strings (got ${describeType(value)})`);
    return undefined;
  }
  let ok = true;
  value.forEach((item: unknown, i) => {
    if (typeof item !== "string") {
      p.error(pointer(path, i), `must be a string (got ${describeType(item)})`);
      ok = false;
    } else if (item.includes("\0")) {
      p.error(pointer(path, i), "must not contain NUL characters");
      ok = false;
    }
  });
  return ok ? (value as string[]) : undefined;
}

export function readBoolean(value: unknown, path: string, p: ProblemList): boolean | undefined {
  if (typeof value !== "boolean") {
    p.error(path, `must be true or false (got ${describeType(value)})`);
    return undefined;
  }
  return value;
}

/** A time limit in milliseconds: a positive finite number that a Node timer can hold. */
export function readDuration(value: unknown, path: string, p: ProblemList): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    p.error(path, `must be a number of milliseconds (got ${describeType(value)})`);
    return undefined;
  }
  if (value <= 0) {
    p.error(path, "must be a positive number of milliseconds");
    return undefined;
  }
  if (value > MAX_TIMEOUT_MS) {
    p.error(path, `must be at most ${MAX_TIMEOUT_MS} ms`);
    return undefined;
  }
  // Some tools write seconds here; 30 means 30 ms to us, which no server can meet.
  if (value < 1000) p.warn(path, `${value} ms is very short; values are milliseconds, not seconds`);
  return value;
}

export function readCount(value: unknown, path: string, p: ProblemList): number | undefined {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    p.error(path, `must be a whole number >= 0 (got ${describeType(value)})`);
    return undefined;
  }
  return value;
}

export function readEnum<T extends string>(
  value: unknown,
  allowed: readonly T[],
  what: string,
  path: string,
  p: ProblemList,
): T | undefined {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  const shown = typeof value === "string" ? quoteEnum(value) : `a ${describeType(value)}`;
  p.error(path, `unknown ${what} ${shown} (expected ${allowed.join(", ")})`);
  return undefined;
}

/** An environment variable name: non-empty, no `=`, no NUL (the OS refuses both). */
export function checkEnvName(name: string, path: string, p: ProblemList): boolean {
  if (name.length === 0 || name.includes("=") || name.includes("\0")) {
    p.error(path, "is not a valid environment variable name (empty, or contains = or NUL)");
    return false;
  }
  return true;
}

/** HTTP header names are RFC 9110 tokens; anything else would corrupt the request. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function checkHeaderName(name: string, path: string, p: ProblemList): boolean {
  if (!HEADER_NAME.test(name)) {
    p.error(path, "is not a valid HTTP header name");
    return false;
  }
  return true;
}

/** A value must be a string; env values may not hold NUL, header values not CR, LF or NUL. */
export function checkPairValue(
  value: unknown,
  kind: "env" | "header",
  path: string,
  p: ProblemList,
): value is string {
  if (typeof value !== "string") {
    p.error(path, `must be a string (got ${describeType(value)})`);
    return false;
  }
  const bad = kind === "header" ? /[\r\n\0]/ : /\0/;
  if (bad.test(value)) {
    p.error(path, kind === "header" ? "must not contain CR, LF or NUL" : "must not contain NUL characters");
    return false;
  }
  return true;
}

/** An `{NAME: value}` object of env variables or headers. */
export function readPairMap(
  value: unknown,
  kind: "env" | "header",
  path: string,
  p: ProblemList,
): Record<string, string> | undefined {
  if (!isPlainObject(value)) {
    p.error(path, `must be an object of ${kind === "env" ? "variable" : "header"} names to strings (got ${describeType(value)})`);
    return undefined;
  }
  const out: Record<string, string> = {};
  const seenHeaders = new Map<string, string>();
  let ok = true;
  for (const [key, item] of Object.entries(value)) {
    const at = pointer(path, key);
    const nameOk = kind === "env" ? checkEnvName(key, at, p) : checkHeaderName(key, at, p);
    if (!checkPairValue(item, kind, at, p) || !nameOk) {
      ok = false;
      continue;
    }
    if (kind === "header") {
      const lower = key.toLowerCase();
      const earlier = seenHeaders.get(lower);
      if (earlier !== undefined) {
        p.warn(at, `repeats header ${earlier} (names are case-insensitive); the last one is sent`);
        delete out[earlier];
      }
      seenHeaders.set(lower, key);
    }
    checkLiteral(item, at, p, true);
    out[key] = item;
  }
  return ok ? out : undefined;
}

/** An `http:` or `https:` URL. The URL itself is never quoted: it may carry a token. */
export function readUrl(value: unknown, path: string, p: ProblemList): string | undefined {
  const text = readString(value, path, p);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    p.error(path, "is not a valid absolute URL");
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    p.error(path, `unsupported URL scheme ${quoteEnum(url.protocol)} (expected http: or https:)`);
    return undefined;
  }
  checkLiteral(text, path, p, false);
  return text;
}

/**
 * Warns about text this library passes through unchanged although the author may expect
 * expansion: VS Code `${input:...}`, `${VAR}` substitutions, and `secret://` references
 * outside env/header values (only those are resolved).
 */
export function checkLiteral(value: string, path: string, p: ProblemList, resolvesSecrets: boolean): void {
  if (value.includes("${input:")) {
    p.warn(path, "VS Code ${input:...} references are not supported; the text is used as written");
  } else if (value.includes("${")) {
    p.warn(path, "${...} is not expanded; for a value from the environment use secret://env/NAME");
  }
  if (!resolvesSecrets && findSecretReference(value) !== undefined) {
    p.warn(path, "secret:// references are resolved only in env and headers values; this one is used as written");
  }
}

// --- server names ---

const NAME_CHARS = /^[A-Za-z0-9_.-]+$/;
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Server names. Empty names and names with control characters are errors (the name appears
 * in log lines and tool names). Other characters outside `[A-Za-z0-9_.-]` are a warning only:
 * existing config files use names such as `My Server`, and the bridge replaces such
 * characters in tool names anyway.
 */
export function checkServerName(name: string, path: string, p: ProblemList): boolean {
  if (name.length === 0) {
    p.error(path, "server name must not be empty");
    return false;
  }
  if (CONTROL_CHARS.test(name)) {
    p.error(path, "server name must not contain control characters");
    return false;
  }
  if (!NAME_CHARS.test(name)) {
    p.warn(path, "server name has characters outside [A-Za-z0-9_.-]; they are replaced in tool names");
  }
  return true;
}

/** Remembers names; a repeat is an error naming where the first one was. */
export class NameRegistry {
  private readonly seen = new Map<string, string>();

  /** True if `name` is new; otherwise reports the duplicate at `path`. */
  claim(name: string, path: string, p: ProblemList): boolean {
    const first = this.seen.get(name);
    if (first !== undefined) {
      p.error(path, `duplicate server name ${JSON.stringify(name)} (first defined at ${first || "/"})`);
      return false;
    }
    this.seen.set(name, path);
    return true;
  }
}

// --- plaintext credentials ---

/**
 * Warnings for env and header entries under credential-looking keys that hold plaintext
 * instead of a `secret://` reference. `basePath` is prepended to `/env/NAME` paths.
 */
export function findPlaintextCredentials(config: McpServerConfig, basePath = ""): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const scan = (map: Record<string, string> | undefined, key: "env" | "headers", label: string) => {
    for (const [name, value] of Object.entries(map ?? {})) {
      if (!isCredentialKey(name) || typeof value !== "string" || value.length === 0) continue;
      if (findSecretReference(value) !== undefined || value.includes("${")) continue;
      out.push({
        path: pointer(basePath, key, name),
        severity: "warning",
        message: `server ${JSON.stringify(config.name)}: ${label} ${name} looks like a credential but holds plaintext; use secret://env/NAME or secret://file/PATH`,
      });
    }
  };
  scan(config.env, "env", "env");
  scan(config.headers, "headers", "header");
  return out;
}

// --- defaults ---

/** The defaults of a server's config, in one place (the timeouts are docs/decisions.md 3). */
export const CONFIG_DEFAULTS = {
  enabled: true,
  timeout: 30_000,
  toolTimeout: 120_000,
  maxRestarts: 5,
  /** Fail-safe: a config that says nothing about trust is not trusted. */
  trust: "untrusted",
  resources: true,
} as const;

/**
 * Fills in every default. Parsers leave unset fields unset, so that a later layer can tell
 * "not said" from "said" (the ACP layer applies its own trust default before this).
 *
 * ```ts
 * withDefaults({ name: "fs", transport: "stdio", command: "/bin/fs" }).restartOnCrash // true
 * ```
 */
export function withDefaults(config: McpServerConfig): ResolvedServerConfig {
  return {
    ...config,
    args: config.args ?? [],
    env: config.env ?? {},
    headers: config.headers ?? {},
    enabled: config.enabled ?? CONFIG_DEFAULTS.enabled,
    timeout: config.timeout ?? CONFIG_DEFAULTS.timeout,
    toolTimeout: config.toolTimeout ?? CONFIG_DEFAULTS.toolTimeout,
    restartOnCrash: config.restartOnCrash ?? config.transport === "stdio",
    maxRestarts: config.maxRestarts ?? CONFIG_DEFAULTS.maxRestarts,
    trust: config.trust ?? CONFIG_DEFAULTS.trust,
    resources: config.resources ?? CONFIG_DEFAULTS.resources,
  };
}

/** One line for a person: `[error] .mcp.json#/mcpServers/x/type: unknown transport ...`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = `${problem.source === undefined ? "" : `${problem.source}#`}${problem.path || "/"}`;
  return `[${problem.severity}] ${where}: ${problem.message}`;
}
