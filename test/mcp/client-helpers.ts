/** A hand-driven MCP server for McpClient tests: a real JsonRpcPeer over the in-memory pair. */
import { McpClient, type McpClientOptions } from "../../src/mcp/client.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";

export interface FakeServerOptions {
  version?: string;
  initResult?: unknown;
  beforeInit?: (server: JsonRpcPeer) => Promise<void>;
  neverAnswerInit?: boolean;
}

/** A hand-driven MCP server: a real JsonRpcPeer whose handlers each test sets. */
export async function connectPair(clientOptions: McpClientOptions = {}, server: FakeServerOptions = {}) {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const peer = new JsonRpcPeer(a);
  const seen: Array<{ method: string; params: unknown; isNotification: boolean }> = [];
  let initParams: Record<string, unknown> | undefined;
  peer.setRequestHandler("initialize", async (p) => {
    initParams = p as Record<string, unknown>;
    seen.push({ method: "initialize", params: p, isNotification: false });
    if (server.neverAnswerInit) return new Promise(() => {});
    await server.beforeInit?.(peer);
    return server.initResult ?? {
      protocolVersion: server.version ?? (p as { protocolVersion: string }).protocolVersion,
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: "fake", version: "1.0.0" },
      instructions: "be nice",
    };
  });
  peer.fallbackNotificationHandler = (method, params) => seen.push({ method, params, isNotification: true });
  await peer.start();
  const client = new McpClient(clientOptions);
  return { client, server: peer, seen, transport: b, initParams: () => initParams };
}
