/**
 * `mcp-bridge serve` as a real child for the gateway's tests: a config of fixture servers
 * written to a temporary directory, the command started over HTTP on a free loopback port,
 * and a stop that checks nothing it started is left running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpClient, type McpClientOptions } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { descendants, reap, ROOT, waitGone } from "../e2e/helpers.ts";

/** The `serve` section that shares `names` among every client (one upstream connection each). */
export function sharing(...names: string[]): Record<string, unknown> {
  return { isolation: Object.fromEntries(names.map((name) => [name, "shared"])) };
}

/** A trusted config entry that runs a fixture server (with `flags`) the way this Node runs fixtures. */
export function fixtureEntry(file: string, flags: string[] = [], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { command, args } = nodeModuleCommand(join(ROOT, "fixtures", "servers", file), flags);
  return { command, args, cwd: ROOT, trust: "trusted", ...extra };
}

/** A running `serve --http`: its URL, its log so far, clients to it, and its stop. */
export interface RunningServe {
  url: string;
  stderr(): string;
  /** A client connected to it over Streamable HTTP; closed by `stop`. */
  connect(options?: McpClientOptions): Promise<McpClient>;
  /** Closes the clients, SIGTERMs serve, checks it and every upstream it started are gone; the exit code and signal. */
  stop(): Promise<[number | null, NodeJS.Signals | null]>;
}

/**
 * Starts `serve --http 127.0.0.1:0` in front of `servers` (name -> config entry), once it says
 * where it serves; `serve` is the config's `serve` section (e.g. which upstreams are shared).
 */
export async function startServeHttp(servers: Record<string, unknown>, extraArgs: string[] = [], serve?: Record<string, unknown>): Promise<RunningServe> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-gateway-"));
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({ mcpServers: servers, ...(serve === undefined ? {} : { serve }) }, null, 2));
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["serve", "--config", config, "--http", "127.0.0.1:0", ...extraArgs]);
  const child = spawn(cli.command, cli.args, { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on("exit", (code, signal) => resolve([code, signal])));
  const listening = /serving \d+ upstream\(s\) at (http:\/\/127\.0\.0\.1:\d+\/mcp)/;
  let stderr = "";
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        const m = listening.exec(stderr);
        if (m) resolve(m[1]!);
      });
      child.on("exit", () => reject(new Error(`serve exited early: ${stderr}`)));
    });
  } catch (err) {
    reap(child.pid);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const clients: McpClient[] = [];
  return {
    url,
    stderr: () => stderr,
    connect: async (options = {}) => {
      const client = new McpClient(options);
      clients.push(client);
      await client.connect(new StreamableHttpClientTransport({ url }));
      return client;
    },
    stop: async () => {
      // Upstreams restarted during the test are below serve too: look now, not at the start.
      const below = descendants(child.pid!);
      try {
        for (const client of clients) await client.close();
        child.kill("SIGTERM");
        const outcome = await exited;
        for (const pid of below) assert.equal(await waitGone(pid), true, `process ${pid} outlived serve`);
        return outcome;
      } finally {
        for (const pid of [child.pid, ...below]) reap(pid);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** The text of a tool result's text blocks. */
export function textOf(result: { content: readonly { type: string }[] }): string {
  return result.content.map((c) => (c.type === "text" ? (c as { type: string; text: string }).text : `[${c.type}]`)).join("");
}
