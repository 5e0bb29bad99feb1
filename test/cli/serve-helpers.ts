/** `mcp-bridge serve` as a real child process, for the serve tests. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { descendants, reap, ROOT, waitGone } from "../e2e/helpers.ts";

export interface ConfigDir {
  write: (name: string, value: unknown) => string;
  path: string;
  remove: () => void;
}

/** A temporary folder for config files; `remove` deletes it. */
export function configDir(): ConfigDir {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-serve-"));
  return {
    path: dir,
    write: (name, value) => {
      const path = join(dir, name);
      writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value, null, 2));
      return path;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A trusted config entry that runs a fixture server with this Node. */
export function fixtureEntry(file: string, args: string[] = []): Record<string, unknown> {
  const { command, args: nodeArgs } = nodeModuleCommand(join(ROOT, "fixtures", "servers", file), args);
  return { command, args: nodeArgs, cwd: ROOT, trust: "trusted" };
}

export interface ServeChild {
  pid: number;
  stderr: () => string;
  /** Live processes below serve now (its upstreams). */
  below: () => number[];
  /** Resolves when stderr matches `pattern` (bounded by the test's timeout). */
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>;
  /** SIGTERMs serve; checks that it and `also` (with everything below it now) are gone. */
  stop: (also?: number[]) => Promise<[number | null, NodeJS.Signals | null]>;
}

/** `serve <argv>` as a plain child, once its stderr matches `ready`. */
export async function spawnServe(argv: string[], ready: RegExp, env?: NodeJS.ProcessEnv): Promise<ServeChild> {
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["serve", ...argv]);
  const child = spawn(cli.command, cli.args, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: env === undefined ? process.env : { ...process.env, ...env } });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (code, signal) => resolve([code, signal])));
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  child.on("exit", () => {
    for (const w of waiters.splice(0)) w();
  });
  const waitFor = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = pattern.exec(stderr);
        if (m) resolve(m);
        else if (child.exitCode !== null || child.signalCode !== null) reject(new Error(`serve exited: ${stderr}`));
        else waiters.push(check);
      };
      check();
    });
  try {
    await waitFor(ready);
  } catch (err) {
    reap(child.pid);
    throw err;
  }
  const pid = child.pid!;
  return {
    pid,
    stderr: () => stderr,
    below: () => descendants(pid),
    waitFor,
    stop: async (also = []) => {
      const all = [...new Set([...also, ...descendants(pid)])];
      try {
        child.kill("SIGTERM");
        const outcome = await exited;
        for (const p of all) assert.equal(await waitGone(p), true, `process ${p} outlived serve`);
        return outcome;
      } finally {
        for (const p of [pid, ...all]) reap(p);
      }
    },
  };
}

/** The text of a tool result's text blocks. */
export function text(result: { content: { type: string }[] }): string {
  return result.content.map((c) => (c.type === "text" ? (c as unknown as { text: string }).text : `[${c.type}]`)).join("");
}

export const LISTENING = /at (http:\/\/127\.0\.0\.1:\d+)\/mcp/;

/** A config whose echo is per-client (the default), mirror shared. */
export function isolatedConfig(dir: ConfigDir, name: string, serve: Record<string, unknown> = {}): string {
  return dir.write(name, {
    mcpServers: { echo: fixtureEntry("echo.ts"), mirror: { ...fixtureEntry("mirror.ts"), env: { MIRROR_TEXT: "shared mirror" } } },
    serve: { isolation: { mirror: "shared" }, ...serve },
  });
}

export async function httpServe(config: string, extra: string[] = [], env?: NodeJS.ProcessEnv): Promise<{ serve: ServeChild; base: string }> {
  const serve = await spawnServe(["--config", config, "--http", "127.0.0.1:0", ...extra], LISTENING, env);
  return { serve, base: LISTENING.exec(serve.stderr())![1]! };
}

export async function httpClient(base: string, headers?: Record<string, string>, openGetStream?: boolean): Promise<McpClient> {
  const client = new McpClient();
  await client.connect(new StreamableHttpClientTransport({ url: `${base}/mcp`, headers, openGetStream }));
  return client;
}

export interface StatusDoc {
  session?: number;
  sessions: { open: number; max: number; opened: number; refused: number };
  upstreamConnections: { open: number; max: number };
  calls: { total: number; ok: number };
  upstreams: { name: string; isolation: string; state: string; pid?: number; lastError?: string }[];
}

export async function status(client: McpClient): Promise<StatusDoc> {
  const read = await client.readResource("mcp-bridge://status");
  return JSON.parse((read.contents[0] as { text: string }).text) as StatusDoc;
}

export function pidOf(doc: StatusDoc, upstream: string): number {
  const pid = doc.upstreams.find((u) => u.name === upstream)?.pid;
  assert.ok(pid !== undefined, JSON.stringify(doc));
  return pid;
}
