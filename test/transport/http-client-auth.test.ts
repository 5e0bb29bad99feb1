/** 401/403: the WWW-Authenticate parser and the AuthError the HTTP client raises. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { AuthError, parseWwwAuthenticate, summarizeChallenges } from "../../src/transport/auth-error.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import {
  INIT_PARAMS,
  accepted,
  closedAfterAll,
  initializeResult,
  notification,
  record,
  request,
  sendJson,
} from "./http-client-helpers.ts";
import { until } from "../helpers/wait.ts";

const { serve, keep } = closedAfterAll<StreamableHttpClientTransport>();

describe("parseWwwAuthenticate", () => {
  it("parses a full MCP Bearer challenge", () => {
    const header =
      'Bearer realm="mcp", error="invalid_token", error_description="The access token expired", ' +
      'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write"';
    assert.deepEqual(parseWwwAuthenticate(header), [{
      scheme: "Bearer",
      params: {
        realm: "mcp",
        error: "invalid_token",
        error_description: "The access token expired",
        resource_metadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        scope: "files:read files:write",
      },
    }]);
  });

  it("handles escapes and commas inside quoted strings", () => {
    const [c] = parseWwwAuthenticate('Bearer error_description="a \\"quoted\\" word, and a \\\\ backslash", scope="a,b"');
    assert.deepEqual(c!.params, { error_description: 'a "quoted" word, and a \\ backslash', scope: "a,b" });
  });

  it("splits several schemes, with token68 and parameter-less challenges", () => {
    const header = 'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple", Negotiate abc123==, Bearer';
    assert.deepEqual(parseWwwAuthenticate(header), [
      { scheme: "Newauth", params: { realm: "apps", type: "1", title: 'Login to "apps"' } },
      { scheme: "Basic", params: { realm: "simple" } },
      { scheme: "Negotiate", params: {}, token68: "abc123==" },
      { scheme: "Bearer", params: {} },
    ]);
  });

  it("lower-cases parameter names, keeps the first duplicate, tolerates odd spacing and bare URLs", () => {
    const [c] = parseWwwAuthenticate('  bearer   Scope = "a"  ,SCOPE="b",  resource_metadata=https://x.example/prm  , ,');
    assert.equal(c!.scheme, "bearer");
    assert.deepEqual(c!.params, { scope: "a", resource_metadata: "https://x.example/prm" });
  });

  it("survives junk: an unterminated quote, stray symbols, an empty header", () => {
    assert.deepEqual(parseWwwAuthenticate(""), []);
    assert.deepEqual(parseWwwAuthenticate('Bearer error="unterminated'), [{ scheme: "Bearer", params: { error: "unterminated" } }]);
    const parsed = parseWwwAuthenticate('@@ Bearer scope="s" ;;');
    assert.deepEqual(parsed.find((c) => c.scheme === "Bearer")?.params, { scope: "s" });
  });

  it("summarizes the Bearer challenge even when another scheme comes first", () => {
    const s = summarizeChallenges(parseWwwAuthenticate('Basic realm="x", Bearer error="insufficient_scope", scope="admin"'));
    assert.equal(s.scheme, "Bearer");
    assert.equal(s.error, "insufficient_scope");
    assert.equal(s.scope, "admin");
    assert.deepEqual(summarizeChallenges([]), { params: {} });
  });
});

describe("AuthError from the Streamable HTTP client", () => {
  it("401 with a full challenge: typed error, parsed challenge, no retry", async () => {
    const challenge =
      'Bearer error="invalid_token", error_description="expired", ' +
      'resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", scope="tools:call"';
    const s = await serve((_req, res) => {
      res.writeHead(401, { "www-authenticate": challenge, "content-type": "application/json" });
      res.end('{"error":"invalid_token"}');
    });
    const t = new StreamableHttpClientTransport({ url: `${s.origin}/mcp?api_key=SECRET`, openGetStream: false });
    keep(t);
    const err = await t.send(request(1, "initialize", INIT_PARAMS)).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.ok(err instanceof BridgeError);
    assert.equal(err.code, "AUTH_FAILED");
    assert.equal(err.status, 401);
    assert.equal(err.url, `${s.origin}/mcp`, "the query string stays out of the error");
    assert.deepEqual(err.challenge, {
      scheme: "Bearer",
      error: "invalid_token",
      errorDescription: "expired",
      resourceMetadata: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
      scope: "tools:call",
      params: {
        error: "invalid_token",
        error_description: "expired",
        resource_metadata: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
        scope: "tools:call",
      },
    });
    assert.match(err.message, /HTTP 401 from http:\/\/127\.0\.0\.1:\d+\/mcp: the server requires authorization/);
    assert.match(err.message, /scope "tools:call"/);
    assert.match(err.message, /resource metadata http:\/\/127\.0\.0\.1\/\.well-known/);
    assert.match(err.message, /Give the transport an `auth` provider/);
    assert.doesNotMatch(err.message, /SECRET/);
    assert.equal(s.requests.length, 1, "no retry");
  });

  it("403 insufficient_scope on a later request", async () => {
    const s = await serve((req, res) => {
      if (req.method === "DELETE") return void res.writeHead(200).end();
      const msg = req.json as { id?: unknown; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "z" });
      if (msg.id === undefined) return accepted(res);
      res.writeHead(403, { "www-authenticate": 'Bearer error="insufficient_scope", scope="admin:write", resource_metadata="https://as.example/prm"' });
      res.end();
    });
    const t = new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false, headers: { authorization: "Bearer low" } });
    keep(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    const err = await t.send(request(2, "tools/call")).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.equal(err.status, 403);
    assert.equal(err.challenge.error, "insufficient_scope");
    assert.equal(err.challenge.scope, "admin:write");
    assert.match(err.message, /HTTP 403 .*the token lacks a required scope.*scope "admin:write"/);
    assert.equal(s.requests.length, 2, "no retry");
  });

  it("403 without a challenge still says what happened", async () => {
    const s = await serve((_req, res) => void res.writeHead(403).end("Forbidden origin"));
    const t = new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, openGetStream: false });
    keep(t);
    const err = await t.send(notification("notifications/initialized")).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof AuthError);
    assert.match(err.message, /HTTP 403 .*refused access \(no WWW-Authenticate challenge\)/);
    assert.deepEqual(err.challenge, { params: {} });
  });

  it("a 401 on the GET stream goes to onerror once, without reconnecting", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") return void res.writeHead(401, { "www-authenticate": "Bearer" }).end();
      const msg = req.json as { id?: unknown; method?: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id));
      accepted(res);
    });
    const t = new StreamableHttpClientTransport({ url: `${s.origin}/mcp`, reconnect: { initialDelayMs: 5 } });
    keep(t);
    const r = record(t);
    await t.send(request(1, "initialize", INIT_PARAMS));
    await t.send(notification("notifications/initialized"));
    await until(() => r.errors.length > 0, "the GET stream's error");
    assert.ok(r.errors[0] instanceof AuthError);
    await t.close();
    assert.equal(s.requests.filter((q) => q.method === "GET").length, 1);
    assert.equal(r.errors.length, 1);
  });
});
