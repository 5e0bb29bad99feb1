/**
 * The option and counter types of {@link StdioClientTransport}, apart from its code. Types only:
 * erased at run time, so importing the transport loads no extra module for them.
 */
import type { StartedProcess } from "./stdio-spawn.ts";

export interface StdioClientTransportOptions {
  /** Executable: a bare name (looked up in the child's PATH) or a path (relative to `cwd`). */
  command: string;
  args?: readonly string[];
  /** Working directory of the child. Default `process.cwd()`. */
  cwd?: string;
  /** Variables set for the child on top of the minimal base. */
  env?: Readonly<Record<string, string>>;
  /** Pass our whole environment. Default false: only the minimal base plus `env`. */
  inheritEnv?: boolean;
  /** Largest stdout line accepted, in bytes. Default 32 MiB. */
  maxLineBytes?: number;
  /** Each stderr line of the child (long lines arrive in pieces of at most 8 KiB). */
  onStderr?: (line: string) => void;
  /** Diagnostics, such as ignored non-JSON lines on stdout. */
  onLog?: (message: string) => void;
  /** Each of the two shutdown waits (after closing stdin, after SIGTERM). Default 2000 ms. */
  shutdownGraceMs?: number;
  /** Server name used in error messages. Default: the command's base name. */
  name?: string;
  /** Size of the stderr ring buffer. Default 64 KiB. */
  stderrBufferBytes?: number;
  /**
   * A process already started with `startProcess` (transport/stdio-spawn.ts) for this same
   * command: `start()` takes it over instead of spawning, and reports its failure to start or
   * an exit that came meanwhile as for a process of its own. `command` still names it.
   */
  process?: StartedProcess;
}

/** @deprecated Renamed {@link StdioClientTransportOptions}; this alias goes in the next release. */
export type StdioClientOptions = StdioClientTransportOptions;

/** Counters kept by a {@link StdioClientTransport}. */
export interface StdioClientStats {
  messagesReceived: number;
  /** stdout lines that were not JSON or not UTF-8; logged and skipped. */
  junkLines: number;
  /** stdout lines over `maxLineBytes`; reported to `onerror`. */
  tooLongLines: number;
  stderrBytes: number;
}
