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

/** Starts `server` (an HTTP server command) and completes the handshake (the 2025 era). */
export function connectOursHttp(server: ServerCommand): Promise<BenchClient> {
  return connectOursHttpEra(server, "legacy");
}

/**
 * The stateless era (2026-07-28) against the same server: McpClient pinned to `era: "modern"`,
 * so every call is one self-contained POST with the era's `_meta` and headers, no session.
 */
export function connectOursHttpStateless(server: ServerCommand): Promise<BenchClient> {
  return connectOursHttpEra(server, "modern");
}

async function connectOursHttpEra(server: ServerCommand, era: "legacy" | "modern"): Promise<BenchClient> {
  const child = await startHttpServer(server);
  const agent = new http.Agent({ keepAlive: true });
  const client = new McpClient({ clientInfo: { name: "bench", version: "1.0.0" }, era });
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
  const tool = server.tool ?? "echo";
  return {
    pid: child.pid,
    listTools: async () => (await client.listTools()).length,
    echo: async (text) => {
      const first = (await client.callTool(tool, { text })).content[0];
      return first?.type === "text" ? first.text : "";
    },
    close,
    probe: () => probeAgent(agent),
  };
}
