/**
 * The benchmark's baseline client: spawn, split stdout into lines, JSON.parse them, and match
 * responses to a Map of pending ids. It imports no part of mcp-bridge and checks only what it
 * must, so it shows what the stdio round trip costs before any library work.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type { BenchClient, ServerCommand } from "./types.ts";

interface Waiter {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Message {
  id?: number;
  method?: string;
  result?: unknown;
  error?: { message?: string };
}

const PROTOCOL_VERSION = "2025-11-25";
const EXIT_WAIT_MS = 2000;

class RawClient implements BenchClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, Waiter>();
  private readonly exited: Promise<void>;
  private nextId = 1;
  private pieces: string[] = [];
  private gone: Error | undefined;

  constructor(server: ServerCommand) {
    this.child = spawn(server.command, server.args, { stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.once("exit", (code, signal) => this.fail(new Error(`raw server exited (code ${code}, signal ${signal})`)));
    this.child.once("error", (err) => this.fail(err));
    this.child.stdin.on("error", () => undefined); // EPIPE after exit; the exit handler reports it
    this.child.stderr.resume();
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => this.onData(chunk));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async initialize(): Promise<void> {
    await this.request("initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "bench", version: "1.0.0" },
    });
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  }

  async listTools(): Promise<number> {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = (await this.request("tools/list", cursor === undefined ? {} : { cursor })) as {
        tools: unknown[];
        nextCursor?: string;
      };
      count += page.tools.length;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return count;
  }

  async echo(text: string): Promise<string> {
    const result = (await this.request("tools/call", { name: "echo", arguments: { text } })) as {
      content: { text?: string }[];
    };
    return result.content[0]?.text ?? "";
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill("SIGKILL"), EXIT_WAIT_MS);
      await this.exited;
      clearTimeout(timer);
    }
  }

  /** Only the new chunk is searched for newlines; a partial line waits as pieces. */
  private onData(chunk: string): void {
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf("\n", start)) !== -1) {
      this.pieces.push(chunk.slice(start, nl));
      const line = this.pieces.length === 1 ? this.pieces[0]! : this.pieces.join("");
      this.pieces = [];
      if (line.length > 0) this.onMessage(JSON.parse(line) as Message);
      start = nl + 1;
    }
    if (start < chunk.length) this.pieces.push(chunk.slice(start));
  }

  private onMessage(message: Message): void {
    if (message.id === undefined || message.method !== undefined) return;
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message ?? "error response"));
    else waiter.resolve(message.result);
  }

  private fail(error: Error): void {
    this.gone ??= error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }
}

/** Spawns `server` and completes the handshake. */
export async function connectRaw(server: ServerCommand): Promise<BenchClient> {
  const client = new RawClient(server);
  try {
    await client.initialize();
  } catch (err) {
    await client.close();
    throw err;
  }
  return client;
}
