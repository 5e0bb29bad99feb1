/**
 * The transport over the stdio server `main` spawned early (early-process.ts), loaded right
 * after the spawn: the stdio transport, the ndjson framing and the rest load while the server
 * boots (docs/decisions.md 155, 177).
 *
 * Nothing here decides what runs: `withServer` still works out the server's config as always
 * (secrets resolved) and takes this process only if that config asks for exactly what was
 * spawned; otherwise it stops this one and spawns its own.
 */
import type { McpServerConfig } from "../config/types.ts";
import type { ParsedArgs } from "./args.ts";
import { transportFor } from "./connect.ts";
import type { EarlyProcess } from "./early-process.ts";
import { EarlyStartedTransport } from "./early-start.ts";
import { trackClient } from "./open-clients.ts";

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

/**
 * Takes over the process `main` spawned for `args` with a started transport. Resolves once the
 * process runs; never rejects: a failed spawn is reported by the transport's `start()`, as
 * for a server spawned later.
 */
export async function adoptEarly(early: EarlyProcess, args: ParsedArgs): Promise<EarlySpawn> {
  const { config: spawned, inheritEnv } = early;
  const held: string[] = [];
  let sink: ((line: string) => void) | undefined;
  const onStderr = (line: string): void => {
    if (sink !== undefined) return sink(line);
    if (held.push(line) > HELD_STDERR_LINES) held.shift();
  };
  const options = { inheritEnv, onStderr: args.flags.has("verbose") ? onStderr : undefined, process: early.process };
  const inner = await transportFor(spawned, options);
  const transport = trackClient(new EarlyStartedTransport(inner, early.process.startedAt));
  // Settled once the process runs or could not start: the command takes it over in a known state.
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
