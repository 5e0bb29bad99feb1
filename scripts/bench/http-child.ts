/**
 * An HTTP server of the benchmark in a child process of its own, so that client and server
 * never share a CPU thread. The server prints `{"url": "..."}` as its first stdout line once it
 * listens (with `"pid"` too when another process of its own does the serving, whose CPU then
 * counts as the server's), and closes and exits when its stdin ends. Imports no part of
 * mcp-bridge: the raw side uses it too.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import type * as http from "node:http";
import type { AgentProbe, ServerCommand } from "./types.ts";

const START_TIMEOUT_MS = 10_000;
const EXIT_WAIT_MS = 2000;

export interface HttpServerChild {
  readonly pid: number | undefined;
  readonly url: URL;
  /** stdin EOF (the server closes and exits, writing its CPU profile if asked), then SIGKILL. */
  close(): Promise<void>;
}

/** Starts `server` and resolves with its URL once it listens. */
export async function startHttpServer(server: ServerCommand): Promise<HttpServerChild> {
  const child: ChildProcessWithoutNullStreams = spawn(server.command, server.args, { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin.on("error", () => undefined); // EPIPE after exit; the exit is what counts
  child.stderr.pipe(process.stderr, { end: false });
  const close = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), EXIT_WAIT_MS);
    await exited;
    clearTimeout(timer);
  };
  try {
    const { url, pid } = await firstLine(child);
    return { pid: pid ?? child.pid, url, close };
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    throw err;
  }
}

function firstLine(child: ChildProcessWithoutNullStreams): Promise<{ url: URL; pid?: number }> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => done(new Error(`HTTP server did not print its URL within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      text += chunk.toString("utf8");
      const nl = text.indexOf("\n");
      if (nl === -1) return;
      try {
        const line = JSON.parse(text.slice(0, nl)) as { url: string; pid?: unknown };
        done({ url: new URL(line.url), ...(typeof line.pid === "number" ? { pid: line.pid } : {}) });
      } catch (err) {
        done(err as Error);
      }
    };
    const onExit = (code: number | null): void => done(new Error(`HTTP server exited (code ${code}) before printing its URL`));
    const done = (value: { url: URL; pid?: number } | Error): void => {
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.off("exit", onExit);
      child.stdout.resume(); // nothing more is expected; never let the pipe fill
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    child.stdout.on("data", onData);
    child.once("exit", onExit);
  });
}

/** Sockets of `agent` (busy and free) and the listeners on the agent and on each socket. */
export function probeAgent(agent: http.Agent): AgentProbe {
  let sockets = 0;
  let listeners = 0;
  for (const name of agent.eventNames()) listeners += agent.listenerCount(name);
  for (const pool of [agent.sockets, agent.freeSockets]) {
    for (const list of Object.values(pool)) {
      for (const socket of list ?? []) {
        sockets++;
        for (const name of socket.eventNames()) listeners += socket.listenerCount(name);
      }
    }
  }
  return { sockets, listeners };
}
