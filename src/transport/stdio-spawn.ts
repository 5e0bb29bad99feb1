/**
 * Starting a stdio server's process apart from the transport that talks to it. A caller in a
 * hurry (the CLI, which spawns before it loads its client: docs/decisions.md 177) starts the
 * process first and hands it to a `StdioClientTransport` later, through the `process` option.
 * The transport spawns through this same function, so both ways start the same process: no
 * shell, the command resolved through the child's PATH, the minimal environment unless
 * `inheritEnv`, and the child leading its own process group.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { buildChildEnv, isDirectory, resolveCommand } from "./spawn-env.ts";
import type { StdioClientTransportOptions } from "./stdio-client-types.ts";

const IS_WINDOWS = process.platform === "win32";

/** What to run: the spawn fields of `StdioClientTransportOptions`, with their meaning there. */
export type SpawnTarget = Pick<StdioClientTransportOptions, "command" | "args" | "cwd" | "env" | "inheritEnv">;

/** How a process exited: its code, or the signal that ended it. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A process {@link startProcess} spawned. Until a transport takes it over, what it writes waits
 * in its pipes (nothing is read, so nothing is lost) and its events are recorded here.
 */
export interface StartedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The absolute path the command resolved to. */
  readonly resolvedCommand: string;
  /** When it was spawned (`process.hrtime.bigint()`). */
  readonly startedAt: bigint;
  /** Settles when the process runs (with undefined) or could not be started (with the error). Never rejects. */
  readonly running: Promise<Error | undefined>;
  /** How it exited, if it did before anyone else listened. */
  readonly exit: ProcessExit | undefined;
}

/**
 * Spawns `target` now, or returns undefined when `cancelled()` says so once the command was
 * looked up (a transport closed meanwhile). Rejects with the plain cause when the working
 * directory is missing, the command is not found (`CommandNotFoundError`) or `spawn` throws;
 * a failure the OS reports after the call (ENOENT, EACCES) comes through
 * {@link StartedProcess.running}.
 */
export async function startProcess(target: SpawnTarget, cancelled?: () => boolean): Promise<StartedProcess | undefined> {
  const cwd = target.cwd ?? process.cwd();
  const env = buildChildEnv({ env: target.env, inheritEnv: target.inheritEnv });
  if (!isDirectory(cwd)) throw new Error(`working directory "${cwd}" does not exist`);
  const resolvedCommand = await resolveCommand(target.command, { cwd, env });
  if (cancelled?.() === true) return undefined;
  // Loaded on first spawn, not at import: it is a large module that programs importing the
  // library for other transports never need. Synchronously: between an `await import()` and
  // the spawn, the event loop ran whatever else was queued (docs/decisions.md 155).
  const { spawn } = process.getBuiltinModule("node:child_process");
  const startedAt = process.hrtime.bigint();
  const child = spawn(resolvedCommand, target.args ?? [], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    shell: false,
    detached: !IS_WINDOWS,
    windowsHide: true,
  });
  let exit: ProcessExit | undefined;
  child.once("exit", (code, signal) => {
    exit = { code, signal };
  });
  return {
    child,
    resolvedCommand,
    startedAt,
    running: new Promise((resolve) => {
      child.once("spawn", () => resolve(undefined));
      // Stays attached: an 'error' event with no listener would throw.
      child.on("error", (err) => resolve(err));
    }),
    get exit() {
      return exit;
    },
  };
}
