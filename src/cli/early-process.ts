/**
 * The stdio server of a command (`inspect`, `call`, `read`, `prompt`, `complete`) against
 * `-- <command> [args...]`, spawned by `main` as soon as the arguments are parsed: before the
 * command's own modules (secret resolution, redaction, output, the MCP client) load, as a
 * hand-written client spawns first thing (docs/decisions.md 155). This module holds only what
 * the spawn needs (the argument checks, the command line, the spawn itself), so that a start
 * loads little before it; the transport that takes the process over loads after
 * (early-spawn.ts, docs/decisions.md 177).
 *
 * A command line whose `--env` holds a `secret://` reference, or that names its server any
 * other way, is not spawned early.
 */
import type { McpServerConfig } from "../config/types.ts";
import { startProcess, type StartedProcess } from "../transport/stdio-spawn.ts";
import type { ParsedArgs } from "./args.ts";
import { checkServerCommand, type ServerCommand } from "./server-command-args.ts";
import { commandServer } from "./target.ts";

/** A process spawned by {@link startEarly}, and the config and environment choice it was spawned from. */
export interface EarlyProcess {
  process: StartedProcess;
  config: McpServerConfig;
  inheritEnv: boolean;
}

/** Flags that name the server some other way, or that the command's own path rejects. */
const NOT_EARLY_FLAGS = ["config", "server", "url", "transport", "header"];

/**
 * Spawns the server of `command`'s `-- <server command>` now, or returns undefined when the
 * command line is not that simple case, fails one of the command's checks (the command's own
 * path then reports the usage error) or its command cannot be found (the command's own spawn
 * then reports it). Never rejects.
 */
export async function startEarly(command: ServerCommand, args: ParsedArgs): Promise<EarlyProcess | undefined> {
  if (args.command.length === 0 || NOT_EARLY_FLAGS.some((f) => args.flags.has(f))) return undefined;
  try {
    // The command's own checks first: a usage error still starts nothing.
    checkServerCommand(command, args);
    const config = commandServer(args);
    if (Object.values(config.env ?? {}).some((value) => value.includes("secret:"))) return undefined;
    const inheritEnv = args.flags.has("inherit-env");
    const spawned = await startProcess({ command: config.command ?? "", args: config.args, cwd: config.cwd, env: config.env, inheritEnv });
    return spawned === undefined ? undefined : { process: spawned, config, inheritEnv };
  } catch {
    return undefined;
  }
}
