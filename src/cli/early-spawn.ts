/**
 * The stdio server of a command (`inspect`, `call`, `read`, `prompt`, `complete`) against
 * `-- <command> [args...]`, spawned by `main` as soon as the arguments are parsed: before the
 * command's own modules (secret resolution, redaction, output, the MCP client) load, as a
 * hand-written client spawns first thing (docs/decisions.md 155). Until then the CLI spawned
 * it from `withServer` (open.ts), after some 90 KB of modules had loaded.
 *
 * Nothing here decides what runs: `withServer` still works out the server's config as always
 * (secrets resolved) and takes this process only if that config asks for exactly what was
 * spawned; otherwise it stops this one and spawns its own. A command line whose `--env` holds
 * a `secret://` reference, or that names its server any other way, is not spawned early.
 */
import type { McpServerConfig } from "../config/types.ts";
import type { ParsedArgs } from "./args.ts";
import { transportFor } from "./connect.ts";
import { EarlyStartedTransport } from "./early-start.ts";
import { trackClient } from "./open-clients.ts";
import { checkServerCommand, type ServerCommand } from "./server-command-args.ts";
import { commandServer } from "./target.ts";

/** How many `--verbose` stderr lines are held until `withServer` prints them; the oldest go first. */
const HELD_STDERR_LINES = 1000;

/** A server spawned by {@link spawnEarly}. */
export interface EarlySpawn {
  /** The started transport; closing it stops the server (idempotent). */
  transport: EarlyStartedTransport;
  /** True when `config` (resolved) and `inheritEnv` ask for exactly the process spawned. */
  matches(config: McpServerConfig, inheritEnv: boolean): boolean;
  /** With `--verbose`: where the server's stderr lines go from now on; the ones held go first. */
  stderrTo(sink: (line: string) => void): void;
}

/** Flags that name the server some other way, or that the command's own path rejects. */
const NOT_EARLY_FLAGS = ["config", "server", "url", "transport", "header"];

/**
 * Spawns the server of `command`'s `-- <server command>` now, or returns undefined when the
 * command line is not that simple case or fails one of the command's checks (the command's
 * own path then reports the usage error). Resolves once the process runs. Never rejects: a
 * failed spawn is reported by the transport's `start()`, as for a server spawned later.
 */
export async function spawnEarly(command: ServerCommand, args: ParsedArgs): Promise<EarlySpawn | undefined> {
  if (args.command.length === 0 || NOT_EARLY_FLAGS.some((f) => args.flags.has(f))) return undefined;
  let spawned: McpServerConfig;
  try {
    // The command's own checks first: a usage error still starts nothing.
    checkServerCommand(command, args);
    spawned = commandServer(args);
  } catch {
    return undefined;
  }
  if (Object.values(spawned.env ?? {}).some((value) => value.includes("secret:"))) return undefined;
  const inheritEnv = args.flags.has("inherit-env");
  const held: string[] = [];
  let sink: ((line: string) => void) | undefined;
  const onStderr = (line: string): void => {
    if (sink !== undefined) return sink(line);
    if (held.push(line) > HELD_STDERR_LINES) held.shift();
  };
  const inner = await transportFor(spawned, { inheritEnv, onStderr: args.flags.has("verbose") ? onStderr : undefined });
  const transport = trackClient(new EarlyStartedTransport(inner));
  // Settled when the process runs (or could not be started): only then may the command's
  // modules load, or loading them delays the spawn by as long.
  await transport.settled;
  return {
    transport,
    matches: (config, inherit) => inherit === inheritEnv && sameStdioServer(config, spawned),
    stderrTo(to) {
      sink = to;
      for (const line of held.splice(0)) to(line);
    },
  };
}

/** Same command, arguments, environment, working directory and name. */
function sameStdioServer(a: McpServerConfig, b: McpServerConfig): boolean {
  const env = (c: McpServerConfig): string => JSON.stringify(Object.entries(c.env ?? {}));
  return (
    a.transport === "stdio" &&
    a.command === b.command &&
    a.name === b.name &&
    a.cwd === b.cwd &&
    JSON.stringify(a.args ?? []) === JSON.stringify(b.args ?? []) &&
    env(a) === env(b)
  );
}
