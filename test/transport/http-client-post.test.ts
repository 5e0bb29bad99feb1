/** The Streamable HTTP client's POST path: headers and session, JSON and SSE replies, error replies, size limits, and use under McpClient. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import {
  INIT_PARAMS,
  accepted,
  httpClientsClosedAfterAll,
  initializeResult,
  notification,
  plainServer,
  record,
  request,
  result,
  sendJson,
  sseEvent,
  sseHead,
} from "./http-client-helpers.ts";
import { assertBridgeError, bridgeError } from "../helpers/errors.ts";

const { serve, client } = httpClientsClosedAfterAll();

describe("StreamableHttpClientTransport: the POST path", () => {
  it("sends the required headers, captures the session and sends it and the version afterwards", async () => {
    const s = await serve(plainServer());
    const t = client(`${s.origin}/mcp`, { headers: { Authorization: "Bearer tok", "X-Extra": "1" } });
    const r = record(t);
    await t.start();
    await t.send(request(1, "initialize", INIT_PARAMS));
    assert.deepEqual(r.messages, [initializeResult(1)]);
    assert.equal(t.sessionId, "s-1");
    t.setProtocolVersion("2025-11-25");
    assert.equal(t.protocolVersion, "2025-11-25");
    await t.send(notification("notifications/initialized"));
    await t.send(request(2, "tools/list"));
    assert.deepEqual(r.messages[1], result(2, { echo: "tools/list" }));
    await t.close();

    const [init, initialized, list, del] = s.requests;
    assert.equal(s.requests.length, 4);
    for (const req of [init!, initialized!, list!]) {
      assert.equal(req.method, "POST");
      assert.equal(req.url, "/mcp");
      assert.equal(req.headers.accept, "application/json, text/event-stream");
      assert.equal(req.headers["content-type"], "application/json");
    }
    for (const req of s.requests) {
      assert.equal(req.headers.authorization, "Bearer tok");
      assert.equal(req.headers["x-extra"], "1");
    }
    assert.equal(init!.headers["mcp-session-id"], undefined);
    assert.equal(init!.headers["mcp-protocol-version"], undefined, "initialize carries no MCP-Protocol-Version");
    for (const req of [initialized!, list!, del!]) {
      assert.equal(req.headers["mcp-session-id"], "s-1");
      assert.equal(req.headers["mcp-protocol-version"], "2025-11-25");
    }
    assert.equal(del!.method, "DELETE");
    assert.deepEqual(JSON.parse(list!.body), request(2, "tools/list"));
  });

  it("delivers an SSE reply in order: server request, notification, response; skips priming events", async () => {
    const s = await serve((req, res) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg.id === undefined) return accepted(res);
      sseHead(res);
      res.write(sseEvent({ id: "p", retry: 1000, data: "" }));
      res.write(sseEvent({ id: "1", data: JSON.stringify(request("srv-1", "sampling/createMessage", { x: 1 })) }));
      res.write(": keep-alive comment\n\n");
      res.write(sseEvent({ id: "2", data: JSON.stringify(notification("notifications/progress", { progress: 1 })) }));
      res.write(sseEvent({ id: "3", data: JSON.stringify(result(msg.id, { done: true })) }));
      res.end();
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(7, "tools/call", { name: "x" }));
    assert.deepEqual(r.messages, [
      request("srv-1", "sampling/createMessage", { x: 1 }),
      notification("notifications/progress", { progress: 1 }),
      result(7, { done: true }),
    ]);
    assert.deepEqual(r.errors, []);
  });

  it("does not mistake a server request with the same id for the response", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.write(sseEvent({ data: JSON.stringify(request(5, "ping")) }));
      setTimeout(() => {
        res.write(sseEvent({ data: JSON.stringify(result(5, { real: true })) }));
        res.end();
      }, 20);
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    let settled = false;
    const sent = t.send(request(5, "tools/list")).then(() => (settled = true));
    await r.waitFor((m) => (m as { method?: string }).method === "ping");
    assert.equal(settled, false, "send() waits for the response, not for a request with the same id");
    await sent;
    assert.deepEqual(r.messages.at(-1), result(5, { real: true }));
  });

  it("resolves send() for notifications on 202 and rejects on an error status, naming it", async () => {
    const s = await serve((req, res) => {
      const msg = req.json as { method?: string };
      if (msg.method === "notifications/bad") return sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "no such thing" } }, {}, 400);
      accepted(res);
    });
    const t = client(`${s.origin}/mcp`);
    await t.send(notification("notifications/initialized"));
    await t.send(result(9, {}));
    await assert.rejects(t.send(notification("notifications/bad")), bridgeError("HTTP_ERROR", /answered 400.*no such thing/, {
      details: { status: 400, method: "POST", url: `${s.origin}/mcp` },
    }));
  });

  it("rejects a request promptly when the server answers an error status (the caller sees the status)", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("database on fire");
    });
    const t = client(`${s.origin}/mcp`);
    const peer = new JsonRpcPeer(t, { requestTimeoutMs: 30_000 });
    await peer.start();
    await assert.rejects(peer.request("tools/list"), bridgeError("HTTP_ERROR", /tools\/list.*answered 500.*database on fire/));
    assert.equal(peer.pendingCount, 0);
    await peer.close();
  });

  it("refuses a reply with the wrong content type", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>login page</html>");
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("HTTP_ERROR", /content type "text\/html"/));
  });

  it("reports a malformed JSON body as PARSE_ERROR", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":1,"result":');
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("PARSE_ERROR", /not valid JSON/));
  });

  it("rejects a JSON reply that does not answer the request, with the server's reason", async () => {
    const s = await serve((_req, res) => sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Bad Request: missing session" } }));
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("HTTP_ERROR", /did not contain its response: Bad Request: missing session/));
    assert.equal(r.messages.length, 1, "the id-less error is still delivered");
  });

  it("fails a request whose SSE stream ends before the response without an event id", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.write(sseEvent({ data: JSON.stringify(notification("notifications/message", { level: "info" })) }));
      setTimeout(() => res.destroy(), 20);
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await assert.rejects(t.send(request(1, "tools/call")), bridgeError("HTTP_ERROR", /ended before its response.*no event id/));
    assert.equal(r.messages.length, 1);
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 0, "nothing to resume from");
  });

  it("fails a request whose JSON body is cut off", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": 100 });
      res.write('{"jsonrpc":"2.0",');
      setTimeout(() => res.destroy(), 20);
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("HTTP_ERROR", /closed before the body ended/));
  });

  it("reports an SSE event that is not JSON to onerror and keeps reading", async () => {
    const s = await serve((req, res) => {
      sseHead(res);
      res.write(sseEvent({ data: "{not json" }));
      res.write(sseEvent({ event: "custom", data: "ignored" }));
      res.write(sseEvent({ data: JSON.stringify(result((req.json as { id: number }).id)) }));
      res.end();
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(3, "ping"));
    assert.deepEqual(r.messages, [result(3)]);
    assert.equal(r.errors.length, 1);
    assertBridgeError(r.errors[0], "PARSE_ERROR");
  });
});

describe("StreamableHttpClientTransport: response headers, read from rawHeaders", () => {
  it("takes a media type whatever the case of its name and value, and the first of two Content-Type headers, as Node would", async () => {
    const s = await serve((req, res) => {
      const body = JSON.stringify(result((req.json as { id: number }).id, { ok: true }));
      res.writeHead(200, ["Content-Type", "Application/JSON; charset=utf-8", "CONTENT-LENGTH", String(Buffer.byteLength(body)), "content-type", "text/plain"]);
      res.end(body);
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(1, "tools/list"));
    assert.deepEqual(r.messages, [result(1, { ok: true })]);
    await t.close();
  });

  it("refuses a body whose Content-Length, in any case, declares more than the limit, before reading it", async () => {
    const big = JSON.stringify({ big: "x".repeat(64 * 1024) });
    const s = await serve((_req, res) => {
      res.writeHead(200, ["Content-Type", "application/json", "Content-Length", String(big.length)]);
      res.end(big);
    });
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("LIMIT_EXCEEDED", /16384 bytes/));
    await s.allClosed();
  });

  it("follows a 307 with a Location header written in any case", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/old") return void res.writeHead(307, ["LOCATION", "/mcp"]).end();
      sendJson(res, result((req.json as { id: number }).id, { moved: true }));
    });
    const t = client(`${s.origin}/old`);
    const r = record(t);
    await t.send(request(1, "tools/list"));
    assert.deepEqual(r.messages, [result(1, { moved: true })]);
    await t.close();
  });
});

describe("StreamableHttpClientTransport: limits", () => {
  const big = "x".repeat(64 * 1024);

  it("refuses a JSON body over the limit (declared length) and destroys the socket", async () => {
    const s = await serve((req, res) => sendJson(res, result((req.json as { id: number }).id, { big })));
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("LIMIT_EXCEEDED", /16384 bytes/));
    await s.allClosed();
  });

  it("refuses a chunked JSON body once it passes the limit", async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const text = JSON.stringify(result((req.json as { id: number }).id, { big }));
      for (let i = 0; i < text.length; i += 4096) res.write(text.slice(i, i + 4096));
      res.end();
    });
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("LIMIT_EXCEEDED"));
    await s.allClosed();
  });

  it("refuses a single SSE event over the limit", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.write(`data: ${big}`);
    });
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/call")), bridgeError("LIMIT_EXCEEDED"));
    await s.allClosed();
  });
});

describe("StreamableHttpClientTransport with McpClient", () => {
  it("connects, negotiates, and sends the version header after initialize", async () => {
    const s = await serve(plainServer((m) => result(m.id, { tools: [{ name: "t", inputSchema: { type: "object" } }] })));
    const t = client(`${s.origin}/mcp`);
    const c = new McpClient({ era: "legacy" }); // the handshake-era wire
    await c.connect(t);
    const tools = await c.listTools();
    assert.deepEqual(tools.map((x) => x.name), ["t"]);
    await c.close();
    const methods = s.requests.map((q) => `${q.method} ${(q.json as { method?: string } | undefined)?.method ?? ""} ${q.headers["mcp-protocol-version"] ?? "-"}`);
    assert.deepEqual(methods, [
      "POST initialize -",
      "POST notifications/initialized 2025-11-25",
      "POST tools/list 2025-11-25",
      "DELETE  2025-11-25",
    ]);
  });
});
