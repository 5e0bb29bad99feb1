/**
 * The HTTP section's baseline client: one http.request POST per call on a keep-alive Agent,
 * JSON.stringify out, JSON.parse back, the reply's id checked. Imports no part of mcp-bridge.
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

  constructor(private readonly url: URL) {}

  /** POSTs one message; resolves with the parsed reply, or undefined for a 202. */
  post(message: object): Promise<Reply | undefined> {
    const body = JSON.stringify(message);
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          hostname: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname,
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            if (res.statusCode === 202) return resolve(undefined);
            if (res.statusCode !== 200) return reject(new Error(`raw HTTP server answered ${res.statusCode}`));
            try {
              resolve(JSON.parse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")) as Reply);
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
    const id = this.nextId++;
    const reply = await this.post({ jsonrpc: "2.0", id, method, params });
    if (reply?.id !== id) throw new Error(`raw HTTP reply to ${method} has the wrong id`);
    if (reply.error) throw new Error(reply.error.message ?? "error response");
    return reply.result;
  }
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
    await client.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1.0.0" } });
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
