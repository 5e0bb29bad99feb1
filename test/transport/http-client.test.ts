import assert from "node:assert/strict";
import * as http from "node:http";
import { describe, it } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport, type HttpClientOptions } from "../../src/transport/http-client.ts";
import {
  INIT_PARAMS,
  accepted,
  closedAfterAll,
  initializeResult,
  isCode,
  notification,
  record,
  request,
  result,
  sendJson,
  sseEvent,
  sseHead,
  until,
  type Handler,
} from "./http-client-helpers.ts";

const { serve, keep } = closedAfterAll<StreamableHttpClientTransport>();

function client(url: string, options: Partial<HttpClientOptions> = {}): StreamableHttpClientTransport {
  return keep(new StreamableHttpClientTransport({ url, openGetStream: false, ...options }));
}

/** A well-behaved server: session "s-1", JSON replies, 202 for the rest, 405 for GET. */
function plainServer(answer: (msg: { id: unknown; method: string }) => unknown = (m) => result(m.id, { echo: m.method })): Handler {
  return (req, res) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method === "GET") return void res.writeHead(405).end();
    const msg = req.json as { id?: unknown; method?: string };
    if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s-1" });
    if (msg.id === undefined || msg.method === undefined) return accepted(res);
    sendJson(res, answer(msg as { id: unknown; method: string }));
  };
}

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
    await assert.rejects(t.send(notification("notifications/bad")), (e: unknown) =>
      isCode("HTTP_ERROR", /answered 400.*no such thing/)(e) && (e as BridgeError).details.status === 400);
  });

  it("rejects a request promptly when the server answers an error status (the caller sees the status)", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("database on fire");
    });
    const t = client(`${s.origin}/mcp`);
    const peer = new JsonRpcPeer(t, { requestTimeoutMs: 30_000 });
    await peer.start();
    await assert.rejects(peer.request("tools/list"), isCode("HTTP_ERROR", /tools\/list.*answered 500.*database on fire/));
    assert.equal(peer.pendingCount, 0);
    await peer.close();
  });

  it("refuses a reply with the wrong content type", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>login page</html>");
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/list")), isCode("HTTP_ERROR", /content type "text\/html"/));
  });

  it("reports a malformed JSON body as PARSE_ERROR", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"jsonrpc":"2.0","id":1,"result":');
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/list")), isCode("PARSE_ERROR", /not valid JSON/));
  });

  it("rejects a JSON reply that does not answer the request, with the server's reason", async () => {
    const s = await serve((_req, res) => sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Bad Request: missing session" } }));
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await assert.rejects(t.send(request(1, "tools/list")), isCode("HTTP_ERROR", /did not contain its response: Bad Request: missing session/));
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
    await assert.rejects(t.send(request(1, "tools/call")), isCode("HTTP_ERROR", /ended before its response.*no event id/));
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
    await assert.rejects(t.send(request(1, "tools/list")), isCode("HTTP_ERROR", /closed before the body ended/));
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
    assert.ok(isCode("PARSE_ERROR")(r.errors[0]));
  });
});

describe("StreamableHttpClientTransport: limits", () => {
  const big = "x".repeat(64 * 1024);

  it("refuses a JSON body over the limit (declared length) and destroys the socket", async () => {
    const s = await serve((req, res) => sendJson(res, result((req.json as { id: number }).id, { big })));
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/list")), isCode("LIMIT_EXCEEDED", /16384 bytes/));
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
    await assert.rejects(t.send(request(1, "tools/list")), isCode("LIMIT_EXCEEDED"));
    await s.allClosed();
  });

  it("refuses a single SSE event over the limit", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.write(`data: ${big}`);
    });
    const t = client(`${s.origin}/mcp`, { maxBodyBytes: 16 * 1024 });
    await assert.rejects(t.send(request(1, "tools/call")), isCode("LIMIT_EXCEEDED"));
    await s.allClosed();
  });
});

describe("StreamableHttpClientTransport: connections", () => {
  it("reuses one keep-alive connection for sequential requests", async () => {
    const s = await serve(plainServer());
    const t = client(`${s.origin}/mcp`);
    record(t);
    for (let i = 0; i < 50; i++) await t.send(request(i, "ping"));
    for (let i = 0; i < 10; i++) await t.send(notification("notifications/progress"));
    assert.equal(s.requests.length, 60);
    assert.equal(s.connections, 1);
  });

  it("reuses the connection after SSE replies too", async () => {
    const s = await serve((req, res) => {
      sseHead(res);
      res.write(sseEvent({ id: "p", data: "" }));
      res.end(sseEvent({ id: "r", data: JSON.stringify(result((req.json as { id: number }).id)) }));
    });
    const t = client(`${s.origin}/mcp`);
    record(t);
    for (let i = 0; i < 20; i++) await t.send(request(i, "ping"));
    assert.equal(s.connections, 1);
  });

  it("leaves no listeners behind on the agent or its sockets over 2000 requests", async () => {
    const s = await serve(plainServer());
    const agent = new http.Agent({ keepAlive: true });
    const t = client(`${s.origin}/mcp`, { agent });
    record(t);
    const listenerCounts = () => {
      const sockets = [...Object.values(agent.freeSockets), ...Object.values(agent.sockets)].flat();
      const onSockets = sockets.map((sock) => sock!.eventNames().reduce((n, e) => n + sock!.listenerCount(e), 0));
      const onAgent = agent.eventNames().reduce((n, e) => n + agent.listenerCount(e), 0);
      return { sockets: sockets.length, onSockets, onAgent };
    };
    for (let i = 0; i < 20; i++) await t.send(request(i, "ping"));
    const early = listenerCounts();
    for (let i = 20; i < 2000; i++) {
      await t.send(request(i, "ping"));
      if (i % 10 === 0) await t.send(notification("notifications/progress"));
    }
    const late = listenerCounts();
    assert.equal(early.sockets, 1);
    assert.deepEqual(late, early);
    assert.equal(s.connections, 1);
    await t.close();
    assert.equal(listenerCounts().sockets, 1, "a caller's agent is not destroyed by close()");
    agent.destroy();
  });

  it("close() aborts in-flight requests, sends DELETE, is idempotent and leaves no connection open", async () => {
    const s = await serve((req, res) => {
      if (req.method === "DELETE") return void res.writeHead(405).end();
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "abc" });
      // tools/call: never answered
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    const pending = t.send(request(2, "tools/call")).then(() => undefined, (e: unknown) => e);
    await until(() => s.requests.length === 2, "the tools/call POST");
    const first = t.close();
    assert.equal(t.close(), first);
    await first;
    assert.ok(isCode("CLOSED")(await pending));
    await assert.rejects(t.send(request(3, "ping")), isCode("CLOSED"));
    assert.equal(r.closes.length, 1);
    assert.equal(r.closes[0], undefined);
    const del = s.requests.find((q) => q.method === "DELETE");
    assert.equal(del?.headers["mcp-session-id"], "abc");
    await s.allClosed();
  });

  it("bounds close() when the DELETE is never answered", async () => {
    const s = await serve((req, res) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg?.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "abc" });
      // DELETE: never answered
    });
    const t = client(`${s.origin}/mcp`, { requestTimeoutMs: 100 });
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.close();
    assert.equal(s.requests.at(-1)?.method, "DELETE");
    await s.allClosed();
  });

  it("times out a notification POST the server never answers", async () => {
    const s = await serve(() => undefined);
    const t = client(`${s.origin}/mcp`, { requestTimeoutMs: 100 });
    await assert.rejects(t.send(notification("notifications/initialized")), isCode("TIMEOUT", /timed out after 100 ms/));
  });

  it("aborts a request's POST when the peer cancels it (timeout), and posts notifications/cancelled", async () => {
    let postSocketClosed = false;
    const s = await serve((req, res, raw) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "tools/call") {
        raw.socket.once("close", () => (postSocketClosed = true));
        return; // never answered
      }
      accepted(res);
    });
    const t = client(`${s.origin}/mcp`);
    const peer = new JsonRpcPeer(t);
    await peer.start();
    await assert.rejects(peer.request("tools/call", {}, { timeoutMs: 100 }), isCode("TIMEOUT"));
    const isCancel = (q: { json: unknown }) => (q.json as { method?: string }).method === "notifications/cancelled";
    await until(() => postSocketClosed && s.requests.some(isCancel), "the cancel, and the abandoned POST's connection to close");
    const cancel = s.requests.find(isCancel);
    assert.deepEqual((cancel?.json as { params?: unknown }).params, { requestId: 1, reason: "timeout" });
    await peer.close();
  });

  it("bounds a request's stalled JSON reply body by the request's own timeout, then drops the connection", async () => {
    let postSocketClosed = false;
    const s = await serve((req, res, raw) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "tools/call") {
        raw.socket.once("close", () => (postSocketClosed = true));
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        res.write('{"jsonrpc":"2.0","id":1,'); // and never the rest
        return;
      }
      accepted(res);
    });
    const t = client(`${s.origin}/mcp`);
    const peer = new JsonRpcPeer(t);
    await peer.start();
    await assert.rejects(peer.request("tools/call", {}, { timeoutMs: 150 }), isCode("TIMEOUT"));
    await until(() => postSocketClosed, "the stalled POST's connection to close");
    await peer.close();
  });

  it("sends a notification again on a fresh connection when the kept-alive one was dead; never a request", async () => {
    const uses = new WeakMap<object, number>();
    const s = await serve((req, res, raw) => {
      const n = (uses.get(raw.socket) ?? 0) + 1;
      uses.set(raw.socket, n);
      if (n === 2) return void raw.socket.destroy(); // the server dropped the idle connection as the request came
      const msg = req.json as { id?: number };
      if (msg.id === undefined) return accepted(res);
      sendJson(res, result(msg.id));
    });
    const t = client(`${s.origin}/mcp`);
    record(t);
    await t.send(request(1, "ping"));
    await t.send(notification("notifications/progress"));
    assert.equal(s.requests.length, 3, "the notification arrived twice: once on the dead socket, once on a new one");
    assert.equal(s.connections, 2);
    // The second connection now drops its second request: this time a tools/call.
    await assert.rejects(t.send(request(2, "tools/call")), isCode("HTTP_ERROR", /socket hang up|ECONNRESET/));
    assert.equal(s.requests.filter((q) => (q.json as { id?: number }).id === 2).length, 1, "a request is never sent twice");
    assert.equal(s.connections, 2);
  });

  it("reports a refused connection as HTTP_ERROR", async () => {
    const s = await serve(() => undefined);
    const url = `${s.origin}/mcp`;
    await s.close();
    const t = client(url);
    await assert.rejects(t.send(request(1, "ping")), isCode("HTTP_ERROR", /ECONNREFUSED/));
  });

  it("refuses bad URLs and bad header values at construction, without echoing the value", () => {
    assert.throws(() => new StreamableHttpClientTransport({ url: "ftp://x/mcp" }), /only http: and https:/);
    assert.throws(() => new StreamableHttpClientTransport({ url: "not a url" }), /not a valid URL/);
    assert.throws(
      () => new StreamableHttpClientTransport({ url: "http://127.0.0.1/", headers: { authorization: "Bearer se\ncret" } }),
      (e: unknown) => e instanceof BridgeError && /authorization/.test(e.message) && !/se.?cret/.test(e.message),
    );
  });
});

describe("StreamableHttpClientTransport: redirects", () => {
  it("refuses a redirect to another origin; the other server never sees a request or the header", async () => {
    const other = await serve((_req, res) => sendJson(res, result(1)));
    const s = await serve((_req, res) => {
      res.writeHead(307, { location: `${other.origin}/mcp` });
      res.end();
    });
    const t = client(`${s.origin}/mcp`, { headers: { authorization: "Bearer secret-token" } });
    await assert.rejects(t.send(request(1, "tools/list")), (e: unknown) =>
      isCode("HTTP_ERROR", /redirecting to another origin \(http:\/\/127\.0\.0\.1:\d+\); refused/)(e) && !/secret-token/.test((e as Error).message));
    await assert.rejects(t.send(notification("notifications/initialized")), isCode("HTTP_ERROR", /another origin/));
    assert.equal(other.requests.length, 0);
    assert.equal(other.connections, 0);
  });

  it("follows a same-origin 307/308 keeping method, body and headers", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/old") return void res.writeHead(308, { location: "/mid" }).end();
      if (req.url === "/mid") return void res.writeHead(307, { location: `${s.origin}/mcp` }).end();
      sendJson(res, result((req.json as { id: number }).id, { at: req.url }));
    });
    const t = client(`${s.origin}/old`, { headers: { "x-key": "k" } });
    const r = record(t);
    await t.send(request(4, "tools/list", { cursor: "c" }));
    assert.deepEqual(r.messages, [result(4, { at: "/mcp" })]);
    assert.deepEqual(s.requests.map((q) => [q.method, q.url, q.headers["x-key"], q.body]), [
      ["POST", "/old", "k", JSON.stringify(request(4, "tools/list", { cursor: "c" }))],
      ["POST", "/mid", "k", JSON.stringify(request(4, "tools/list", { cursor: "c" }))],
      ["POST", "/mcp", "k", JSON.stringify(request(4, "tools/list", { cursor: "c" }))],
    ]);
  });

  it("refuses 302 even within the origin, and stops redirect loops", async () => {
    const s = await serve((req, res) => {
      if (req.url === "/found") return void res.writeHead(302, { location: "/mcp" }).end();
      res.writeHead(307, { location: "/loop" }).end();
    });
    await assert.rejects(client(`${s.origin}/found`).send(request(1, "ping")), isCode("HTTP_ERROR", /302.*only 307\/308/));
    await assert.rejects(client(`${s.origin}/loop`).send(request(1, "ping")), isCode("HTTP_ERROR", /more than 3 redirects/));
  });
});

describe("StreamableHttpClientTransport with McpClient", () => {
  it("connects, negotiates, and sends the version header after initialize", async () => {
    const s = await serve(plainServer((m) => result(m.id, { tools: [{ name: "t", inputSchema: { type: "object" } }] })));
    const t = client(`${s.origin}/mcp`);
    const c = new McpClient();
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
