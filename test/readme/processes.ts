/**
 * Running a README example as a user would (`node example.mts` from the repository root, with
 * `--import tsx` where Node cannot strip types) and checking that it leaves no process behind.
 * The directory of this Node comes first in the example's `PATH`, so an example that runs
 * `node` gets the Node the tests run on.
 *
 * Every process of one run is found by a marker in its environment: the example gets its own
 * `TMPDIR`, a variable that the minimal child environment of the stdio transport passes on
 * (BASE_ENV_VARS), so the servers it spawns, and theirs, carry it too, whichever process
 * group or session they put themselves in.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { encodeLine, LineDecoder } from "../../src/jsonrpc/ndjson.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { alive } from "../e2e/helpers.ts";

/** Longest a README example may take before the test gives up on it and kills it. */
export const EXAMPLE_DEADLINE_MS = 60_000;

export interface ExampleExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** One example process: its output, a line-based JSON-RPC client for stdio examples, and its exit. */
export class ExampleProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The TMPDIR only this run's processes have. */
  readonly marker: string;
  stdout = "";
  stderr = "";
  readonly exited: Promise<ExampleExit>;
  private readonly decoder = new LineDecoder();
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private deadline: ReturnType<typeof setTimeout>;

  constructor(file: string, root: string) {
    this.marker = mkdtempSync(join(tmpdir(), "mcp-bridge-readme-"));
    const path = [dirname(process.execPath), process.env.PATH ?? "/usr/bin:/bin"].join(delimiter);
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, TMPDIR: this.marker };
    delete env.NODE_TEST_CONTEXT;
    const { command, args } = nodeModuleCommand(file);
    // Its own process group, so that a test that gives up can kill whatever it left.
    this.child = spawn(command, args, { cwd: root, env, detached: true });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
      for (const line of this.decoder.push(chunk)) if (line.ok) this.deliver(line.value);
    });
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => resolve({ code, signal, stderr: this.stderr }));
    });
    this.deadline = setTimeout(() => this.kill(), EXAMPLE_DEADLINE_MS);
    void this.exited.then(() => {
      clearTimeout(this.deadline);
      for (const w of this.waiting.values()) w.reject(new Error(`the example exited; stderr: ${this.stderr}`));
      this.waiting.clear();
    });
  }

  /** Sends a JSON-RPC request on its stdin and resolves with the result (rejects on an error). */
  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    const answer = new Promise<unknown>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.child.stdin.write(encodeLine({ jsonrpc: "2.0", id, method, params }));
    return answer;
  }

  notify(method: string, params?: Record<string, unknown>): void {
    this.child.stdin.write(encodeLine({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }));
  }

  /** Ends its stdin (the editor or client went away) and waits for it to exit. */
  async endInput(): Promise<ExampleExit> {
    this.child.stdin.end();
    return this.exited;
  }

  /** Last resort: SIGKILL to its process group. */
  kill(): void {
    if (this.child.pid !== undefined && alive(this.child.pid)) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  private deliver(message: unknown): void {
    const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: { message?: string } };
    if (typeof m.method === "string") {
      // A request from the example (none is expected): refuse it rather than leave it waiting.
      if (m.id !== undefined) this.child.stdin.write(encodeLine({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not supported by the README test" } }));
      return;
    }
    const w = typeof m.id === "number" ? this.waiting.get(m.id) : undefined;
    if (w === undefined) return;
    this.waiting.delete(m.id as number);
    if (m.error !== undefined) w.reject(new Error(`error response: ${JSON.stringify(m.error)}`));
    else w.resolve(m.result);
  }
}

/** Pids of live processes whose environment holds `TMPDIR=<marker>` (Linux: /proc). */
export function processesWithMarker(marker: string): number[] {
  const entry = `TMPDIR=${marker}`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${name}/environ`, "latin1");
    } catch {
      continue; // gone meanwhile, or not ours
    }
    if (environ.split("\0").includes(entry) && alive(Number(name))) found.push(Number(name));
  }
  return found;
}

/**
 * Waits (bounded) until no process of the run is left; kills and names any that stay. Where
 * there is no /proc, only the example process itself can be checked.
 */
export async function leftovers(run: ExampleProcess): Promise<string[]> {
  if (!existsSync("/proc/self/environ")) return alive(run.child.pid) ? [`the example itself (pid ${run.child.pid})`] : [];
  let pids: number[] = [];
  for (let i = 0; i < 200; i++) {
    pids = processesWithMarker(run.marker);
    if (pids.length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const described = pids.map((pid) => {
    let cmd = "?";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      // gone meanwhile
    }
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
    return `${pid}: ${cmd}`;
  });
  return described;
}
