/**
 * The `auth` option of the HTTP client transports (src/transport/http-auth.ts): the bearer token
 * on every request, one retry after a 401/403 the provider handled, one challenge handled at a
 * time per provider, and the provider's refusal as the request's error.
 */
import assert from "node:assert/strict";
import type * as http from "node:http";
import { describe, it } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { AuthError } from "../../src/transport/auth-error.ts";
import type { HttpAuthProvider } from "../../src/transport/auth-provider.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { SseClientTransport } from "../../src/transport/sse-client.ts";
import type { Transport } from "../../src/transport/transport.ts";
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
  type SeenRequest,
} from "./http-client-helpers.ts";
import { until } from "../helpers/wait.ts";

const { serve, keep } = closedAfterAll<Transport>();

/** A provider that hands out `t1`, then `t2`, `t3`... one per challenge, recording each call. */
class CountingProvider implements HttpAuthProvider {
  readonly challenges: { status: number; header: string | undefined }[] = [];
  token: string | undefined;
  refuse: Error | undefined;
  private next = 1;

  /** `null`: no token until the first challenge. */
  constructor(initial: string | null = "t1") {
    this.token = initial ?? undefined;
    if (initial !== null) this.next = 2;
  }

  async accessToken(): Promise<string | undefined> {
    return this.token;
  }

  async handleUnauthorized(status: number, header: string | undefined): Promise<string> {
    this.challenges.push({ status, header });
    // A turn of the event loop, so concurrent refusals can pile up behind this one.
    await new Promise((r) => setImmediate(r));
    if (this.refuse) throw this.refuse;
    this.token = `t${this.next++}`;
    return this.token;
  }
}

const bearer = (r: SeenRequest) => r.headers.authorization;

/** A Streamable HTTP server that accepts only `Bearer <valid>` (a changing set), answering `refusal` otherwise. */
function guardedServer(valid: Set<string>, refusal: { status: number; header: string } = { status: 401, header: 'Bearer resource_metadata="http://127.0.0.1/prm", scope="a"' }) {
  return (req: SeenRequest, res: http.ServerResponse) => {
    const token = bearer(req)?.replace(/^Bearer /, "");
    if (token === undefined || !valid.has(token)) return void res.writeHead(refusal.status, { "www-authenticate": refusal.header }).end();
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method === "GET") {
      sseHead(res);
      res.write(sseEvent({ event: "message", data: JSON.stringify(notification("notifications/tools/list_changed")) }));
      return;
    }
    const msg = req.json as { id?: unknown; method?: string };
    if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s1" });
    if (msg.id === undefined) return accepted(res);
    sendJson(res, result(msg.id, { ok: true }));
  };
}

describe("Streamable HTTP client with an auth provider", () => {
  it("sends the bearer token on every request: POSTs, the GET stream and the DELETE", async () => {
    const s = await serve(guardedServer(new Set(["t1"])));
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, auth: new CountingProvider() }));
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => r.messages.some((m) => (m as { method?: string }).method === "notifications/tools/list_changed"), "the GET stream's notification");
    await t.send(request(2, "tools/list"));
    await t.close();
    assert.deepEqual(s.requests.map((q) => [q.method, bearer(q)]), [
      ["POST", "Bearer t1"],
      ["POST", "Bearer t1"],
      ["GET", "Bearer t1"],
      ["POST", "Bearer t1"],
      ["DELETE", "Bearer t1"],
    ]);
  });

  it("without a token the request goes bare, and its 401 is handed to the provider once before one retry", async () => {
    const valid = new Set(["t1"]);
    const s = await serve(guardedServer(valid));
    const auth = new CountingProvider(null);
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    await t.send(request(1, "initialize", INIT_PARAMS));
    assert.deepEqual(s.requests.map(bearer), [undefined, "Bearer t1"]);
    assert.deepEqual(auth.challenges, [{ status: 401, header: 'Bearer resource_metadata="http://127.0.0.1/prm", scope="a"' }]);
  });

  it("a second 401 after the retry fails the request with its AuthError: never a loop", async () => {
    const s = await serve(guardedServer(new Set()));
    const auth = new CountingProvider();
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    const err = await t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.status, 401);
    assert.deepEqual(s.requests.map(bearer), ["Bearer t1", "Bearer t2"]);
    assert.equal(auth.challenges.length, 1);
    assert.doesNotMatch(err.message, /t1|t2/);
  });

  it("requests refused together share one handling of the challenge, and a stale refusal only retries", async () => {
    const valid = new Set<string>();
    const s = await serve(guardedServer(valid));
    const auth = new CountingProvider();
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    valid.add("t1");
    await t.send(request(1, "initialize", INIT_PARAMS));
    valid.clear();
    valid.add("t2");
    await Promise.all([t.send(request(2, "tools/list")), t.send(request(3, "prompts/list")), t.send(notification("notifications/x"))]);
    assert.equal(auth.challenges.length, 1, "one refresh for the three refusals");
    assert.equal(s.requests.filter((q) => bearer(q) === "Bearer t2").length, 3);
  });

  it("the provider's refusal is the request's error, and nothing is sent again", async () => {
    const s = await serve(guardedServer(new Set()));
    const auth = new CountingProvider();
    auth.refuse = new BridgeError("AUTH_FAILED", "the user declined");
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    await assert.rejects(t.send(request(1, "initialize", INIT_PARAMS)), { code: "AUTH_FAILED", message: "the user declined" });
    assert.equal(s.requests.length, 1);
  });

  it("403 insufficient_scope is handed over with its challenge, and the retry carries the new token", async () => {
    const scopeChallenge = 'Bearer error="insufficient_scope", scope="admin"';
    const s = await serve((req, res) => {
      const msg = req.json as { method?: string } | undefined;
      if (msg?.method === "tools/call" && bearer(req) === "Bearer t1") return void res.writeHead(403, { "www-authenticate": scopeChallenge }).end();
      guardedServer(new Set(["t1", "t2"]))(req, res);
    });
    const auth = new CountingProvider();
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(request(2, "tools/call", { name: "x" }));
    assert.deepEqual(auth.challenges, [{ status: 403, header: scopeChallenge }]);
    assert.equal(bearer(s.requests.at(-1)!), "Bearer t2");
  });

  it("a step-up may follow the first authorization, within 3 challenges per request: never a loop", async () => {
    const scopeChallenge = 'Bearer error="insufficient_scope", scope="more"';
    const s = await serve((req, res) => {
      if (bearer(req) === undefined) return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      res.writeHead(403, { "www-authenticate": scopeChallenge }).end();
    });
    const auth = new CountingProvider(null);
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    const err = await t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.status, 403);
    assert.deepEqual(auth.challenges.map((c) => c.status), [401, 403, 403]);
    assert.deepEqual(s.requests.map(bearer), [undefined, "Bearer t1", "Bearer t2", "Bearer t3"]);
  });

  it("a 401 after a step-up is not retried", async () => {
    const s = await serve((req, res) => {
      if (bearer(req) === "Bearer t1") return void res.writeHead(403, { "www-authenticate": 'Bearer error="insufficient_scope", scope="x"' }).end();
      res.writeHead(401, { "www-authenticate": "Bearer" }).end();
    });
    const auth = new CountingProvider();
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    await assert.rejects(t.send(request(1, "initialize", INIT_PARAMS)), { name: "AuthError", status: 401 });
    assert.deepEqual(auth.challenges.map((c) => c.status), [403]);
  });

  it("a 401 on the GET stream gets a new token and the stream opens again with it", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET" && bearer(req) === "Bearer t1") return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      guardedServer(new Set(["t1", "t2"]))(req, res);
    });
    const auth = new CountingProvider();
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, auth }));
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => r.messages.some((m) => (m as { method?: string }).method === "notifications/tools/list_changed"), "the GET stream's notification");
    assert.deepEqual(s.requests.filter((q) => q.method === "GET").map(bearer), ["Bearer t1", "Bearer t2"]);
    assert.deepEqual(r.errors, []);
  });
});

describe("sender-constrained tokens (DPoP) through the provider", () => {
  it("the provider's headers go on every request; a nonce challenge is one more retry, not the one 401 retry", async () => {
    const s = await serve((req, res) => {
      if (req.headers.authorization === undefined) return void res.writeHead(401, { "www-authenticate": "DPoP" }).end();
      if (req.headers.dpop !== "proof nonce=n1") {
        return void res.writeHead(401, { "www-authenticate": 'DPoP error="use_dpop_nonce"', "dpop-nonce": "n1" }).end();
      }
      const msg = req.json as { id?: unknown };
      sendJson(res, initializeResult(msg.id));
    });
    let nonce = "";
    const statuses: (string | undefined)[] = [];
    const auth: HttpAuthProvider = {
      accessToken: async () => (statuses.length === 0 ? undefined : "bound"),
      handleUnauthorized: async (_status, header, response) => {
        statuses.push(header);
        if (response?.dpopNonce !== undefined) nonce = response.dpopNonce;
        return "bound";
      },
      authorizationHeaders: (token, method, url) => ({ authorization: `DPoP ${token}`, dpop: nonce === "" ? `proof ${method} ${url.pathname}` : `proof nonce=${nonce}` }),
    };
    const t = keep(new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth }));
    await t.send(request(1, "initialize", INIT_PARAMS));
    assert.deepEqual(statuses, ["DPoP", 'DPoP error="use_dpop_nonce"']);
    assert.deepEqual(s.requests.map((q) => [q.headers.authorization, q.headers.dpop]), [
      [undefined, undefined],
      ["DPoP bound", "proof POST /mcp"],
      ["DPoP bound", "proof nonce=n1"],
    ]);
  });
});

describe("legacy SSE and auto transports with an auth provider", () => {
  it("SSE: the stream GET and the message POSTs carry the token; a 401 on the GET is retried once", async () => {
    let stream: http.ServerResponse | undefined;
    const s = await serve((req, res) => {
      if (bearer(req) !== "Bearer t2") return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      if (req.method === "GET") {
        sseHead(res);
        res.write(sseEvent({ event: "endpoint", data: "/messages" }));
        stream = res;
        return;
      }
      res.writeHead(202).end();
      const msg = req.json as { id?: unknown };
      stream?.write(sseEvent({ event: "message", data: JSON.stringify(initializeResult(msg.id, "2024-11-05")) }));
    });
    const auth = new CountingProvider();
    const t = keep(new SseClientTransport({ url: `${s.origin}/sse`, auth }));
    const r = record(t);
    await t.start();
    await t.send(request(1, "initialize", INIT_PARAMS));
    await until(() => r.messages.length > 0, "the initialize result");
    assert.deepEqual(s.requests.map((q) => [q.method, bearer(q)]), [["GET", "Bearer t1"], ["GET", "Bearer t2"], ["POST", "Bearer t2"]]);
  });

  it("auto: a 401 on the initialize POST is handled, not a reason to fall back to SSE", async () => {
    const s = await serve(guardedServer(new Set(["t2"])));
    const auth = new CountingProvider();
    const t = new AutoHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, auth });
    keep(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    assert.equal(t.selected, "streamable-http");
    assert.deepEqual(s.requests.map((q) => [q.method, bearer(q)]), [["POST", "Bearer t1"], ["POST", "Bearer t2"]]);
  });
});
