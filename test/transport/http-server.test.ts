import assert from "node:assert/strict";
import { Agent, request as httpRequest } from "node:http";
import { after, describe, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { StreamableHttpServer, type StreamableHttpServerOptions } from "../../src/transport/http-server.ts";
import { agent, buildMcp, call, initSession, JSON_POST, send } from "./http-test-helpers.ts";
import { until } from "../helpers/wait.ts";

after(() => agent.destroy());

/** A listening server over a fresh McpServer; `stop()` closes both. */
async function start(options: Partial<StreamableHttpServerOptions> = {}) {
  const { mcp } = buildMcp();
  const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t), ...options });
  const { url, port } = await http.listen(0);
  return { mcp, http, url, port, stop: async () => (await http.close(), await mcp.close()) };
}

function errorOf(body: string): { id: unknown; code: number } {
  const m = JSON.parse(body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  assert.equal(m.jsonrpc, "2.0");
  assert.equal(typeof m.error.message, "string");
  return { id: m.id, code: m.error.code };
}

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

describe("StreamableHttpServer: request checks", () => {
  test("Host is checked on every request of a kept-alive connection, not only its first", async () => {
    const s = await start();
    const one = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (host: string) =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = httpRequest(s.url, { method: "POST", agent: one, headers: { ...JSON_POST, host } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on("error", reject);
        req.end(JSON.stringify(INIT));
      });
    assert.deepEqual(await post(`localhost:${s.port}`), { status: 200, reused: false });
    assert.deepEqual(await post(`localhost:${s.port}`), { status: 200, reused: true });
    assert.deepEqual(await post("evil.example.com"), { status: 403, reused: true }, "a foreign Host on the same socket");
    assert.deepEqual(await post(`127.0.0.1:${s.port + 1}`), { status: 403, reused: true });
    one.destroy();
    await s.stop();
  });

  test("other paths get 404 and other methods 405 with Allow", async () => {
    const s = await start();
    const wrongPath = await send(new URL("/other", s.url), { headers: JSON_POST, body: INIT });
    assert.equal(wrongPath.status, 404);
    const put = await send(s.url, { method: "PUT", headers: JSON_POST, body: INIT });
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, "GET, POST, DELETE");
    await s.stop();
  });

  test("Host and Origin outside the loopback names of the bound port get 403 with an id-less error", async () => {
    const s = await start();
    const cases: Array<[Record<string, string>, number]> = [
      [{ host: "evil.example.com" }, 403],
      [{ host: `127.0.0.1:${s.port + 1}` }, 403],
      [{ host: `localhost:${s.port}` }, 200],
      [{ host: `[::1]:${s.port}` }, 200],
      [{ origin: "http://evil.example.com" }, 403],
      [{ origin: "null" }, 403],
      [{ origin: `http://localhost:${s.port + 1}` }, 403],
      [{ origin: `http://localhost:${s.port}` }, 200],
      [{ origin: `https://127.0.0.1:${s.port}` }, 200],
      [{ host: "evil.example.com", origin: "http://evil.example.com" }, 403],
    ];
    for (const [headers, status] of cases) {
      const r = await send(s.url, { headers: { ...JSON_POST, ...headers }, body: INIT });
      assert.equal(r.status, status, JSON.stringify(headers));
      if (status === 403) assert.equal(errorOf(r.body).id, null);
    }
    // Checked on every request, not only initialize.
    const session = await initSession(s.url);
    const get = await send(s.url, { method: "GET", headers: session.get({ origin: "http://evil.example.com" }) });
    assert.equal(get.status, 403);
    await s.stop();
  });

  test("configured allow-lists replace the loopback defaults", async () => {
    const s = await start({ allowedHosts: ["mcp.test:8443"], allowedOrigins: ["https://app.test"] });
    assert.equal((await send(s.url, { headers: JSON_POST, body: INIT })).status, 403);
    assert.equal((await send(s.url, { headers: { ...JSON_POST, host: "MCP.test:8443" }, body: INIT })).status, 200);
    const origin = { ...JSON_POST, host: "mcp.test:8443" };
    assert.equal((await send(s.url, { headers: { ...origin, origin: "https://app.test" }, body: INIT })).status, 200);
    assert.equal((await send(s.url, { headers: { ...origin, origin: `http://localhost:${s.port}` }, body: INIT })).status, 403);
    await s.stop();
  });

  test("Content-Type must be application/json (415), Accept must cover both types (406)", async () => {
    const s = await start();
    const ct = async (v: string) => (await send(s.url, { headers: { ...JSON_POST, "content-type": v }, body: INIT })).status;
    assert.equal(await ct("text/plain"), 415);
    assert.equal(await ct("application/json; charset=latin1"), 415);
    assert.equal(await ct("Application/JSON; charset=UTF-8"), 200);
    const noType = await send(s.url, { headers: { accept: JSON_POST.accept }, body: INIT });
    assert.equal(noType.status, 415);
    const acc = async (v: string | undefined) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (v !== undefined) headers.accept = v;
      return (await send(s.url, { headers, body: INIT })).status;
    };
    assert.equal(await acc("application/json"), 406);
    assert.equal(await acc("text/event-stream"), 406);
    assert.equal(await acc(undefined), 406);
    assert.equal(await acc("text/event-stream;q=0.9, application/json;q=1"), 200);
    assert.equal(await acc("*/*"), 200);
    await s.stop();
  });

  test("malformed JSON gets 400 with -32700 and id null; JSON that is not JSON-RPC gets 400 -32600", async () => {
    const s = await start();
    const bad = await send(s.url, { headers: JSON_POST, body: '{"jsonrpc":"2.0",' });
    assert.equal(bad.status, 400);
    assert.deepEqual(errorOf(bad.body), { id: null, code: -32700 });
    const badUtf8 = await send(s.url, { headers: JSON_POST, body: Buffer.from([0x22, 0xff, 0x22]) });
    assert.equal(badUtf8.status, 400);
    assert.equal(errorOf(badUtf8.body).code, -32700);
    const notRpc = await send(s.url, { headers: JSON_POST, body: { jsonrpc: "1.0", id: 7, method: "initialize" } });
    assert.equal(notRpc.status, 400);
    assert.deepEqual(errorOf(notRpc.body), { id: 7, code: -32600 });
    assert.equal((await send(s.url, { headers: JSON_POST, body: "42" })).status, 400);
    await s.stop();
  });

  test("a body over the limit gets 413, whether declared or streamed", async () => {
    const s = await start({ maxBodyBytes: 1024 });
    const declared = await send(s.url, { headers: { ...JSON_POST, "content-length": "5000" }, partial: "{" });
    assert.equal(declared.status, 413);
    assert.equal(declared.headers.connection, "close");
    const streamed = await send(s.url, { headers: JSON_POST, partial: `{"pad":"${"x".repeat(4000)}` });
    assert.equal(streamed.status, 413);
    const fits = await send(s.url, { headers: JSON_POST, body: { ...INIT, pad: "x".repeat(500) } });
    assert.equal(fits.status, 200);
    await s.stop();
  });

  test("a body that does not arrive in time gets 408", async () => {
    const s = await start({ bodyTimeoutMs: 150 });
    const r = await send(s.url, { headers: { ...JSON_POST, "content-length": "100" }, partial: '{"jsonrpc":' });
    assert.equal(r.status, 408);
    assert.equal(errorOf(r.body).id, null);
    // The server is still fine afterwards.
    assert.equal((await send(s.url, { headers: JSON_POST, body: INIT })).status, 200);
    await s.stop();
  });

  test("body reads share one timer: staggered slow bodies each get 408, a complete one in between is served", async () => {
    const s = await start({ bodyTimeoutMs: 150 });
    const slow = { headers: { ...JSON_POST, "content-length": "100" }, partial: '{"jsonrpc":' };
    const first = send(s.url, slow);
    await new Promise((r) => setTimeout(r, 40));
    // Starts and ends while the first waits: the timer armed for the first must still serve the second.
    assert.equal((await send(s.url, { headers: JSON_POST, body: INIT })).status, 200);
    const second = send(s.url, slow);
    const started = performance.now();
    assert.equal((await first).status, 408);
    const r = await second;
    assert.equal(r.status, 408);
    assert.equal(errorOf(r.body).code, -32000);
    assert.ok(performance.now() - started >= 140, "the second body had its own full 150 ms");
    await s.stop();
  });

  test("bearer token: 401 with a Bearer challenge when missing, invalid_token when wrong", async () => {
    const s = await start({ bearerToken: "s3cret-token" });
    const none = await send(s.url, { headers: JSON_POST, body: INIT });
    assert.equal(none.status, 401);
    assert.equal(none.headers["www-authenticate"], "Bearer");
    for (const auth of ["Bearer wrong", "Bearer s3cret-token-longer", "Basic czNjcmV0LXRva2Vu", "Bearer"]) {
      const r = await send(s.url, { headers: { ...JSON_POST, authorization: auth }, body: INIT });
      assert.equal(r.status, 401, auth);
      assert.equal(r.headers["www-authenticate"], 'Bearer error="invalid_token"', auth);
    }
    const ok = await send(s.url, { headers: { ...JSON_POST, authorization: "bearer s3cret-token" }, body: INIT });
    assert.equal(ok.status, 200);
    await s.stop();
  });

  test("an onSession that throws gets 500 and the server keeps serving", async () => {
    let fail = true;
    const { mcp } = buildMcp();
    const http = new StreamableHttpServer({
      onSession: (t) => {
        if (fail) throw new Error("no backend");
        return mcp.connect(t);
      },
    });
    const { url } = await http.listen(0);
    const r = await send(url, { headers: JSON_POST, body: INIT });
    assert.equal(r.status, 500);
    assert.equal(http.sessionCount, 0);
    fail = false;
    assert.equal((await send(url, { headers: JSON_POST, body: INIT })).status, 200);
    await http.close();
    await mcp.close();
  });
  test("bearer token list: any one of the tokens is admitted, others are not", async () => {
    const s = await start({ bearerToken: ["token-for-ci", "token-for-ide"] });
    for (const token of ["token-for-ci", "token-for-ide"]) {
      assert.equal((await send(s.url, { headers: { ...JSON_POST, authorization: `Bearer ${token}` }, body: INIT })).status, 200, token);
    }
    assert.equal((await send(s.url, { headers: { ...JSON_POST, authorization: "Bearer token-for" }, body: INIT })).status, 401);
    await s.stop();
    assert.throws(() => new StreamableHttpServer({ onSession: () => {}, bearerToken: [] }), /at least one token/);
    assert.throws(() => new StreamableHttpServer({ onSession: () => {}, bearerToken: ["ok", "has space"] }), /no whitespace/);
  });

  test("an onSession refusing with LIMIT_EXCEEDED gets 503 with its message and a Retry-After", async () => {
    const http = new StreamableHttpServer({
      onSession: () => {
        throw new BridgeError("LIMIT_EXCEEDED", "at most 0 sessions (maxSessions)");
      },
    });
    const { url } = await http.listen(0);
    const r = await send(url, { headers: JSON_POST, body: INIT });
    assert.equal(r.status, 503);
    assert.equal(r.headers["retry-after"], "5");
    assert.match(JSON.parse(r.body).error.message, /^Service Unavailable: at most 0 sessions \(maxSessions\)$/);
    assert.equal(http.sessionCount, 0);
    await http.close();
  });
});

describe("StreamableHttpServer: sessions", () => {
  test("initialize creates a session with a random visible-ASCII id; DELETE ends it; then 404", async () => {
    const s = await start();
    const a = await initSession(s.url);
    const b = await initSession(s.url);
    assert.match(a.id, /^[\x21-\x7e]{16,}$/);
    assert.notEqual(a.id, b.id);
    assert.equal(s.http.sessionCount, 2);
    assert.equal(s.mcp.sessions.size, 2);
    const used = await send(s.url, { headers: a.post(), body: call(1, "echo", { text: "hi" }) });
    assert.equal(used.status, 200);
    assert.equal(JSON.parse(used.body).result.content[0].text, "hi");
    assert.equal(used.headers["mcp-session-id"], undefined, "only the initialize reply carries the id");

    const del = await send(s.url, { method: "DELETE", headers: { "mcp-session-id": a.id } });
    assert.equal(del.status, 204);
    assert.equal(s.http.sessionCount, 1);
    assert.equal(s.mcp.sessions.size, 1, "the McpServer session ended with the transport");
    assert.equal((await send(s.url, { headers: a.post(), body: call(2, "echo", { text: "x" }) })).status, 404);
    assert.equal((await send(s.url, { method: "GET", headers: a.get() })).status, 404);
    assert.equal((await send(s.url, { method: "DELETE", headers: { "mcp-session-id": a.id } })).status, 404);
    assert.equal((await send(s.url, { headers: b.post(), body: call(3, "echo", { text: "b" }) })).status, 200);
    await s.stop();
  });

  test("a non-initialize request without a session id gets 400; an unknown id 404", async () => {
    const s = await start();
    const missing = await send(s.url, { headers: JSON_POST, body: call(1, "echo", { text: "x" }) });
    assert.equal(missing.status, 400);
    // The one request id was readable, so the refusal echoes it.
    assert.equal(errorOf(missing.body).id, 1);
    const note = await send(s.url, { headers: JSON_POST, body: { jsonrpc: "2.0", method: "notifications/initialized" } });
    assert.equal(note.status, 400);
    assert.equal((await send(s.url, { method: "GET", headers: { accept: "text/event-stream" } })).status, 400);
    assert.equal((await send(s.url, { method: "DELETE" })).status, 400);
    const unknown = await send(s.url, { headers: { ...JSON_POST, "mcp-session-id": "no-such-session" }, body: call(1, "echo", { text: "x" }) });
    assert.equal(unknown.status, 404);
    await s.stop();
  });

  test("idle sessions expire; an open GET stream keeps a session alive", async (t) => {
    // The idle clock is mocked: sessions expire when the test moves time, never because a slow
    // machine took longer than sessionIdleMs between two requests. Waits poll with setImmediate.
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const s = await start({ sessionIdleMs: 60 });
    try {
      const idle = await initSession(s.url);
      const streaming = await initSession(s.url);
      const get = await send(s.url, { method: "GET", headers: streaming.get() });
      assert.equal(get.status, 200);
      t.mock.timers.tick(59);
      assert.equal(s.http.sessionCount, 2, "59 ms idle: both sessions are still there");
      t.mock.timers.tick(1);
      assert.equal(s.http.sessionCount, 1, "60 ms idle: the idle session expired, the streaming one did not");
      assert.equal((await send(s.url, { headers: idle.post(), body: call(1, "echo", { text: "x" }) })).status, 404);
      t.mock.timers.tick(200);
      assert.equal((await send(s.url, { headers: streaming.post(), body: call(2, "echo", { text: "y" }) })).status, 200);
      get.sse!.close();
      const expired = () => {
        t.mock.timers.tick(60);
        return s.http.sessionCount === 0;
      };
      await until(expired, "the streaming session to expire once its stream closed", { spin: true });
      assert.equal(s.mcp.sessions.size, 0);
    } finally {
      t.mock.timers.reset();
      await s.stop();
    }
  });

  test("notifications and responses alone get 202 with no body", async () => {
    const s = await start();
    const session = await initSession(s.url);
    const note = await send(s.url, { headers: session.post(), body: { jsonrpc: "2.0", method: "notifications/roots/list_changed" } });
    assert.equal(note.status, 202);
    assert.equal(note.body, "");
    const resp = await send(s.url, { headers: session.post(), body: { jsonrpc: "2.0", id: 99, result: {} } });
    assert.equal(resp.status, 202);
    assert.equal(resp.body, "");
    await s.stop();
  });
});

describe("StreamableHttpServer: MCP-Protocol-Version", () => {
  test("any supported version is accepted, an unsupported one gets 400, absent is fine", async () => {
    const s = await start();
    const session = await initSession(s.url, "2025-11-25");
    const status = async (headers: Record<string, string>, method = "POST") => {
      const body = method === "POST" ? call(1, "echo", { text: "v" }) : undefined;
      const r = await send(s.url, { method, headers, body });
      r.sse?.close();
      return r.status;
    };
    assert.equal(await status(session.post({ "mcp-protocol-version": "2025-03-26" })), 200);
    assert.equal(await status(session.post({ "mcp-protocol-version": "2025-06-18" })), 200);
    const absent = session.post();
    delete absent["mcp-protocol-version"];
    assert.equal(await status(absent), 200);
    for (const bad of ["2099-01-01", "2000-01-01", "invalid-protocol-version"]) {
      assert.equal(await status(session.post({ "mcp-protocol-version": bad })), 400, bad);
      assert.equal(await status(session.get({ "mcp-protocol-version": bad }), "GET"), 400, bad);
      assert.equal(await status({ "mcp-session-id": session.id, "mcp-protocol-version": bad }, "DELETE"), 400, bad);
    }
    // Not required (nor judged) on initialize.
    const init = await send(s.url, { headers: { ...JSON_POST, "mcp-protocol-version": "2099-01-01" }, body: INIT });
    assert.equal(init.status, 200);
    assert.equal(s.http.sessionCount, 2, "the session survived every refused request");
    await s.stop();
  });
});
