/**
 * Runs commands inside a private network namespace, and keeps track of the process groups the
 * interop scripts start so that every one of them is ended, by id, however the script exits.
 *
 * Third-party test servers (the conformance suite's client scenarios, server-everything) bind
 * every interface. Inside a fresh namespace the only interface is a loopback that we bring up,
 * so nothing they open is reachable from outside this machine, and their ports cannot clash
 * with anything running outside.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** The `unshare` flags for a new network namespace: root needs no user namespace for it. */
function unshareFlags(): string[] {
  return process.getuid?.() === 0 ? ["-n"] : ["-r", "-n"];
}

/** Brings `lo` up, then replaces the shell with the command (same pid, same process group). */
const NETNS_SHELL = 'ip link set lo up && exec "$@"';

/**
 * Wraps `argv` so that it runs in a new network namespace whose only interface is `lo`, up.
 * `argv[0]` is resolved through PATH inside the namespace, as `exec` would.
 */
export function inNetns(argv: readonly string[]): { command: string; args: string[] } {
  if (argv.length === 0) throw new Error("inNetns: empty command");
  return { command: "unshare", args: [...unshareFlags(), "sh", "-c", NETNS_SHELL, "netns-sh", ...argv] };
}

/**
 * Throws (with what the system said) unless a network namespace with loopback up can be
 * created here. Needs `unshare` (util-linux) and `ip` (iproute2), and either root or
 * unprivileged user namespaces.
 */
export function assertNetnsAvailable(): void {
  const { command, args } = inNetns(["sh", "-c", "ip -o link show lo | grep -q UP"]);
  const r = spawnSync(command, args, { encoding: "utf8", timeout: 10_000 });
  if (r.error !== undefined || r.status !== 0) {
    const why = r.error?.message ?? (r.stderr.trim() || `exit code ${String(r.status)}`);
    throw new Error(
      `cannot create a private network namespace (${command} ${unshareFlags().join(" ")}; ip link set lo up): ${why}. ` +
        "The conformance client scenarios and server-everything bind every interface, so they only run inside one. " +
        "Needs util-linux unshare, iproute2 ip, and root or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1).",
    );
  }
}

/** A started process group: its leader's pid, its output so far, and how it ended. */
export interface Started {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** stdout and stderr, interleaved, capped at `outputLimit` characters (the tail is kept). */
  output(): string;
  /** Resolves once the leader has exited (and its stdout/stderr closed). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts processes as leaders of their own process groups and ends every group it started,
 * by id: SIGTERM, then SIGKILL after a grace period. `stopAll` is safe to call more than once
 * and is what the scripts call in `finally` and on SIGINT/SIGTERM.
 */
export class ProcessGroups {
  private readonly started: Started[] = [];

  private readonly outputLimit: number;

  constructor(outputLimit = 200_000) {
    this.outputLimit = outputLimit;
  }

  /**
   * Starts `command` as the leader of a new process group, stdin closed, output captured.
   * `forward` also copies its stdout and stderr to ours as they arrive.
   */
  start(name: string, command: string, args: readonly string[], options: SpawnOptions = {}, forward = false): Started {
    const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const keep = (chunk: Buffer): void => {
      out += chunk.toString("utf8");
      if (out.length > this.outputLimit) out = out.slice(out.length - this.outputLimit);
    };
    if (forward) {
      child.stdout?.on("data", (chunk: Buffer) => process.stdout.write(chunk));
      child.stderr?.on("data", (chunk: Buffer) => process.stderr.write(chunk));
    }
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once("error", (err) => {
        out += `\n[spawn error] ${err.message}\n`;
        resolve({ code: null, signal: null });
      });
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
    // A failed spawn has no pid; its `exited` reports the error.
    const entry: Started = { name, child, pid: child.pid ?? -1, output: () => out, exited };
    if (entry.pid > 0) this.started.push(entry);
    return entry;
  }

  /** Ends one group (and waits for its leader); a group already gone is fine. */
  async stop(entry: Started, graceMs = 2_000): Promise<void> {
    if (entry.pid <= 0) return;
    const i = this.started.indexOf(entry);
    if (i === -1) return; // already stopped: its pid may belong to someone else by now
    this.started.splice(i, 1);
    signalGroup(entry.pid, "SIGTERM");
    const timer = setTimeout(() => signalGroup(entry.pid, "SIGKILL"), graceMs);
    await entry.exited;
    clearTimeout(timer);
    // The leader is gone; anything it left in its group goes too.
    signalGroup(entry.pid, "SIGKILL");
    for (let i = 0; i < 40 && groupAlive(entry.pid); i++) await new Promise((r) => setTimeout(r, 25));
  }

  /** Ends every group started here, most recent first. */
  async stopAll(graceMs = 2_000): Promise<void> {
    for (const entry of [...this.started].reverse()) await this.stop(entry, graceMs);
  }

  /** Synchronous last resort (process `exit` handler): SIGKILL every group still known. */
  killAllNow(): void {
    for (const entry of this.started.splice(0)) signalGroup(entry.pid, "SIGKILL");
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Whether any live process (zombies do not count) is still in process group `pgid`. Reads
 * /proc, since `kill(-pgid, 0)` also succeeds for zombies, which linger where nothing reaps
 * orphans.
 */
export function groupAlive(pgid: number): boolean {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && fields[0] !== "X" && Number(fields[2]) === pgid) return true;
  }
  return false;
}

/**
 * A `ProcessGroups` that dies with the script: SIGINT/SIGTERM kill every group and exit 130,
 * and a plain exit kills whatever is left. Every script that starts peers begins with it.
 */
export function processGroupsForScript(): ProcessGroups {
  const groups = new ProcessGroups();
  const onSignal = (): void => {
    groups.killAllNow();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", () => groups.killAllNow());
  return groups;
}
