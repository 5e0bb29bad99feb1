/**
 * mcp-bridge behind the benchmark's client contract: McpClient over StdioClientTransport,
 * with default options except the environment, which is inherited so that both servers
 * start with the same one.
 */
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import type { BenchClient, ServerCommand } from "./types.ts";

/** Spawns `server` and completes the handshake. */
export async function connectOurs(server: ServerCommand): Promise<BenchClient> {
  const transport = new StdioClientTransport({ command: server.command, args: server.args, inheritEnv: true, name: "bench" });
  // The 2025 figures: pinned to the handshake era, so they stay comparable with earlier runs
  // (auto would speak the stateless era to our dual-era servers; docs/decisions.md 129).
  const client = new McpClient({ clientInfo: { name: "bench", version: "1.0.0" }, era: "legacy" });
  await client.connect(transport);
  const tool = server.tool ?? "echo";
  return {
    get pid() {
      return transport.pid;
    },
    listTools: async () => (await client.listTools()).length,
    echo: async (text) => {
      const first = (await client.callTool(tool, { text })).content[0];
      return first?.type === "text" ? first.text : "";
    },
    close: () => client.close(),
  };
}
