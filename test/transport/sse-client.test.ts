import assert from "node:assert/strict";
import type * as http from "node:http";
import { describe, it } from "node:test";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { AuthError } from "../../src/transport/auth-error.ts";
import { SseClientTransport, type SseClientOptions } from "../../src/transport/sse-client.ts";
import {
  INIT_PARAMS,
  closedAfterAll,
  initializeResult,
  notification,
  record,
  request,
  result,
  sseEvent,
  sseHead,
  type Handler,
} from "./http-client-helpers.ts";
import { assertBridgeError, bridgeError } from "../helpers/errors.ts";
import { until } from "../helpers/wait.ts";

const { serve, keep } = closedAfterAll<SseClientTransport>();

function client(url: string, options: Partial<SseClientOptions> = {}): SseClientTransport {
  return keep(new SseClientTransport({ url, ...options }));
}

/**
 * A legacy server: GET /sse sends `endpoint` (`endpointData`), POST /messages answers
 * `postStatus` and puts the reply (from `answer`) on the stream.
 */
function legacyServer(options: {
  endpointData?: (origin: string) => string;
  postStatus?: number;
  answer?: (msg: { id?: unknown; method?: string }) => unknown;
} = {}) {
  const state: { stream: http.ServerResponse | undefined; handler: Handler; origin: string } = {
    stream: undefined,
    origin: "",
    handler: (req, res) => {
      if (req.method === "GET" && req.url === "/sse") {
        sseHead(res);
        res.write(": connected\n\n");
        res.write(sseEvent({ event: "endpoint", data: options.endpointData?.(state.origin) ?? "/messages?sessionId=abc" }));
        state.stream = res;
        return;
      }
      if (req.method === "POST" && req.url?.startsWith("/messages")) {
        res.writeHead(options.postStatus ?? 202, { "content-type": "text/plain" });
        res.end("Accepted");
        const msg = req.json as { id?: unknown; method?: string };
        const reply = options.answer ? options.answer(msg) : msg.method === "initialize" ? initializeResult(msg.id, "2024-11-05") : msg.id !== undefined ? result(msg.id, { echo: msg.method }) : undefined;
        if (reply !== undefined) state.stream?.write(sseEvent({ event: "message", data: JSON.stringify(reply) }));
        return;
      }
      res.writeHead(404).end();
    },
  };
  return state;
}

describe("SseClientTransport", () => {
  it("GETs the stream, POSTs to the endpoint (relative URI resolved) with the headers, reads replies as message events", async () => {
    const ls = legacyServer();
    const s = await serve(ls.handler);
    ls.origin = s.origin;
    const t = client(`${s.origin}/sse`, { headers: { Authorization: "Bearer t" } });
    const r = record(t);
    await t.start();
    assert.equal(t.endpoint, `${s.origin}/messages?sessionId=abc`);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await t.send(request(2, "tools/list"));
    await r.waitFor((m) => (m as { id?: unknown }).id === 2);
    assert.deepEqual(r.messages, [initializeResult(1, "2024-11-05"), result(2, { echo: "tools/list" })]);
    const [get, ...posts] = s.requests;
    assert.equal(get!.method, "GET");
    assert.equal(get!.headers.accept, "text/event-stream");
    assert.equal(posts.length, 3);
    for (const p of posts) {
      assert.equal(p.url, "/messages?sessionId=abc");
      assert.equal(p.headers["content-type"], "application/json");
    }
    for (const q of s.requests) assert.equal(q.headers.authorization, "Bearer t");
    assert.equal(get!.headers["mcp-protocol-version"], undefined);
  });

  it("works under McpClient, with any 2xx for POSTs", async () => {
    const ls = legacyServer({ postStatus: 200 });
    const s = await serve(ls.handler);
    ls.origin = s.origin;
    const c = new McpClient({ era: "legacy" }); // a scripted handshake-era server
    const init = await c.connect(client(`${s.origin}/sse`));
    assert.equal(init.protocolVersion, "2024-11-05");
    await c.close();
  });

  it("accepts an absolute endpoint on the same origin", async () => {
    const ls = legacyServer({ endpointData: (origin) => `${origin}/messages?sessionId=xyz` });
    const s = await serve(ls.handler);
    ls.origin = s.origin;
    const t = client(`${s.origin}/sse`);
    await t.start();
    assert.equal(t.endpoint, `${s.origin}/messages?sessionId=xyz`);
  });

  it("refuses an endpoint on another origin, and never POSTs there", async () => {
    const other = await serve((_req, res) => void res.writeHead(202).end());
    const ls = legacyServer({ endpointData: () => `${other.origin}/messages?sessionId=evil` });
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`, { headers: { authorization: "Bearer secret" } });
    await assert.rejects(t.start(), bridgeError("HTTP_ERROR", /endpoint event .* points to another origin \(http:\/\/127\.0\.0\.1:\d+\); refused/));
    await assert.rejects(t.send(request(1, "initialize", INIT_PARAMS)), bridgeError("NOT_CONNECTED"));
    assert.equal(other.requests.length, 0);
    await t.close();
    await s.allClosed();
  });

  it("ends the transport when the stream drops, failing pending requests with a clear reason", async () => {
    const ls = legacyServer({ answer: () => undefined });
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`);
    const peer = new JsonRpcPeer(t);
    const closes: (Error | undefined)[] = [];
    peer.onclose = (reason) => closes.push(reason);
    await peer.start();
    const pending = peer.request("tools/call", {}).then(() => undefined, (e: unknown) => e);
    await until(() => s.requests.some((q) => q.method === "POST"), "the POST");
    ls.stream!.destroy();
    const err = await pending;
    assertBridgeError(err, "CLOSED", /SSE stream of http:\/\/127\.0\.0\.1:\d+\/sse ended/);
    assert.equal(closes.length, 1);
    assertBridgeError(closes[0], "CLOSED");
    await assert.rejects(t.send(request(9, "ping")), bridgeError("CLOSED"));
  });

  it("ends the transport when the server closes the stream cleanly", async () => {
    const ls = legacyServer();
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`);
    const r = record(t);
    await t.start();
    ls.stream!.end();
    await until(() => r.closes.length === 1, "onclose");
    assertBridgeError(r.closes[0], "CLOSED", /ended \(the server closed it\)/);
  });

  it("fails start() when the stream ends before the endpoint event", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.end(sseEvent({ event: "message", data: "{}" }));
    });
    await assert.rejects(client(`${s.origin}/sse`).start(), bridgeError("HTTP_ERROR", /ended before its endpoint event/));
  });

  it("fails start() on a GET that is not an event stream", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    await assert.rejects(client(`${s.origin}/sse`).start(), bridgeError("HTTP_ERROR", /content type "application\/json", not text\/event-stream/));
  });

  it("fails start() when no endpoint event comes in time", async () => {
    const s = await serve((_req, res) => {
      sseHead(res);
      res.write(": waiting\n\n");
    });
    await assert.rejects(client(`${s.origin}/sse`, { endpointTimeoutMs: 100 }).start(), bridgeError("TIMEOUT"));
    await s.allClosed();
  });

  it("raises AuthError for 401 on the GET, with the challenge", async () => {
    const s = await serve((_req, res) => void res.writeHead(401, { "www-authenticate": 'Bearer scope="read"' }).end());
    const err = await client(`${s.origin}/sse`).start().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.status, 401);
    assert.equal(err.challenge.scope, "read");
  });

  it("rejects send() on a non-2xx POST, naming the status", async () => {
    const ls = legacyServer({ postStatus: 400 });
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`);
    await t.start();
    await assert.rejects(t.send(request(1, "ping")), bridgeError("HTTP_ERROR", /POST .*\/messages answered 400/, {
      details: { status: 400, method: "POST", url: `${s.origin}/messages` },
    }));
  });

  it("reports a message event that is not JSON and keeps going", async () => {
    const ls = legacyServer();
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`);
    const r = record(t);
    await t.start();
    ls.stream!.write(sseEvent({ event: "message", data: "not json" }));
    ls.stream!.write(sseEvent({ event: "endpoint", data: "/elsewhere" }));
    ls.stream!.write(sseEvent({ event: "message", data: JSON.stringify(notification("notifications/tools/list_changed")) }));
    await r.waitFor(() => true);
    assert.deepEqual(r.messages, [notification("notifications/tools/list_changed")]);
    assert.equal(r.errors.length, 1);
    assertBridgeError(r.errors[0], "PARSE_ERROR");
    assert.equal(t.endpoint, `${s.origin}/messages?sessionId=abc`, "a later endpoint event changes nothing");
    assert.equal(r.closes.length, 0);
  });

  it("ends the transport on an event over the limit", async () => {
    const ls = legacyServer();
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`, { maxBodyBytes: 1024 });
    const r = record(t);
    await t.start();
    ls.stream!.write(`event: message\ndata: ${"x".repeat(4096)}`);
    await until(() => r.closes.length === 1, "onclose");
    assertBridgeError(r.errors[0], "LIMIT_EXCEEDED");
    assertBridgeError(r.closes[0], "CLOSED", /exceeds 1024 characters/);
    await s.allClosed();
  });

  it("close() is idempotent, calls onclose once without a reason and drops the stream", async () => {
    const ls = legacyServer();
    const s = await serve(ls.handler);
    const t = client(`${s.origin}/sse`);
    const r = record(t);
    await t.start();
    const first = t.close();
    assert.equal(t.close(), first);
    await first;
    assert.deepEqual(r.closes, [undefined]);
    await s.allClosed();
  });
});
