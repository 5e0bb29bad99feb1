/** Resumption of SSE streams, the GET stream, and session expiry with transparent re-initialize. */
import assert from "node:assert/strict";
import type * as http from "node:http";
import { describe, it } from "node:test";
import { StreamableHttpClientTransport, type HttpClientOptions } from "../../src/transport/http-client.ts";
import {
  INIT_PARAMS,
  accepted,
  closedAfterAll,
  initializeResult,
  notification,
  record,
  request,
  result,
  sendJson,
  sseEvent,
  sseHead,
  type Handler,
} from "./http-client-helpers.ts";
import { assertBridgeError, bridgeError } from "../helpers/errors.ts";
import { until } from "../helpers/wait.ts";

const { serve, keep } = closedAfterAll<StreamableHttpClientTransport>();

function client(url: string, options: Partial<HttpClientOptions> = {}): StreamableHttpClientTransport {
  return keep(new StreamableHttpClientTransport({
    url,
    openGetStream: false,
    reconnect: { initialDelayMs: 10, maxDelayMs: 100, maxAttempts: 3 },
    ...options,
  }));
}

const progress = (n: number) => notification("notifications/progress", { progressToken: 1, progress: n });

/** An event log for one stream: replays what follows a Last-Event-ID. */
class StreamLog {
  readonly events: { id: string; data: string }[] = [];
  add(id: string, message: unknown): string {
    const data = JSON.stringify(message);
    this.events.push({ id, data });
    return sseEvent({ id, data });
  }
  after(lastId: string): string {
    const i = this.events.findIndex((e) => e.id === lastId);
    return this.events.slice(i + 1).map((e) => sseEvent(e)).join("");
  }
}

describe("resuming a POST's SSE stream", () => {
  it("resumes with GET + Last-Event-ID after each drop; no message lost or duplicated", async () => {
    const log = new StreamLog();
    const gets: (string | undefined)[] = [];
    const s = await serve((req, res) => {
      if (req.method === "GET") {
        const last = req.headers["last-event-id"] as string | undefined;
        gets.push(last);
        sseHead(res);
        if (last === "a2") {
          // Replays a3 (cut off in the first stream), adds a4, then ends cleanly, still no response.
          res.write(log.after("a2"));
          res.write(log.add("a4", notification("notifications/message", { level: "info", data: "half way" })));
          res.end();
        } else if (last === "a4") {
          res.write(log.add("a5", result(1, { content: [] })));
          res.end();
        } else {
          res.end();
        }
        return;
      }
      sseHead(res);
      res.write(sseEvent({ id: "a0", retry: 20, data: "" }));
      res.write(log.add("a1", progress(1)));
      res.write(log.add("a2", progress(2)));
      const third = log.add("a3", progress(3));
      res.write(third.slice(0, 15)); // a partial event, then the connection drops
      setTimeout(() => res.destroy(), 20);
    });
    const t = client(`${s.origin}/mcp`);
    t.setProtocolVersion("2025-11-25");
    const r = record(t);
    await t.send(request(1, "tools/call", { name: "slow" }));
    assert.deepEqual(r.messages, [
      progress(1),
      progress(2),
      progress(3),
      notification("notifications/message", { level: "info", data: "half way" }),
      result(1, { content: [] }),
    ]);
    assert.deepEqual(gets, ["a2", "a4"]);
    for (const g of s.requests.filter((q) => q.method === "GET")) {
      assert.equal(g.headers.accept, "text/event-stream");
      assert.equal(g.headers["mcp-protocol-version"], "2025-11-25");
    }
    assert.deepEqual(r.errors, []);
  });

  it("resumes a stream that carried only a priming event (SEP-1699 polling), with the session id", async () => {
    const s = await serve((req, res) => {
      const msg = req.json as { id?: number; method?: string } | undefined;
      if (req.method === "GET") {
        assert.equal(req.headers["last-event-id"], "prime-1");
        sseHead(res);
        res.end(sseEvent({ id: "ev-2", data: JSON.stringify(result(2, { resumed: true })) }));
        return;
      }
      if (msg?.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "sess" });
      sseHead(res, { "mcp-session-id": "sess" });
      res.write(sseEvent({ id: "prime-1", retry: 30, data: "" }));
      setTimeout(() => res.end(), 10);
    });
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(request(2, "tools/call", { name: "test_reconnection" }));
    assert.deepEqual(r.messages.at(-1), result(2, { resumed: true }));
    const get = s.requests.find((q) => q.method === "GET");
    assert.equal(get?.headers["mcp-session-id"], "sess");
  });

  it("gives up after the configured attempts when resuming keeps failing", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") return void res.writeHead(503).end("busy");
      sseHead(res);
      res.write(sseEvent({ id: "x1", data: "" }));
      setTimeout(() => res.destroy(), 10);
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/call")), bridgeError("HTTP_ERROR", /gave up resuming.*after 3 attempts.*503/));
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 3);
  });

  it("fails clearly when the server cannot resume (GET 405)", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") return void res.writeHead(405).end();
      sseHead(res);
      res.write(sseEvent({ id: "x1", data: "" }));
      setTimeout(() => res.end(), 10);
    });
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "tools/call")), bridgeError("HTTP_ERROR", /resuming request "tools\/call" \(id 1\): GET .* answered 405/));
  });

  it("completes a request whose response arrives on the GET stream instead", async () => {
    let getRes: http.ServerResponse | undefined;
    const s = await serve((req, res) => {
      const msg = req.json as { id?: number; method?: string } | undefined;
      if (req.method === "GET") {
        sseHead(res);
        getRes = res;
        return;
      }
      if (msg?.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "g" });
      if (msg?.id === undefined) return accepted(res);
      sseHead(res);
      res.write(sseEvent({ id: "p1", data: "" }));
      setTimeout(() => getRes?.write(sseEvent({ id: "g1", data: JSON.stringify(result(msg.id)) })), 10);
    });
    const t = client(`${s.origin}/mcp`, { openGetStream: true });
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => getRes !== undefined, "the GET stream");
    await t.send(request(2, "tools/call"));
    assert.deepEqual(await r.waitFor((m) => (m as { id?: unknown }).id === 2, "the tools/call response"), result(2));
    assert.deepEqual(r.messages.filter((m) => (m as { id?: unknown }).id === 2).length, 1, "delivered once");
    assert.deepEqual(r.errors, []);
  });
});

describe("the GET stream", () => {
  it("opens after notifications/initialized, reconnects with Last-Event-ID, loses and repeats nothing", async () => {
    const log = new StreamLog();
    const gets: (string | undefined)[] = [];
    const s = await serve((req, res) => {
      const msg = req.json as { id?: number; method?: string } | undefined;
      if (req.method === "GET") {
        const last = req.headers["last-event-id"] as string | undefined;
        gets.push(last);
        sseHead(res);
        if (last === undefined) {
          res.write(sseEvent({ id: "g0", retry: 15, data: "" }));
          res.write(log.add("g1", notification("notifications/tools/list_changed")));
          res.write(log.add("g2", request("srv-1", "roots/list")));
          res.write(log.add("g3", notification("notifications/resources/list_changed")).slice(0, 20));
          setTimeout(() => res.destroy(), 10);
        } else {
          res.write(log.after(last));
          res.write(log.add("g4", notification("notifications/prompts/list_changed")));
          // stays open
        }
        return;
      }
      if (msg?.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s" });
      accepted(res);
    });
    const t = client(`${s.origin}/mcp`, { openGetStream: true, headers: { "x-team": "blue" } });
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 0, "no GET before notifications/initialized");
    await t.send(notification("notifications/initialized"));
    await r.waitFor((m) => (m as { method?: string }).method === "notifications/prompts/list_changed");
    assert.deepEqual(r.messages.slice(1), [
      notification("notifications/tools/list_changed"),
      request("srv-1", "roots/list"),
      notification("notifications/resources/list_changed"),
      notification("notifications/prompts/list_changed"),
    ]);
    assert.deepEqual(gets, [undefined, "g2"]);
    for (const g of s.requests.filter((q) => q.method === "GET")) {
      assert.equal(g.headers["mcp-session-id"], "s");
      assert.equal(g.headers["x-team"], "blue");
      assert.equal(g.headers.accept, "text/event-stream");
    }
  });

  it("takes 405 as 'no GET stream' without retrying or reporting an error", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") return void res.writeHead(405).end();
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id));
      if (msg.id === undefined) return accepted(res);
      sendJson(res, result(msg.id));
    });
    const logs: string[] = [];
    const t = client(`${s.origin}/mcp`, { openGetStream: true, onLog: (m) => logs.push(m) });
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => logs.some((l) => /405/.test(l)), "the 405 to be logged");
    await t.send(request(2, "ping"));
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 1);
    assert.deepEqual(r.errors, []);
  });

  it("reports to onerror once reconnecting fails too often", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") return void res.writeHead(502).end();
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id));
      accepted(res);
    });
    const t = client(`${s.origin}/mcp`, { openGetStream: true });
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => r.errors.length > 0, "the GET stream to give up");
    assertBridgeError(r.errors[0], "HTTP_ERROR", /GET stream: 3 reconnections failed in a row; giving up.*502/);
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 4);
  });
});

describe("session expiry", () => {
  /** Sessions s1, s2, ...; `expire()` forgets every live one. */
  function sessionServer(options: { reinitStatus?: number; alwaysExpired?: boolean } = {}) {
    const live = new Set<string>();
    let count = 0;
    const state = {
      live,
      expire: () => live.clear(),
      handler: ((req, res) => {
        const sid = req.headers["mcp-session-id"] as string | undefined;
        const msg = req.json as { id?: unknown; method?: string } | undefined;
        if (req.method === "DELETE") return void res.writeHead(200).end();
        if (msg?.method === "initialize") {
          if (count > 0 && options.reinitStatus) return void res.writeHead(options.reinitStatus).end("cannot");
          const id = `s${++count}`;
          if (!options.alwaysExpired || count === 1) live.add(id);
          return sendJson(res, initializeResult(msg.id), { "mcp-session-id": id });
        }
        if (sid === undefined || !live.has(sid)) return void res.writeHead(404).end("session not found");
        if (msg?.id === undefined) return accepted(res);
        sendJson(res, result(msg.id, { session: sid }));
      }) as Handler,
    };
    return state;
  }

  it("re-initializes once, transparently, then retries the failed request", async () => {
    const st = sessionServer();
    const s = await serve(st.handler);
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    let expiredEvents = 0;
    t.onsessionexpired = () => expiredEvents++;
    await t.send(request(1, "initialize", INIT_PARAMS));
    t.setProtocolVersion("2025-11-25");
    await t.send(notification("notifications/initialized"));
    st.expire();
    await t.send(request(2, "tools/list"));
    assert.equal(t.sessionId, "s2");
    assert.equal(expiredEvents, 1);
    assert.deepEqual(r.messages, [initializeResult(1), result(2, { session: "s2" })], "the replayed initialize's response is not delivered");
    const seen = s.requests.map((q) => [
      (q.json as { method?: string }).method,
      q.headers["mcp-session-id"] ?? "-",
      q.headers["mcp-protocol-version"] ?? "-",
    ]);
    assert.deepEqual(seen, [
      ["initialize", "-", "-"],
      ["notifications/initialized", "s1", "2025-11-25"],
      ["tools/list", "s1", "2025-11-25"],
      ["initialize", "-", "-"],
      ["notifications/initialized", "s2", "2025-11-25"],
      ["tools/list", "s2", "2025-11-25"],
    ]);
    const replay = s.requests[3]!.json as { id: unknown; params: unknown };
    assert.deepEqual(replay.params, INIT_PARAMS);
    assert.equal(typeof replay.id, "string", "the replayed initialize uses an internal id that cannot clash");
  });

  it("re-initializes once for several requests that hit the expired session together", async () => {
    const st = sessionServer();
    const s = await serve(st.handler);
    const t = client(`${s.origin}/mcp`);
    const r = record(t);
    let expiredEvents = 0;
    t.onsessionexpired = () => expiredEvents++;
    await t.send(request(1, "initialize", INIT_PARAMS));
    st.expire();
    await Promise.all([t.send(request(2, "a")), t.send(request(3, "b")), t.send(request(4, "c")), t.send(notification("n"))]);
    assert.equal(expiredEvents, 1);
    assert.equal(s.requests.filter((q) => (q.json as { method?: string }).method === "initialize").length, 2);
    assert.deepEqual(r.messages.slice(1).map((m) => (m as { result: unknown }).result), [{ session: "s2" }, { session: "s2" }, { session: "s2" }]);
  });

  it("fails clearly on a second consecutive 404", async () => {
    const st = sessionServer({ alwaysExpired: true });
    const s = await serve(st.handler);
    const t = client(`${s.origin}/mcp`);
    await t.send(request(1, "initialize", INIT_PARAMS));
    st.expire();
    await assert.rejects(t.send(request(2, "tools/list")), bridgeError("HTTP_ERROR", /404.*again right after re-initializing/));
  });

  it("fails clearly when the re-initialize itself fails", async () => {
    const st = sessionServer({ reinitStatus: 500 });
    const s = await serve(st.handler);
    const t = client(`${s.origin}/mcp`);
    await t.send(request(1, "initialize", INIT_PARAMS));
    st.expire();
    await assert.rejects(t.send(request(2, "tools/list")), bridgeError("HTTP_ERROR", /session expired \(404\) and re-initializing failed.*500/));
  });

  it("treats 404 without a session as a plain error (nothing to re-initialize)", async () => {
    const s = await serve((_req, res) => void res.writeHead(404).end("no such endpoint"));
    const t = client(`${s.origin}/mcp`);
    await assert.rejects(t.send(request(1, "initialize", INIT_PARAMS)), bridgeError("HTTP_ERROR", /answered 404.*no such endpoint/, {
      details: { status: 404, method: "POST", url: `${s.origin}/mcp` },
    }));
    assert.equal(s.requests.length, 1);
  });
});
