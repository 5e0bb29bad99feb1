/**
 * mcp-bridge behind the benchmark's client contract over Streamable HTTP: McpClient with
 * StreamableHttpClientTransport, default options (so the GET stream is opened too). The one
 * change: the keep-alive agent is passed in, built exactly as the transport would build its
 * own, so that the benchmark can count its sockets and listeners.
 */
import * as http from "node:http";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { probeAgent, startHttpServer } from "./http-child.ts";
import type { BenchClient, ServerCommand } from "./types.ts";

/** Starts `server` (an HTTP server command) and completes the handshake. */
export async function connectOursHttp(server: ServerCommand): Promise<BenchClient> {
  const child = await startHttpServer(server);
  const agent = new http.Agent({ keepAlive: true });
  // The 2025 figures: pinned to the handshake era, so they stay comparable with earlier runs
  // (auto would speak the stateless era to our dual-era servers; docs/decisions.md 129).
  const client = new McpClient({ clientInfo: { name: "bench", version: "1.0.0" }, era: "legacy" });
  const close = async (): Promise<void> => {
    await client.close().catch(() => undefined);
    agent.destroy();
    await child.close();
  };
  try {
    await client.connect(new StreamableHttpClientTransport({ url: child.url, agent }));
  } catch (err) {
    await close();
    throw err;
  }
  return {
    pid: child.pid,
    listTools: async () => (await client.listTools()).length,
    echo: async (text) => {
      const first = (await client.callTool("echo", { text })).content[0];
      return first?.type === "text" ? first.text : "";
    },
    close,
    probe: () => probeAgent(agent),
  };
}
