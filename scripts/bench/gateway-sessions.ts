/**
 * The runner's side of section 11e (loaded by the gateway runner only, on first use): a fresh
 * `mcp-bridge serve --http` (the runner's HTTP server command, gateway-http-server.ts), then
 * `count` downstream McpClient sessions open on it at once, each with its GET stream as a
 * client opens it by default. Reported: serve's RSS (Linux /proc) after one warm-up session and
 * with every session open, the time to open them all, and one echo per session with all open.
 */
import { readFileSync } from "node:fs";
import * as http from "node:http";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import type { GatewaySessionsResult } from "./gateway.ts";
import { startHttpServer } from "./http-child.ts";
import type { ServerCommand } from "./types.ts";

/** Sessions opened (and calls made) at a time: a burst of 500 connects is not what is measured. */
const BATCH = 50;

/** Resident set size of process `pid` now, MB (VmRSS); NaN without /proc. */
function rssMbOf(pid: number | undefined): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${String(pid)}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** `work` over `items`, {@link BATCH} at a time. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(...(await Promise.all(items.slice(i, i + BATCH).map(work))));
  return out;
}

/** Runs 11e against a fresh gateway started from `server`; `started` is told the gateway's pid. */
export async function measureSessions(server: ServerCommand, count: number, started: (pid: number) => void): Promise<GatewaySessionsResult> {
  const child = await startHttpServer(server);
  if (child.pid !== undefined) started(child.pid);
  const agent = new http.Agent({ keepAlive: true });
  const tool = server.tool ?? "echo";
  const clients: McpClient[] = [];
  const open = async (): Promise<McpClient> => {
    const client = new McpClient({ clientInfo: { name: "bench-session", version: "1.0.0" }, era: "legacy" });
    clients.push(client);
    await client.connect(new StreamableHttpClientTransport({ url: child.url, agent }));
    return client;
  };
  const echo = async (client: McpClient, text: string): Promise<boolean> => {
    const first = (await client.callTool(tool, { text })).content[0];
    return first?.type === "text" && first.text === text;
  };
  try {
    const warm = await open();
    await echo(warm, "warm-up");
    const rssBeforeMb = rssMbOf(child.pid);
    const t0 = performance.now();
    const sessions = await inBatches(Array.from({ length: count }, (_, i) => i), () => open());
    const openMs = performance.now() - t0;
    const rssOpenMb = rssMbOf(child.pid);
    const served = await inBatches(sessions, (client) => echo(client, "hello").catch(() => false));
    return {
      sessions: count,
      rssBeforeMb,
      rssOpenMb,
      kbPerSession: ((rssOpenMb - rssBeforeMb) * 1024) / count,
      callsServed: served.filter(Boolean).length,
      openMs,
    };
  } finally {
    await inBatches(clients, (client) => client.close().catch(() => undefined));
    agent.destroy();
    await child.close();
  }
}
