/** The Streamable HTTP client's connections (keep-alive reuse, close, timeouts, cancellation, retries, bad URLs) and redirects. */
import assert from "node:assert/strict";
import * as http from "node:http";
import { describe, it } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
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
import { until } from "../helpers/wait.ts";

const { serve, client } = httpClientsClosedAfterAll();

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
    assertBridgeError(await pending, "CLOSED");
    await assert.rejects(t.send(request(3, "ping")), bridgeError("CLOSED"));
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
    await assert.rejects(t.send(notification("notifications/initialized")), bridgeError("TIMEOUT", /timed out after 100 ms/));
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
    await assert.rejects(peer.request("tools/call", {}, { timeoutMs: 100 }), bridgeError("TIMEOUT"));
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
    await assert.rejects(peer.request("tools/call", {}, { timeoutMs: 150 }), bridgeError("TIMEOUT"));
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
    await assert.rejects(t.send(request(2, "tools/call")), bridgeError("HTTP_ERROR", /socket hang up|ECONNRESET/));
    assert.equal(s.requests.filter((q) => (q.json as { id?: number }).id === 2).length, 1, "a request is never sent twice");
    assert.equal(s.connections, 2);
  });

  it("reports a refused connection as HTTP_ERROR", async () => {
    const s = await serve(() => undefined);
    const url = `${s.origin}/mcp`;
    await s.close();
    const t = client(url);
    await assert.rejects(t.send(request(1, "ping")), bridgeError("HTTP_ERROR", /ECONNREFUSED/));
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
    await assert.rejects(t.send(request(1, "tools/list")), bridgeError("HTTP_ERROR", /^(?!.*secret-token).*redirecting to another origin \(http:\/\/127\.0\.0\.1:\d+\); refused/s));
    await assert.rejects(t.send(notification("notifications/initialized")), bridgeError("HTTP_ERROR", /another origin/));
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
    await assert.rejects(client(`${s.origin}/found`).send(request(1, "ping")), bridgeError("HTTP_ERROR", /302.*only 307\/308/));
    await assert.rejects(client(`${s.origin}/loop`).send(request(1, "ping")), bridgeError("HTTP_ERROR", /more than 3 redirects/));
  });
});
