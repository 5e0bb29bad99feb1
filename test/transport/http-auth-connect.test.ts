/**
 * One authorization budget per connect (src/transport/http-auth.ts `connecting`): McpClient in
 * `era: "auto"` probes with `server/discover` and then sends `initialize`; a server answering
 * 403 insufficient_scope costs the user at most 3 authorizations for the two together, over
 * Streamable HTTP and over the auto transport. After the connect, requests have their own.
 */
import assert from "node:assert/strict";
import type * as http from "node:http";
import { describe, it } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import type { HttpAuthProvider } from "../../src/transport/auth-provider.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { accepted, closedAfterAll, initializeResult, result, sendJson, type SeenRequest } from "./http-client-helpers.ts";

const { serve, keep } = closedAfterAll<McpClient>();

/** Hands out `t1`, then `t2`, `t3`... one per challenge: each challenge is one authorization. */
class CountingProvider implements HttpAuthProvider {
  readonly challenges: number[] = [];
  private token = "t1";
  private next = 2;

  async accessToken(): Promise<string | undefined> {
    return this.token;
  }

  async handleUnauthorized(status: number): Promise<string> {
    this.challenges.push(status);
    this.token = `t${this.next++}`;
    return this.token;
  }
}

const STEP_UP = { "www-authenticate": 'Bearer error="insufficient_scope", scope="more"' };

/**
 * A server of the handshake era that wants more scope: tokens numbered below `discoverFrom`
 * are refused on everything, `server/discover` with a later one gets -32601, and `initialize`
 * needs a token numbered `initializeFrom` or later; any later request, `callFrom` or later
 * (notifications pass).
 */
function scopedServer(limits: { discoverFrom: number; initializeFrom: number; callFrom?: number }) {
  return (req: SeenRequest, res: http.ServerResponse) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    const n = Number(/^Bearer t(\d+)$/.exec(req.headers.authorization ?? "")?.[1] ?? 0);
    const msg = req.json as { id?: unknown; method?: string };
    const needed = msg.method === "server/discover" ? limits.discoverFrom : msg.method === "initialize" ? limits.initializeFrom : msg.id === undefined ? 0 : (limits.callFrom ?? 0);
    if (n < Math.max(needed, limits.discoverFrom)) return void res.writeHead(403, STEP_UP).end();
    if (msg.method === "server/discover") return sendJson(res, { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
    if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s1" });
    if (msg.id === undefined) return accepted(res);
    sendJson(res, result(msg.id, { content: [{ type: "text", text: "ok" }] }));
  };
}

const transports = {
  streamable: (url: string, auth: HttpAuthProvider) => new StreamableHttpClientTransport({ url, auth, openGetStream: false }),
  auto: (url: string, auth: HttpAuthProvider) => new AutoHttpClientTransport({ url, auth, openGetStream: false }),
};

describe("McpClient era auto with an auth provider: one budget per connect", () => {
  for (const [name, make] of Object.entries(transports)) {
    it(`${name}: step-ups on server/discover and then on initialize stop at 3 authorizations in all`, async () => {
      // discover costs 2 step-ups (t1, t2 refused); initialize would need 3 more (t3..t5 refused).
      const s = await serve(scopedServer({ discoverFrom: 3, initializeFrom: 6 }));
      const auth = new CountingProvider();
      const client = keep(new McpClient({ clientInfo: { name: "t", version: "1" }, era: "auto" }));
      await assert.rejects(client.connect(make(`${s.origin}/mcp`, auth)), { name: "AuthError", status: 403 });
      assert.deepEqual(auth.challenges, [403, 403, 403]);
      const sent = s.requests.filter((q) => q.method === "POST").map((q) => [(q.json as { method: string }).method, q.headers.authorization]);
      assert.deepEqual(sent, [
        ["server/discover", "Bearer t1"],
        ["server/discover", "Bearer t2"],
        ["server/discover", "Bearer t3"],
        ["initialize", "Bearer t3"],
        ["initialize", "Bearer t4"],
      ]);
    });
  }

  it("a connect within the budget succeeds, and a later request has a budget of its own", async () => {
    // discover: 1 step-up; initialize: 1 more; tools/call: 2 more, after the connect.
    const s = await serve(scopedServer({ discoverFrom: 2, initializeFrom: 3, callFrom: 5 }));
    const auth = new CountingProvider();
    const client = keep(new McpClient({ clientInfo: { name: "t", version: "1" }, era: "auto" }));
    const init = await client.connect(transports.streamable(`${s.origin}/mcp`, auth));
    assert.equal(init.protocolVersion, "2025-11-25");
    assert.equal(client.era, "legacy");
    assert.deepEqual(auth.challenges, [403, 403]);
    const called = await client.callTool("anything", {});
    assert.deepEqual(called.content, [{ type: "text", text: "ok" }]);
    assert.deepEqual(auth.challenges, [403, 403, 403, 403]);
  });
});
