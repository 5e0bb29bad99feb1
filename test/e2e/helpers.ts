/** Shared pieces of the end-to-end tests: fixture command lines and process checks. */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { McpClient, type McpClientOptions } from "../../src/mcp/client.ts";
import { StdioClientTransport, type StdioClientOptions } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Options that run a fixture server with this Node (and the tsx loader where Node cannot strip types). */
export function fixture(file: string, args: string[] = [], extra: Partial<StdioClientOptions> = {}): StdioClientOptions {
  return {
    ...nodeModuleCommand(join(ROOT, "fixtures", "servers", file), args),
    cwd: ROOT,
    shutdownGraceMs: 500,
    ...extra,
  };
}

/**
 * True while a process with this pid exists and is not a zombie. (In containers whose init
 * never reaps orphans, a killed grandchild stays a zombie: dead, but still answering kill 0.)
 */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}

/**
 * Polls until `pid` is gone (a killed child is reaped by its parent a moment later); false
 * after `withinMs` (default 20 s: on a loaded machine a server stopping its own children can
 * take seconds; a process that truly outlives its parent still fails the test).
 */
export async function waitGone(pid: number, withinMs = 20_000): Promise<boolean> {
  for (let i = 0; i < withinMs / 25; i++) {
    if (!alive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/** Kills a pid if it is still there (test clean-up of last resort). */
export function reap(pid: number | undefined): void {
  if (pid !== undefined && alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** A fixture server as a child spoken to in raw JSON lines: for what McpClient does not send. */
export interface RawStdioChild {
  send(message: object): void;
  /** The next line the server wrote, parsed (null once stdout ended). */
  next(): Promise<Record<string, any>>;
  /** Ends stdin and resolves with the exit code. */
  end(): Promise<number | null>;
  /** SIGKILLs the child if it is still running, and waits for it: put it in a `finally`. */
  kill(): Promise<void>;
}

/** Spawns `fixtures/servers/<file>` with stdin and stdout as pipes (stderr inherited). */
export function rawStdioChild(file: string): RawStdioChild {
  const cmd = nodeModuleCommand(join(ROOT, "fixtures", "servers", file));
  const child = spawn(cmd.command, cmd.args, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    send: (m) => void child.stdin.write(`${JSON.stringify(m)}\n`),
    next: async () => JSON.parse(((await lines.next()).value as string | undefined) ?? "null"),
    end: () => {
      child.stdin.end();
      return exited;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Spawns a fixture and connects a client to it; the caller closes the client. */
export async function connectFixture(
  file: string,
  args: string[] = [],
  clientOptions: McpClientOptions = {},
  transportExtra: Partial<StdioClientOptions> = {},
): Promise<{ client: McpClient; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport(fixture(file, args, transportExtra));
  const client = new McpClient(clientOptions);
  try {
    await client.connect(transport);
  } catch (err) {
    reap(transport.pid);
    throw err;
  }
  return { client, transport };
}

/** Pids of every live process below `pid` (children, grandchildren, ...), read from /proc (Linux). */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name (which may hold spaces): state, ppid, ...
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    const next = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found.filter((p) => alive(p));
}
