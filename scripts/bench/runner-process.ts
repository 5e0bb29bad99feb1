/**
 * The parent's handle on one client runner (scripts/bench/client-runner.ts): starts it,
 * sends one command at a time and waits for its answer, and makes sure it ends.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { benchEnv } from "./env.ts";
import type { RunnerAnswers, RunnerCommand, RunnerConfig } from "./types.ts";

/** A command that has not answered after this long means the runner is stuck. */
const COMMAND_TIMEOUT_MS = 120_000;
const EXIT_WAIT_MS = 5000;

type Reply = { ok: true; value: unknown } | { ok: false; error: string };

export class RunnerProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly replies: AsyncIterator<string>;
  private readonly exited: Promise<void>;
  private busy = false;
  readonly config: RunnerConfig;

  /**
   * @param work the transpiled tree holding scripts/bench/client-runner.js
   * @param nodeFlags flags for node itself (e.g. `--cpu-prof`)
   * @param node the Node binary to run it with (default: this process's)
   */
  constructor(work: string, config: RunnerConfig, nodeFlags: readonly string[] = [], node: string = process.execPath) {
    this.config = config;
    const script = join(work, "scripts", "bench", "client-runner.js");
    const flags = ["--expose-gc", ...nodeFlags];
    // The runner's servers inherit this environment: both sides start every process with it.
    this.child = spawn(node, [...flags, script, JSON.stringify(config)], { stdio: ["pipe", "pipe", "pipe"], env: benchEnv() });
    this.child.stderr.pipe(process.stderr, { end: false });
    // EPIPE if the runner died; the next ask() reports that it exited.
    this.child.stdin.on("error", () => undefined);
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.replies = createInterface({ input: this.child.stdout, crlfDelay: Number.POSITIVE_INFINITY })[Symbol.asyncIterator]();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends one command and resolves with its answer; rejects with the runner's error. */
  async ask<K extends RunnerCommand["cmd"]>(command: Extract<RunnerCommand, { cmd: K }>): Promise<RunnerAnswers[K]> {
    if (this.busy) throw new Error("RunnerProcess.ask: one command at a time");
    this.busy = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      this.child.stdin.write(`${JSON.stringify(command)}\n`);
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${this.config.mode} runner: "${command.cmd}" took over ${COMMAND_TIMEOUT_MS} ms`)), COMMAND_TIMEOUT_MS);
      });
      const next = await Promise.race([this.replies.next(), timeout]);
      if (next.done) throw new Error(`${this.config.mode} runner exited during "${command.cmd}"`);
      const reply = JSON.parse(next.value) as Reply;
      if (!reply.ok) throw new Error(`${this.config.mode} runner: "${command.cmd}" failed: ${reply.error}`);
      return reply.value as RunnerAnswers[K];
    } finally {
      clearTimeout(timer);
      this.busy = false;
    }
  }

  /** Asks the runner to close its servers and exit; resolves with the servers' pids. */
  async quit(): Promise<number[]> {
    const { serverPids } = await this.ask({ cmd: "quit" });
    this.child.stdin.end();
    await this.waitForExit();
    return serverPids;
  }

  /** Ends the runner whatever its state: stdin EOF (it then closes its servers), then SIGKILL. */
  async stop(): Promise<void> {
    this.child.stdin.end();
    await this.waitForExit();
  }

  private async waitForExit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const timer = setTimeout(() => this.child.kill("SIGKILL"), EXIT_WAIT_MS);
    await this.exited;
    clearTimeout(timer);
  }
}
