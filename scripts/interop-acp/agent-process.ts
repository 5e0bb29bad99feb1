/**
 * Our reference agent (`mcp-bridge acp-agent`) as a real child process, with its stdio
 * exposed as the byte streams the ACP SDK's `ndJsonStream` takes, and a tee on both: every
 * line the agent writes is parsed here, independently of the SDK, before the SDK sees it.
 * That raw record is what the schema check reads.
 *
 * The agent logs each stdio MCP server's pid to stderr (`server "local" ready (pid 123)`);
 * each such server leads its own process group. `killEverything` SIGKILLs the agent's group
 * and every logged server's group, by id, and is safe to call at any time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LineDecoder } from "../../src/jsonrpc/ndjson.ts";
import { ROOT } from "../conformance.ts";
import { groupAlive } from "../netns.ts";
import type { CapturedLine } from "./schema-check.ts";

export interface AgentProcess {
  readonly pid: number;
  /** For the SDK: `ndJsonStream(agent.input, agent.output)`. */
  readonly input: WritableStream<Uint8Array>;
  readonly output: ReadableStream<Uint8Array>;
  /** Every line the agent wrote, in order. */
  readonly received: CapturedLine[];
  /** Every message the editor wrote, in order. */
  readonly sent: unknown[];
  readonly stderr: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Pids the agent logged for the stdio server `name`, oldest first. */
  pidsOf(name: string): number[];
  /** Every stdio server pid the agent logged. */
  allServerPids(): number[];
  /** Closes the agent's stdin (an editor going away). */
  endInput(): void;
  /** SIGKILLs the agent's process group and every logged server's. Synchronous, never throws. */
  killEverything(): void;
}

const TSX = import.meta.resolve("tsx");

/** An ACP stdio `mcpServers` entry that runs a fixture server of ours with the tsx loader. */
export function fixtureServer(name: string, file: string, flags: string[] = []): { name: string; command: string; args: string[]; env: { name: string; value: string }[] } {
  return { name, command: process.execPath, args: ["--import", TSX, join(ROOT, "fixtures", "servers", file), ...flags], env: [] };
}

/** Starts `mcp-bridge acp-agent` with `args`, as the leader of its own process group. */
export function startAgentProcess(args: string[] = []): AgentProcess {
  const child: ChildProcess = spawn(process.execPath, ["--import", TSX, join(ROOT, "src", "cli", "main.ts"), "acp-agent", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid ?? -1;
  const { stdin, stdout, stderr: errStream } = child;
  if (pid <= 0 || stdin === null || stdout === null || errStream === null) throw new Error("could not start mcp-bridge acp-agent");
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("error", () => resolve({ code: null, signal: null }));
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  // Writes after the agent died fail with EPIPE; the steps notice the death on their own.
  stdin.on("error", () => undefined);

  const stderr: string[] = [];
  let partial = "";
  errStream.setEncoding("utf8");
  errStream.on("data", (text: string) => {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    stderr.push(...lines);
  });

  const received: CapturedLine[] = [];
  const fromAgent = new LineDecoder();
  const output = new ReadableStream<Uint8Array>({
    start(controller) {
      stdout.on("data", (chunk: Buffer) => {
        for (const line of fromAgent.push(new Uint8Array(chunk))) {
          received.push(line.ok ? { index: received.length, value: line.value } : { index: received.length, value: undefined, error: line.error.message });
        }
        controller.enqueue(new Uint8Array(chunk));
      });
      stdout.once("end", () => {
        try {
          controller.close();
        } catch {
          // already closed by a cancel
        }
      });
    },
  });

  const sent: unknown[] = [];
  const fromEditor = new LineDecoder();
  const input = new WritableStream<Uint8Array>({
    write(chunk) {
      for (const line of fromEditor.push(chunk.slice())) if (line.ok) sent.push(line.value);
      return new Promise<void>((resolve, reject) => stdin.write(chunk, (err) => (err ? reject(err) : resolve())));
    },
    close() {
      stdin.end();
    },
    abort() {
      stdin.destroy();
    },
  });

  const pidsOf = (name: string): number[] =>
    stderr.flatMap((line) => {
      const m = /server "([^"]+)" ready \(pid (\d+)\)/.exec(line);
      return m !== null && m[1] === name ? [Number(m[2])] : [];
    });
  const allServerPids = (): number[] =>
    stderr.flatMap((line) => {
      const m = /server "[^"]+" ready \(pid (\d+)\)/.exec(line);
      return m === null ? [] : [Number(m[1])];
    });

  return {
    pid,
    input,
    output,
    received,
    sent,
    stderr,
    exited,
    pidsOf,
    allServerPids,
    endInput: () => {
      if (!stdin.writableEnded) stdin.end();
    },
    killEverything: () => {
      for (const p of [pid, ...allServerPids()]) if (running(p)) killGroup(p);
    },
  };
}

/**
 * Whether `pid`, or anything in the process group it leads, is still running. Zombies count
 * as dead (nothing may be left to reap them).
 */
export function running(pid: number): boolean {
  return processAlive(pid) || groupAlive(pid);
}

function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function killGroup(pid: number): void {
  if (pid <= 0) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // ESRCH: already gone
    }
  }
}
