/**
 * The client side of the MCP stdio transport: spawns a server as a child process and speaks
 * ndjson over its stdin/stdout.
 *
 * Security-relevant choices, all on purpose:
 * - never a shell: the command is resolved to an absolute path through the *child's* PATH and
 *   spawned directly with an argument vector;
 * - a minimal environment unless `inheritEnv` is set (see {@link buildChildEnv});
 * - the child leads its own process group, so shutdown reaches grandchildren (`npx`, `uvx`);
 * - stderr is kept in a bounded ring buffer and never read as protocol or as an error signal.
 */
import type { ChildProcess } from "node:child_process";
import { basename } from "node:path";
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import { encodeMessage, type JsonRpcMessage } from "../jsonrpc/message.ts";
import { LineDecoder, type DecodedLine } from "../jsonrpc/ndjson.ts";
import { TransportLifecycle } from "./lifecycle.ts";
import { settlesWithin } from "../util/deadline.ts";
import { notNonEmptyString } from "../util/object.ts";
import { ByteRing, DEFAULT_RING_BYTES, lastLines, TextLineSplitter } from "./ring-buffer.ts";
import { CommandNotFoundError, processGroupExists } from "./spawn-env.ts";
import { startProcess, type StartedProcess } from "./stdio-spawn.ts";
import { TickCork } from "./tick-cork.ts";
import type { StdioClientTransportOptions, StdioClientStats } from "./stdio-client-types.ts";
import type { Transport } from "./transport.ts";

export type { StdioClientTransportOptions, StdioClientOptions, StdioClientStats } from "./stdio-client-types.ts";
export { startProcess, type ProcessExit, type SpawnTarget, type StartedProcess } from "./stdio-spawn.ts";

const DEFAULT_GRACE_MS = 2000;
const STDERR_LINE_CHARS = 8192;
const REASON_STDERR_LINES = 10;
const REASON_STDERR_CHARS = 2048;
const GROUP_POLL_MS = 50;
const IS_WINDOWS = process.platform === "win32";

/**
 * Spawns an MCP server and exchanges newline-delimited JSON with it.
 *
 * ```ts
 * const t = new StdioClientTransport({ command: "npx", args: ["-y", "some-server"], name: "fs" });
 * t.onmessage = (m) => console.log(m);
 * await t.start();
 * await t.send({ jsonrpc: "2.0", id: 1, method: "ping" });
 * await t.close();
 * ```
 *
 * If `start()` rejects, `onclose` is not called for that failure; `close()` still resolves.
 */
export class StdioClientTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onerror?: (error: Error) => void;
  onclose?: (reason?: Error) => void;

  readonly stats: StdioClientStats = { messagesReceived: 0, junkLines: 0, tooLongLines: 0, stderrBytes: 0 };

  private readonly options: StdioClientTransportOptions;
  private readonly label: string;
  private readonly graceMs: number;
  private readonly decoder: LineDecoder;
  private readonly ring: ByteRing;
  private readonly stderrLines: TextLineSplitter | undefined;

  private child: ChildProcess | undefined;
  private resolvedPath: string | undefined;
  private readonly life: TransportLifecycle;
  /** How the child exited; `requested`: close() had been called (then onclose gets no reason). */
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null; requested: boolean } | undefined;
  /** stdin failed (EPIPE): the child can no longer be written to, whatever its state. */
  private stdinBroken = false;
  private cork: TickCork | undefined;
  private streamsTimer: ReturnType<typeof setTimeout> | undefined;
  private drain: { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } | undefined;
  private readonly exited: Deferred = deferred();
  private readonly done: Deferred = deferred();

  constructor(options: StdioClientTransportOptions) {
    checkSpawnOptions(options);
    this.options = options;
    this.label = options.name ?? basename(options.command);
    this.life = new TransportLifecycle(this, `server "${this.label}"`);
    this.graceMs = options.shutdownGraceMs ?? DEFAULT_GRACE_MS;
    this.decoder = new LineDecoder({ maxLineBytes: options.maxLineBytes });
    this.ring = new ByteRing(options.stderrBufferBytes ?? DEFAULT_RING_BYTES);
    this.stderrLines = options.onStderr ? new TextLineSplitter(options.onStderr, STDERR_LINE_CHARS) : undefined;
  }

  /** Process id of the child (also after it exited), once spawned. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Absolute path the command resolved to, once started. */
  get resolvedCommand(): string | undefined {
    return this.resolvedPath;
  }

  /** The last captured stderr output (at most the ring buffer size), as text. */
  stderrTail(): string {
    return this.ring.text();
  }

  start(): Promise<void> {
    return this.life.openWith(() => this.spawnChild());
  }

  send(message: JsonRpcMessage | JsonRpcMessage[]): Promise<void> {
    if (this.life.state !== "open") return Promise.reject(this.life.notOpen());
    const stdin = this.child!.stdin!;
    if (this.exitInfo || this.stdinBroken || !stdin.writable) return Promise.reject(this.closedError());
    const text = encodeMessage(message);
    if (typeof text !== "string") return Promise.reject(text);
    // Requests sent in one tick leave in one writev. The server side does not do this: its
    // answers stream out one by one, so the client can work on the first while the server
    // still computes the rest (docs/decisions.md 31: batching both sides measured slower).
    this.cork?.hold();
    if (stdin.write(`${text}\n`)) return Promise.resolve();
    return this.waitForDrain(stdin);
  }

  /**
   * Ends the child's stdin, waits up to the grace period for it to exit, then SIGTERMs its
   * process group, waits again, then SIGKILLs the group. Idempotent.
   */
  close(): Promise<void> {
    // A start that failed left nothing to stop (the lifecycle still reports the end).
    const startFailed = this.life.state === "failed";
    return this.life.close(() => this.shutdown(startFailed));
  }

  private async spawnChild(): Promise<void> {
    let started: StartedProcess | undefined;
    try {
      started = this.options.process ?? (await startProcess(this.options, () => this.life.ending));
    } catch (err) {
      throw this.spawnFailed(err);
    }
    // close() came while the command was looked up: nothing was spawned.
    if (started === undefined) throw this.closedError();
    const child = this.adopt(started);

    const failure = await started.running;
    if (failure !== undefined) {
      // A child that never ran has no end to report: start() rejects instead.
      child.removeAllListeners("exit").removeAllListeners("close");
      clearTimeout(this.streamsTimer);
      child.stdin.destroy();
      child.stdout.destroy();
      child.stderr.destroy();
      throw this.spawnFailed(failure);
    }
    child.on("error", (err) => this.log(`child process error: ${errorMessage(err)}`));
  }

  /** Takes `started` over: its output is read from now on, its end reported. */
  private adopt(started: StartedProcess): StartedProcess["child"] {
    const child = started.child;
    this.resolvedPath = started.resolvedCommand;
    this.child = child;
    this.cork = new TickCork(child.stdin);
    child.on("exit", (code, signal) => this.onExit(code, signal));
    child.on("close", () => this.finish());
    child.stdin.on("error", (err) => this.onStdinError(err));
    child.stdout.on("data", (chunk: Uint8Array) => this.onStdout(chunk));
    child.stdout.on("end", () => this.deliverAll(this.decoder.end()));
    child.stdout.on("error", (err) => this.log(`stdout error: ${errorMessage(err)}`));
    child.stderr.on("data", (chunk: Uint8Array) => this.onStderrChunk(chunk));
    child.stderr.on("end", () => this.stderrLines?.end());
    child.stderr.on("error", (err) => this.log(`stderr error: ${errorMessage(err)}`));
    // A process handed over may have exited before anyone listened.
    if (started.exit !== undefined) this.onExit(started.exit.code, started.exit.signal);
    return child;
  }

  private onStdout(chunk: Uint8Array): void {
    this.deliverAll(this.decoder.push(chunk));
  }

  private deliverAll(lines: DecodedLine[]): void {
    for (let i = 0; i < lines.length; i++) {
      if (this.life.state === "closed") return;
      const line = lines[i]!;
      if (line.ok) {
        this.stats.messagesReceived++;
        this.onmessage?.(line.value);
      } else if (line.error.code === "LINE_TOO_LONG") {
        this.stats.tooLongLines++;
        this.onerror?.(line.error);
      } else {
        // A banner or a stray print() from the server: not a message we could answer.
        this.stats.junkLines++;
        this.log(`ignored stdout line (${line.error.code}): ${line.error.message}`);
      }
    }
  }

  private onStderrChunk(chunk: Uint8Array): void {
    this.stats.stderrBytes += chunk.length;
    this.ring.write(chunk);
    this.stderrLines?.push(chunk);
  }

  private onStdinError(err: Error): void {
    // EPIPE when the child is gone or closed its stdin; the exit path reports the end.
    this.stdinBroken = true;
    this.rejectDrain(this.closedError());
    if ((err as NodeJS.ErrnoException).code !== "EPIPE") this.log(`stdin error: ${errorMessage(err)}`);
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitInfo = { code, signal, requested: this.life.ending };
    this.exited.resolve();
    // 'close' follows once stdout/stderr end; a grandchild that kept our pipes open would
    // delay it forever, so stop waiting after the grace period.
    this.streamsTimer = setTimeout(() => {
      this.child?.stdout?.destroy();
      this.child?.stderr?.destroy();
      this.finish();
    }, this.graceMs);
  }

  /** Runs once, after the child exited and its output was read. */
  private finish(): void {
    if (this.life.state === "closed") return;
    this.deliverAll(this.decoder.end());
    this.stderrLines?.end();
    clearTimeout(this.streamsTimer);
    // Orphaned group members still holding the other end see EOF.
    this.child?.stdin?.destroy();
    this.rejectDrain(this.closedError());
    const reason = this.exitInfo?.requested ? undefined : this.exitError();
    if (reason) void this.reapGroup();
    this.life.ended(reason);
    this.done.resolve();
  }

  private async shutdown(startFailed: boolean): Promise<void> {
    if (startFailed) return;
    const handed = this.options.process;
    // Closed before start(): a process handed in is still ours to stop, if it ever ran.
    if (this.child === undefined && handed !== undefined && (await handed.running) === undefined) this.adopt(handed);
    const child = this.child;
    if (!child) return;
    if (this.exitInfo) {
      // Exited on its own: its end is (being) reported; only leftovers of the group remain.
      await this.done.promise;
      await this.reapGroup();
      return;
    }
    child.stdin?.end();
    if (!(await settlesWithin(this.exited.promise, this.graceMs))) {
      this.signalGroup("SIGTERM");
      if (!(await settlesWithin(this.exited.promise, this.graceMs))) {
        this.signalGroup("SIGKILL");
        await settlesWithin(this.exited.promise, this.graceMs);
      }
    }
    await settlesWithin(this.done.promise, this.graceMs + GROUP_POLL_MS);
    this.finish();
    await this.reapGroup();
  }

  /** After the leader exited: SIGTERM what is left of its group, then SIGKILL it. */
  private async reapGroup(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || IS_WINDOWS || !processGroupExists(pid)) return;
    this.signalGroup("SIGTERM");
    const deadline = Date.now() + this.graceMs;
    while (processGroupExists(pid) && Date.now() < deadline) await sleep(GROUP_POLL_MS);
    if (processGroupExists(pid)) this.signalGroup("SIGKILL");
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const child = this.child;
    if (child?.pid === undefined) return;
    try {
      if (IS_WINDOWS) child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ESRCH") this.log(`${signal} to process group ${child.pid} failed: ${errorMessage(err)}`);
    }
  }

  private waitForDrain(stdin: NodeJS.WritableStream): Promise<void> {
    if (!this.drain) {
      let resolve!: () => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const entry = { promise, resolve, reject };
      this.drain = entry;
      stdin.once("drain", () => {
        if (this.drain === entry) this.drain = undefined;
        entry.resolve();
      });
    }
    return this.drain.promise;
  }

  private rejectDrain(err: Error): void {
    const entry = this.drain;
    this.drain = undefined;
    entry?.reject(err);
  }

  private exitError(): BridgeError {
    const code = this.exitInfo?.code ?? null;
    const signal = this.exitInfo?.signal ?? null;
    const how = signal !== null ? `was killed by signal ${signal}` : `exited with code ${code}`;
    const stderr = lastLines(this.ring.text(), REASON_STDERR_LINES, REASON_STDERR_CHARS);
    const command = this.resolvedPath ?? this.options.command;
    const message =
      `server "${this.label}": process ${this.child?.pid} (${command}) ${how}` +
      (stderr === "" ? "; it wrote nothing to stderr" : `; last stderr:\n${stderr}`);
    return new BridgeError("PROCESS_EXITED", message, {
      details: { code, signal, stderr, pid: this.child?.pid, command },
    });
  }

  private closedError(): BridgeError {
    return new BridgeError("CLOSED", `server "${this.label}": transport is closed`);
  }

  private spawnFailed(err: unknown): BridgeError {
    const command = this.options.command;
    const prefix = `server "${this.label}": spawn "${command}" failed`;
    let message: string;
    const code = err instanceof CommandNotFoundError ? err.errno : (err as NodeJS.ErrnoException | undefined)?.code;
    if (err instanceof CommandNotFoundError && err.code === "COMMAND_NOT_EXECUTABLE") {
      message = `${prefix}: EACCES (${err.path ?? command} is not executable)`;
    } else if (code === "ENOENT") {
      message = `${prefix}: ENOENT (is it on PATH?)`;
    } else {
      message = `${prefix}: ${code ?? errorMessage(err)}`;
    }
    return new BridgeError("SPAWN_FAILED", message, { cause: err, details: { command, code } });
  }

  private log(message: string): void {
    this.options.onLog?.(`server "${this.label}": ${message}`);
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

/** Refuses a command line a caller without type checks got wrong, before anything is spawned. */
function checkSpawnOptions(o: StdioClientTransportOptions): void {
  if (typeof o !== "object" || o === null) throw new TypeError("StdioClientTransport needs options: { command, args? }");
  const wrong = notNonEmptyString(o.command);
  if (wrong !== undefined) throw new TypeError(`StdioClientTransport: command must be a non-empty string, got ${wrong}`);
  if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== "string"))) {
    throw new TypeError("StdioClientTransport: args must be an array of strings (one per argument, not one command line)");
  }
}
