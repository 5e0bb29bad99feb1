import assert from "node:assert/strict";
import type * as http from "node:http";
import { describe, it } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { AuthError } from "../../src/transport/auth-error.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import {
  INIT_PARAMS,
  accepted,
  closedAfterAll,
  initializeResult,
  record,
  request,
  result,
  sendJson,
  sseEvent,
  sseHead,
  type Handler,
} from "./http-client-helpers.ts";
import { until } from "../helpers/wait.ts";

const { serve, keep } = closedAfterAll<AutoHttpClientTransport>();

function auto(url: string, headers: Record<string, string> = {}): AutoHttpClientTransport {
  return keep(new AutoHttpClientTransport({ url, headers, openGetStream: false }));
}

/**
 * A legacy-only server at /mcp: POSTs to /mcp answer `postStatus`; GET /mcp is the SSE stream
 * whose endpoint is /messages.
 */
function legacyOnly(postStatus: number): Handler {
  let stream: http.ServerResponse | undefined;
  return (req, res) => {
    if (req.url === "/mcp" && req.method === "POST") return void res.writeHead(postStatus).end("not here");
    if (req.url === "/mcp" && req.method === "GET") {
      sseHead(res);
      res.write(sseEvent({ event: "endpoint", data: "/messages?sessionId=1" }));
      stream = res;
      return;
    }
    const msg = req.json as { id?: unknown; method?: string };
    res.writeHead(202).end();
    if (msg.method === "initialize") stream?.write(sseEvent({ event: "message", data: JSON.stringify(initializeResult(msg.id, "2024-11-05")) }));
    else if (msg.id !== undefined) stream?.write(sseEvent({ event: "message", data: JSON.stringify(result(msg.id, { tools: [] })) }));
  };
}

describe("AutoHttpClientTransport", () => {
  it("selects Streamable HTTP when the initialize POST succeeds", async () => {
    const s = await serve((req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const msg = req.json as { id?: unknown; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "x" });
      if (msg.id === undefined) return accepted(res);
      sendJson(res, result(msg.id, { tools: [] }));
    });
    const t = auto(`${s.origin}/mcp`);
    assert.equal(t.selected, undefined);
    const c = new McpClient({ era: "legacy" }); // the handshake era's transport choice
    await c.connect(t);
    assert.equal(t.selected, "streamable-http");
    assert.equal(t.sessionId, "x");
    assert.deepEqual(await c.listTools(), []);
    await c.close();
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 0);
  });

  for (const status of [405, 404, 400]) {
    it(`falls back to legacy SSE on the same URL when the initialize POST gets ${status}, replaying the initialize`, async () => {
      const s = await serve(legacyOnly(status));
      const t = auto(`${s.origin}/mcp`, { authorization: "Bearer k" });
      const c = new McpClient({ era: "legacy" }); // the handshake era's transport choice
      const init = await c.connect(t);
      assert.equal(t.selected, "sse");
      assert.equal(t.sessionId, undefined);
      assert.equal(init.protocolVersion, "2024-11-05");
      assert.deepEqual(await c.listTools(), []);
      await c.close();
      const seen = s.requests.map((q) => `${q.method} ${q.url} ${(q.json as { method?: string } | undefined)?.method ?? ""}`.trim());
      assert.deepEqual(seen.slice(0, 4), [
        "POST /mcp initialize",
        "GET /mcp",
        "POST /messages?sessionId=1 initialize",
        "POST /messages?sessionId=1 notifications/initialized",
      ]);
      for (const q of s.requests) assert.equal(q.headers.authorization, "Bearer k");
    });
  }

  it("never falls back on 401: the AuthError reaches the caller and no GET is made", async () => {
    const s = await serve((_req, res) => void res.writeHead(401, { "www-authenticate": 'Bearer resource_metadata="https://x/prm"' }).end());
    const t = auto(`${s.origin}/mcp`);
    const r = record(t);
    const err = await t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.challenge.resourceMetadata, "https://x/prm");
    assert.equal(t.selected, "streamable-http");
    assert.deepEqual(s.requests.map((q) => q.method), ["POST"]);
    assert.equal(r.closes.length, 0);
  });

  it("never falls back on 403 either, nor on a server error", async () => {
    for (const status of [403, 500]) {
      const s = await serve((_req, res) => void res.writeHead(status).end());
      const t = auto(`${s.origin}/mcp`);
      const err = await t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, status === 403 ? "AUTH_FAILED" : "HTTP_ERROR");
      assert.deepEqual(s.requests.map((q) => q.method), ["POST"], `status ${status}`);
    }
  });

  it("reports both failures when the fallback stream fails too", async () => {
    const s = await serve((_req, res) => void res.writeHead(405).end());
    const t = auto(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "initialize", INIT_PARAMS)), {
      name: "BridgeError",
      message: /Streamable HTTP initialize POST was refused, and the legacy SSE stream failed: GET .* answered 405/,
    });
    assert.equal(t.selected, "sse");
  });

  it("close() during the deciding initialize aborts it and leaves no connection open", async () => {
    const s = await serve(() => undefined); // never answers
    const t = auto(`${s.origin}/mcp`);
    const sent = t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
    await until(() => s.requests.length === 1, "the initialize POST");
    await t.close();
    assert.ok((await sent) instanceof BridgeError);
    await s.allClosed();
  });

  it("forwards onclose from the selected transport once, and close() is idempotent", async () => {
    const s = await serve(legacyOnly(405));
    const t = auto(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await r.waitFor((m) => (m as { id?: unknown }).id === 1);
    const first = t.close();
    assert.equal(t.close(), first);
    await first;
    assert.deepEqual(r.closes, [undefined]);
    await assert.rejects(t.send(request(2, "ping")), { name: "BridgeError", code: "CLOSED" });
  });
});
