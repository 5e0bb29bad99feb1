/**
 * Which executable a stdio server may start, by trust level. Run before spawning; the stdio
 * transport then spawns the absolute path returned here (never through a shell, so shell
 * metacharacters in the command or arguments mean nothing and are not checked).
 *
 * - `untrusted` (the default): the command is an absolute path, or a bare name on the
 *   allow-list; a relative path such as `./bin/server` is refused, since its meaning depends
 *   on the working directory. PATH is searched only for allow-listed names.
 * - `trusted`: anything `resolveCommand` accepts, PATH lookup included (editors send `npx`).
 *
 * Either way the result is a regular file we may execute, checked now.
 */
import { constants as fsConstants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import type { McpServerConfig } from "../config/types.ts";
import { buildChildEnv, CommandNotFoundError, resolveCommand } from "../transport/spawn-env.ts";
import { PolicyError, serverLabel } from "./policy.ts";

export interface CheckCommandOptions {
  /**
   * What `untrusted` servers may name besides absolute paths. A bare name (`node`) allows that
   * name to be looked up on PATH. An absolute path (`/usr/bin/node`) allows a bare name only
   * when PATH lookup lands exactly on that file.
   */
  allowList?: readonly string[];
  /** Directory a relative command of a `trusted` server is resolved against. Default `config.cwd`, then `process.cwd()`. */
  cwd?: string;
  /** The child's environment, whose PATH is searched. Default `buildChildEnv()` (the minimal base). */
  env?: Readonly<Record<string, string>>;
}

/**
 * Checks `config.command` against the server's trust level and resolves it.
 * Resolves to the absolute path to spawn; rejects with {@link PolicyError}
 * (`INVALID_COMMAND`, `COMMAND_NOT_ALLOWED`, `COMMAND_NOT_FOUND`, `COMMAND_NOT_EXECUTABLE`).
 *
 * ```ts
 * const file = await checkCommand(config, { allowList: settings.allowCommands });
 * ```
 */
export async function checkCommand(config: McpServerConfig, options: CheckCommandOptions = {}): Promise<string> {
  const server = config.name;
  const label = serverLabel(server);
  const command = config.command;
  if (command === undefined || command === "") {
    throw new PolicyError("INVALID_COMMAND", `${label}: no command configured; set "command" to the server's executable`, { details: { server } });
  }
  if (command.includes("\0")) {
    throw new PolicyError("INVALID_COMMAND", `${label}: the command contains a NUL byte; remove it`, { details: { server } });
  }
  const badArg = (config.args ?? []).findIndex((arg) => arg.includes("\0"));
  if (badArg !== -1) {
    // The index only: argument values may be secrets.
    throw new PolicyError("INVALID_COMMAND", `${label}: argument ${badArg} contains a NUL byte; remove it`, {
      details: { server, argIndex: badArg },
    });
  }

  const shown = JSON.stringify(command);
  const env = options.env ?? buildChildEnv();
  const cwd = options.cwd ?? config.cwd ?? process.cwd();
  const trust = config.trust ?? "untrusted";

  if (trust === "trusted") return resolveOrExplain(command, { cwd, env }, server);

  if (isAbsolute(command)) {
    await checkExecutableFile(command, server);
    return command;
  }
  if (hasSeparator(command)) {
    throw new PolicyError(
      "COMMAND_NOT_ALLOWED",
      `${label} is untrusted: command ${shown} is a relative path; use an absolute path, or mark the server trusted`,
      { details: { server, command } },
    );
  }
  const allowList = options.allowList ?? [];
  const notAllowed = (): PolicyError =>
    new PolicyError(
      "COMMAND_NOT_ALLOWED",
      `${label} is untrusted: command ${shown} must be an absolute path or listed in allowCommands; ` +
        `mark the server trusted to allow PATH lookup`,
      { details: { server, command } },
    );
  const byName = allowList.includes(command);
  const byPath = allowList.filter((entry) => isAbsolute(entry));
  if (!byName && byPath.length === 0) throw notAllowed();
  let resolved: string;
  try {
    resolved = await resolveOrExplain(command, { cwd, env }, server);
  } catch (err) {
    // A name allowed only through a path entry that PATH cannot find is simply not allowed.
    if (!byName) throw notAllowed();
    throw err;
  }
  if (!byName && !byPath.includes(resolved)) throw notAllowed();
  return resolved;
}

async function resolveOrExplain(
  command: string,
  options: { cwd: string; env: Readonly<Record<string, string>> },
  server: string,
): Promise<string> {
  try {
    return await resolveCommand(command, options);
  } catch (err) {
    if (!(err instanceof CommandNotFoundError)) throw err;
    const label = serverLabel(server);
    const shown = JSON.stringify(command);
    if (err.code === "COMMAND_NOT_EXECUTABLE") {
      throw new PolicyError(
        "COMMAND_NOT_EXECUTABLE",
        `${label}: command ${shown} (${err.path ?? command}) is not executable; fix its permissions or the configured command`,
        { cause: err, details: { server, command, path: err.path } },
      );
    }
    const hint = hasSeparator(command) || isAbsolute(command) ? "check the path" : "is it on PATH? or give an absolute path";
    throw new PolicyError("COMMAND_NOT_FOUND", `${label}: command ${shown} not found (${hint})`, {
      cause: err,
      details: { server, command },
    });
  }
}

/** Exists, is a regular file (symlinks followed), and may be executed by us. */
async function checkExecutableFile(path: string, server: string): Promise<void> {
  const label = serverLabel(server);
  const shown = JSON.stringify(path);
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (err) {
    throw new PolicyError("COMMAND_NOT_FOUND", `${label}: command ${shown} does not exist; check the configured path`, {
      cause: err,
      details: { server, command: path },
    });
  }
  if (!isFile) {
    throw new PolicyError("COMMAND_NOT_FOUND", `${label}: command ${shown} is not a regular file; point "command" at the executable`, {
      details: { server, command: path },
    });
  }
  try {
    await access(path, fsConstants.X_OK);
  } catch (err) {
    throw new PolicyError("COMMAND_NOT_EXECUTABLE", `${label}: command ${shown} is not executable; fix its permissions (chmod +x)`, {
      cause: err,
      details: { server, command: path, path },
    });
  }
}

function hasSeparator(command: string): boolean {
  return command.includes("/") || (process.platform === "win32" && command.includes("\\"));
}
