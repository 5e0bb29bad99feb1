/**
 * What a spawned MCP server gets to see: a minimal environment, and a command resolved to an
 * absolute path through the PATH of that environment (never through a shell). Also the one
 * process-group probe the stdio transport needs.
 */
import type { Stats } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { BridgeError, type BridgeErrorOptions } from "../jsonrpc/errors.ts";

// node:fs through process.getBuiltinModule, not an `import`: an ES import of node:fs makes Node
// build the module's whole namespace, `fs.promises` included, which loads some thirty more of
// Node's own modules (readline, os, the REPL's history...): ~2.5 ms of CPU on every cold start
// of the CLI and of each process that only needs one function of fs (docs/decisions.md 98).
//
// The lookups are synchronous, like the ones `execvp` makes inside the spawn that follows them
// (libuv's spawn blocks the thread for as long): a few stat calls on local paths. Made through
// the thread pool instead, the first spawn of a process waited for the pool to start its
// threads and for three round trips to it (~2 ms on a 2-core VM), while the event loop ran
// other work in between (docs/decisions.md 155).
const { accessSync, constants: fsConstants, statSync } = process.getBuiltinModule("node:fs");

/** Variables passed through from our environment on every platform. */
export const BASE_ENV_VARS: readonly string[] = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "TERM",
  "TMPDIR",
  "USER",
  "LOGNAME",
];

/** Extra variables passed through on Windows, where programs fail without them. */
const WINDOWS_ENV_VARS: readonly string[] = [
  "SYSTEMROOT",
  "APPDATA",
  "LOCALAPPDATA",
  "PATHEXT",
  "COMSPEC",
  "USERPROFILE",
  "TEMP",
  "TMP",
  "PROGRAMFILES",
  "WINDIR",
  "SYSTEMDRIVE",
];

export interface ChildEnvOptions {
  /** Variables set explicitly for the child; they win over inherited ones. */
  env?: Readonly<Record<string, string>>;
  /** Pass our whole environment instead of the minimal base. Default false. */
  inheritEnv?: boolean;
  /** The environment to take variables from. Default `process.env`. */
  source?: Readonly<Record<string, string | undefined>>;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
}

/**
 * Builds the environment of a child process: the minimal base (or everything, with
 * `inheritEnv`), then the explicit `env` on top. Secrets in our own environment (API keys,
 * tokens) therefore do not leak into servers unless asked for.
 *
 * ```ts
 * buildChildEnv({ env: { API_KEY: "k" } }) // { PATH, HOME, ..., API_KEY: "k" }
 * ```
 */
export function buildChildEnv(options: ChildEnvOptions = {}): Record<string, string> {
  const source = options.source ?? process.env;
  const platform = options.platform ?? process.platform;
  const out: Record<string, string> = {};
  if (options.inheritEnv) {
    for (const [key, value] of Object.entries(source)) {
      if (value !== undefined) out[key] = value;
    }
  } else {
    const wanted = platform === "win32" ? [...BASE_ENV_VARS, ...WINDOWS_ENV_VARS] : BASE_ENV_VARS;
    for (const name of wanted) {
      const key = platform === "win32" ? findKeyIgnoringCase(source, name) : name;
      const value = key === undefined ? undefined : source[key];
      if (key !== undefined && value !== undefined) out[key] = value;
    }
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    // Windows names are case-insensitive: replace `Path` when the caller sets `PATH`.
    if (platform === "win32") {
      const existing = findKeyIgnoringCase(out, key);
      if (existing !== undefined) delete out[existing];
    }
    out[key] = value;
  }
  return out;
}

/**
 * Why a command could not be resolved: `COMMAND_NOT_FOUND` (nowhere found, errno `ENOENT`) or
 * `COMMAND_NOT_EXECUTABLE` (found, may not be executed: `EACCES`). `details` holds `command`
 * and, for a file that is not executable, `path`.
 */
export class CommandNotFoundError extends BridgeError {
  declare readonly code: "COMMAND_NOT_FOUND" | "COMMAND_NOT_EXECUTABLE";
  readonly command: string;
  /** The file that exists but may not be executed, for `COMMAND_NOT_EXECUTABLE`. */
  readonly path: string | undefined;
  /** The errno `execvp` would have failed with. */
  readonly errno: "ENOENT" | "EACCES";

  constructor(
    code: "COMMAND_NOT_FOUND" | "COMMAND_NOT_EXECUTABLE",
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & { details: { command: string; path?: string } },
  ) {
    super(code, message, options);
    this.name = "CommandNotFoundError";
    this.command = options.details.command;
    this.path = options.details.path;
    this.errno = code === "COMMAND_NOT_FOUND" ? "ENOENT" : "EACCES";
  }
}

export interface ResolveCommandOptions {
  /** Directory a relative command (one containing a slash) is resolved against. */
  cwd: string;
  /** The child's environment; its PATH (and PATHEXT on Windows) is searched. */
  env: Readonly<Record<string, string>>;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
}

/**
 * Resolves `command` to the absolute path of an executable file.
 *
 * - A command containing a path separator is taken relative to `cwd`; PATH is not searched.
 * - A bare name is looked up in the child's PATH, in order. Relative and empty PATH entries
 *   are skipped: they would make the result depend on the working directory.
 * - Like `execvp`, a match that exists but is not executable is remembered and reported as
 *   `EACCES` only if no executable match is found later in PATH.
 *
 * Rejects with {@link CommandNotFoundError}.
 */
export async function resolveCommand(command: string, options: ResolveCommandOptions): Promise<string> {
  const platform = options.platform ?? process.platform;
  const hasSeparator = command.includes("/") || (platform === "win32" && command.includes("\\"));
  const extensions = platform === "win32" ? windowsExtensions(command, options.env) : [""];
  const explicit = hasSeparator || isAbsolute(command);
  const bases = explicit
    ? [resolve(options.cwd, command)]
    : searchPath(options.env, platform).map((dir) => join(dir, command));

  let notExecutable: string | undefined;
  for (const base of bases) {
    for (const candidate of extensions.map((ext) => base + ext)) {
      const verdict = checkExecutable(candidate);
      if (verdict === "ok") return candidate;
      if (verdict === "not-executable" && notExecutable === undefined) notExecutable = candidate;
    }
  }
  if (notExecutable !== undefined) {
    throw new CommandNotFoundError("COMMAND_NOT_EXECUTABLE", `${command}: not executable (${notExecutable})`, {
      details: { command, path: notExecutable },
    });
  }
  throw new CommandNotFoundError("COMMAND_NOT_FOUND", `${command}: not found`, { details: { command } });
}

function searchPath(env: Readonly<Record<string, string>>, platform: NodeJS.Platform): string[] {
  const key = platform === "win32" ? findKeyIgnoringCase(env, "PATH") : "PATH";
  const value = key === undefined ? undefined : env[key];
  if (!value) return [];
  const sep = platform === "win32" ? ";" : ":";
  return value.split(sep).filter((dir) => dir !== "" && isAbsolute(dir));
}

function windowsExtensions(command: string, env: Readonly<Record<string, string>>): string[] {
  const key = findKeyIgnoringCase(env, "PATHEXT");
  const list = (key === undefined ? undefined : env[key]) ?? ".COM;.EXE;.BAT;.CMD";
  const exts = list.split(";").filter((e) => e !== "");
  // A command that already names its extension is tried as is first.
  const lower = command.toLowerCase();
  return exts.some((e) => lower.endsWith(e.toLowerCase())) ? ["", ...exts] : exts;
}

/** `fs.statSync`, or undefined where the path cannot be stat'ed. */
function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function checkExecutable(path: string): "ok" | "missing" | "not-executable" {
  const info = statOrUndefined(path);
  if (info === undefined || !info.isFile()) return "missing";
  try {
    accessSync(path, fsConstants.X_OK);
    return "ok";
  } catch {
    return "not-executable";
  }
}

function findKeyIgnoringCase(
  obj: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  if (Object.prototype.hasOwnProperty.call(obj, name)) return name;
  const upper = name.toUpperCase();
  return Object.keys(obj).find((k) => k.toUpperCase() === upper);
}

/**
 * True while any process is in process group `pgid` (POSIX). False on ESRCH, and also on
 * EPERM: a group we may not signal is not one we started.
 */
export function processGroupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when `dir` exists and is a directory (checked before spawning, for a clear error). */
export function isDirectory(dir: string): boolean {
  return statOrUndefined(dir)?.isDirectory() === true;
}
