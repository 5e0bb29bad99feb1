/**
 * The MCP clients the CLI has open, so that the process can close them all when it must end
 * early (its output pipe broke: see main.ts). Closing a stdio client stops the server's whole
 * process group, which exiting alone would not: the server would see stdin end, but a
 * grandchild it started would live on.
 */
import type { McpClient } from "../mcp/client.ts";

const open = new Set<McpClient>();

/** Holds `client` until it closes; returns it. */
export function trackClient(client: McpClient): McpClient {
  open.add(client);
  client.on("close", () => open.delete(client));
  return client;
}

/** Closes every client still open; never rejects. */
export async function closeOpenClients(): Promise<void> {
  await Promise.allSettled([...open].map((client) => client.close()));
}
