/**
 * Replays golden wire transcripts (fixtures/transcripts/*.jsonl, format in the README there)
 * against a fixture server running as a real child process over stdio: raw lines go to its
 * stdin, every line it writes to stdout is read back and compared.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { isPlainObject as isObject } from "../../src/util/object.ts";
import { handshakeMessages, initializeResults } from "./transcript-handshake.ts";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The fixture servers a transcript may name on its `{"server": ...}` line. */
export const TRANSCRIPT_SERVERS: Readonly<Record<string, string>> = {
  echo: "fixtures/servers/echo.ts",
  many: "fixtures/servers/many.ts",
};

/** The initialize result of each fixture server, for `handshake` lines. */
const INITIALIZE_RESULTS = initializeResults(ROOT);

/** A value in an `expect` that matches anything present at that place. */
export const WILDCARD = "<any>";

/**
 * Upper bound on the wait for one expected line. Exceeding it means the line never came; it
 * is a guard against a hung test, not a speed assertion (the first reply includes the server's start-up).
 */
export const EXPECT_TIMEOUT_MS = 15_000;

export type TranscriptStep =
  | { kind: "send"; line: number; message: unknown }
  | { kind: "sendRaw"; line: number; text: string }
  | { kind: "expect"; line: number; message: unknown }
  | { kind: "expectNone"; line: number };

export interface Transcript {
  name: string;
  /** A key of {@link TRANSCRIPT_SERVERS}. */
  server: string;
  steps: TranscriptStep[];
}

/**
 * Parses and checks a transcript. Throws on anything the format does not allow, naming the
 * line: an unknown key, a `server` line that is not first, an `expectNone` before any
 * `expect` (the server might not be running yet, so silence would prove nothing), a raw line
 * containing a newline, or a transcript without steps.
 */
export function parseTranscript(name: string, text: string): Transcript {
  let server = "echo";
  const steps: TranscriptStep[] = [];
  let sawExpect = false;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = i + 1;
    const raw = lines[i]!.trim();
    if (raw === "") continue;
    const fail = (why: string): never => {
      throw new Error(`${name}:${line}: ${why}`);
    };
    let entry: unknown;
    try {
      entry = JSON.parse(raw);
    } catch {
      fail("not a JSON line");
    }
    if (!isObject(entry)) return fail("each line must be a JSON object");
    const keys = Object.keys(entry);
    if (keys.length !== 1) fail(`each line has exactly one key, got ${JSON.stringify(keys)}`);
    const key = keys[0]!;
    const value = entry[key];
    switch (key) {
      case "comment":
        if (typeof value !== "string") fail("comment must be a string");
        break;
      case "server":
        if (steps.length > 0) fail("the server line must come before every step");
        if (typeof value !== "string" || !Object.hasOwn(TRANSCRIPT_SERVERS, value)) {
          fail(`unknown server ${JSON.stringify(value)}; known: ${Object.keys(TRANSCRIPT_SERVERS).join(", ")}`);
        }
        server = value as string;
        break;
      case "send":
        steps.push({ kind: "send", line, message: value });
        break;
      case "sendRaw":
        if (typeof value !== "string" || value.includes("\n")) fail("sendRaw must be a string without a newline");
        steps.push({ kind: "sendRaw", line, text: value as string });
        break;
      case "expect":
        sawExpect = true;
        steps.push({ kind: "expect", line, message: value });
        break;
      case "handshake": {
        const result = INITIALIZE_RESULTS[server];
        if (result === undefined) return fail(`no initialize result for server ${JSON.stringify(server)} in initialize-results.json`);
        const messages = handshakeMessages(value, result);
        if (typeof messages === "string") return fail(messages);
        sawExpect = true;
        steps.push({ kind: "send", line, message: messages.send }, { kind: "expect", line, message: messages.expect }, { kind: "send", line, message: messages.initialized });
        break;
      }
      case "expectNone":
        if (value !== true) fail("expectNone must be true");
        if (!sawExpect) fail("expectNone needs an earlier expect, so the server is known to be reading");
        steps.push({ kind: "expectNone", line });
        break;
      default:
        fail(`unknown key ${JSON.stringify(key)}`);
    }
  }
  if (steps.length === 0) throw new Error(`${name}: no steps`);
  return { name, server, steps };
}

/**
 * `expected` with every {@link WILDCARD} replaced by the value `actual` holds at the same
 * place, so a deep equality check ignores exactly those values. A wildcard where `actual`
 * has nothing stays as it is, so the comparison still fails: it means "any value", not
 * "optional".
 */
export function fillWildcards(expected: unknown, actual: unknown): unknown {
  if (expected === WILDCARD) return actual === undefined ? WILDCARD : actual;
  if (Array.isArray(expected)) {
    return expected.map((e, i) => fillWildcards(e, Array.isArray(actual) ? actual[i] : undefined));
  }
  if (isObject(expected)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(expected)) out[k] = fillWildcards(v, isObject(actual) ? actual[k] : undefined);
    return out;
  }
  return expected;
}

/** A fixture server child process, read line by line. */
export class ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<void>;
  private readonly lines: string[] = [];
  private partial = "";
  private stderrText = "";
  private wake: (() => void) | undefined;
  private exitInfo: string | undefined;

  constructor(server: string) {
    const script = TRANSCRIPT_SERVERS[server];
    if (script === undefined) throw new Error(`unknown transcript server ${JSON.stringify(server)}`);
    const { command, args } = nodeModuleCommand(join(ROOT, script));
    this.child = spawn(command, args, { cwd: ROOT, stdio: "pipe" });
    this.child.stdout.setEncoding("utf8");
    this.child.stderr.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      const parts = (this.partial + chunk).split("\n");
      this.partial = parts.pop()!;
      this.lines.push(...parts);
      this.notify();
    });
    this.child.stderr.on("data", (chunk: string) => {
      // Kept only to explain a failure; bounded so a chatty server cannot grow it forever.
      this.stderrText = (this.stderrText + chunk).slice(-8192);
    });
    // A write after the child died must fail the step that made it, not crash the test run.
    this.child.stdin.on("error", () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.exitInfo = signal === null ? `exit code ${code}` : `signal ${signal}`;
        this.notify();
        resolve();
      });
    });
  }

  get pid(): number {
    const pid = this.child.pid;
    if (pid === undefined) throw new Error("the server process was not started");
    return pid;
  }

  /** What the server wrote to stderr (the last 8 KiB), for failure messages. */
  get stderr(): string {
    return this.stderrText;
  }

  /** Lines received and not yet taken. */
  get unread(): readonly string[] {
    return this.lines;
  }

  /** Writes one line (a newline is appended) to the server's stdin. */
  writeLine(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.child.stdin.write(`${text}\n`, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** The next stdout line; rejects after `timeoutMs` or when the process exits first. */
  async nextLine(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.lines.shift();
      if (line !== undefined) return line;
      if (this.exitInfo !== undefined) throw new Error(`the server exited (${this.exitInfo}) before writing the line`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no line from the server within ${timeoutMs} ms`);
      await this.waitForData(left);
    }
  }

  /** Resolves after `ms`, or earlier as soon as a line arrives. */
  waitForData(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  /** Kills the process by pid, waits for it to exit, and checks the pid is gone. */
  async kill(): Promise<void> {
    const pid = this.pid;
    if (this.exitInfo === undefined) {
      try {
        process.kill(pid, "SIGKILL");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
      }
    }
    await this.exited;
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, `server pid ${pid} is still alive`);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * Runs every step of `t` against a fresh server process and kills it afterwards (also when
 * a step fails). Fails on the first mismatch, naming the transcript line; also fails when the
 * server wrote a line that is not JSON, or lines nobody expected before the transcript ended.
 */
export async function replayTranscript(t: Transcript): Promise<void> {
  const server = new ServerProcess(t.server);
  let step: TranscriptStep | undefined;
  try {
    for (step of t.steps) await runStep(server, step);
    step = undefined;
    if (server.unread.length > 0) {
      throw new Error(`the server wrote lines the transcript does not expect: ${server.unread.join("\n")}`);
    }
  } catch (err) {
    const where = step === undefined ? `${t.name} (after the last step)` : `${t.name}:${step.line} (${step.kind})`;
    const stderr = server.stderr.trim() === "" ? "" : `\nserver stderr:\n${server.stderr}`;
    const message = err instanceof Error ? err.message : String(err);
    throw Object.assign(new Error(`${where}: ${message}${stderr}`, { cause: err }), { transcriptLine: step?.line });
  } finally {
    await server.kill();
  }
}

async function runStep(server: ServerProcess, step: TranscriptStep): Promise<void> {
  switch (step.kind) {
    case "send":
      return server.writeLine(JSON.stringify(step.message));
    case "sendRaw":
      return server.writeLine(step.text);
    case "expect": {
      const line = await server.nextLine(EXPECT_TIMEOUT_MS);
      let actual: unknown;
      try {
        actual = JSON.parse(line);
      } catch {
        throw new Error(`the server wrote a line to stdout that is not JSON: ${JSON.stringify(line)}`);
      }
      assert.deepStrictEqual(actual, fillWildcards(step.message, actual));
      return;
    }
    case "expectNone": {
      // Absence is shown by a probe, not by listening for a while: a ping the server answers
      // in turn, so a line it had still to write for earlier input comes before the answer.
      // docs/decisions.md 103.
      const probe = `expectNone:${step.line}`;
      await server.writeLine(JSON.stringify({ jsonrpc: "2.0", id: probe, method: "ping" }));
      const line = await server.nextLine(EXPECT_TIMEOUT_MS);
      if (idOf(line) !== probe) throw new Error(`expected no message, the server wrote: ${line}`);
      return;
    }
  }
}

/** The `id` of a JSON line, or undefined when it is not a JSON object with one. */
function idOf(line: string): unknown {
  try {
    const value: unknown = JSON.parse(line);
    return isObject(value) ? value.id : undefined;
  } catch {
    return undefined;
  }
}
