/**
 * The HTTP section's baseline client: one http.request POST per call on a keep-alive Agent,
 * JSON.stringify out, JSON.parse back, the reply's id checked. Imports no part of mcp-bridge.
 *
 * It sends the headers the protocol requires of every Streamable HTTP client, as ours does:
 * `Mcp-Session-Id` (from the initialize reply) and `MCP-Protocol-Version` after initialize.
 * Without them the baseline would exchange less than MCP does: node:http parses a header name
 * it does not know (these two) several times slower than a standard one, on both sides.
 */
import * as http from "node:http";
import { probeAgent, startHttpServer, type HttpServerChild } from "./http-child.ts";
import type { BenchClient, ServerCommand } from "./types.ts";

interface Reply {
  id?: number;
  result?: unknown;
  error?: { message?: string };
}

class RawHttpClient {
  /** The same agent the library builds for itself: keep-alive, no socket cap. */
  readonly agent = new http.Agent({ keepAlive: true });
  private nextId = 1;
  private headers: http.OutgoingHttpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  private readonly url: URL;

  constructor(url: URL) {
    this.url = url;
  }

  /** From now on every POST carries the session id and the negotiated version. */
  enterSession(sessionId: string | undefined, version: string): void {
    this.headers = { ...this.headers, "mcp-protocol-version": version };
    if (sessionId !== undefined) this.headers["mcp-session-id"] = sessionId;
  }

  /** Headers every later POST carries too. */
  addHeaders(headers: http.OutgoingHttpHeaders): void {
    this.headers = { ...this.headers, ...headers };
  }

  /**
   * POSTs one message; resolves with the parsed reply (undefined for a 202) and, when
   * `readSession` is set (initialize), the reply's `Mcp-Session-Id`.
   */
  post(message: object, readSession = false): Promise<{ reply: Reply | undefined; sessionId: string | undefined }> {
    const body = JSON.stringify(message);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          hostname: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: "POST",
          agent: this.agent,
          headers: this.headers,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const sid = readSession ? res.headers["mcp-session-id"] : undefined;
            const sessionId = typeof sid === "string" ? sid : undefined;
            if (res.statusCode === 202) return resolve({ reply: undefined, sessionId });
            if (res.statusCode !== 200) return reject(new Error(`raw HTTP server answered ${res.statusCode}`));
            try {
              resolve({ reply: JSON.parse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")) as Reply, sessionId });
            } catch (err) {
              reject(err as Error);
            }
          });
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  async request(method: string, params: object): Promise<unknown> {
    return (await this.exchange(method, params)).result;
  }

  async exchange(method: string, params: object): Promise<{ result: unknown; sessionId: string | undefined }> {
    const id = this.nextId++;
    const { reply, sessionId } = await this.post({ jsonrpc: "2.0", id, method, params }, method === "initialize");
    if (reply?.id !== id) throw new Error(`raw HTTP reply to ${method} has the wrong id`);
    if (reply.error) throw new Error(reply.error.message ?? "error response");
    return { result: reply.result, sessionId };
  }
}

/** The `_meta` every stateless-era (2026-07-28) request carries, as McpClient sends it. */
const ERA_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
};

/**
 * Starts `server` and speaks the stateless era to it: no handshake, and every tools/call
 * carries the era's headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) and `_meta`.
 */
export async function connectRawHttpStateless(server: ServerCommand): Promise<BenchClient> {
  const child: HttpServerChild = await startHttpServer(server);
  const client = new RawHttpClient(child.url);
  client.enterSession(undefined, "2026-07-28");
  // The benchmark only calls echo, so the per-call headers are the same on every POST.
  client.addHeaders({ "mcp-method": "tools/call", "mcp-name": "echo" });
  return {
    pid: child.pid,
    listTools: () => Promise.reject(new Error("the raw HTTP pair has no tools/list")),
    echo: async (text) => {
      const result = (await client.request("tools/call", { name: "echo", arguments: { text }, _meta: ERA_META })) as { content: { text?: string }[] };
      return result.content[0]?.text ?? "";
    },
    close: async () => {
      client.agent.destroy();
      await child.close();
    },
    probe: () => probeAgent(client.agent),
  };
}

/** Starts `server` (an HTTP server command) and completes the handshake. */
export async function connectRawHttp(server: ServerCommand): Promise<BenchClient> {
  const child: HttpServerChild = await startHttpServer(server);
  const client = new RawHttpClient(child.url);
  const close = async (): Promise<void> => {
    client.agent.destroy();
    await child.close();
  };
  try {
    const init = await client.exchange("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } });
    client.enterSession(init.sessionId, (init.result as { protocolVersion: string }).protocolVersion);
    await client.post({ jsonrpc: "2.0", method: "notifications/initialized" });
  } catch (err) {
    await close();
    throw err;
  }
  return {
    pid: child.pid,
    listTools: () => Promise.reject(new Error("the raw HTTP pair has no tools/list")),
    echo: async (text) => {
      const result = (await client.request("tools/call", { name: "echo", arguments: { text } })) as { content: { text?: string }[] };
      return result.content[0]?.text ?? "";
    },
    close,
    probe: () => probeAgent(client.agent),
  };
}
