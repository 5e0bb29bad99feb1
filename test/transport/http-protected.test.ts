/**
 * StreamableHttpServer as an OAuth protected resource: metadata, 401/403 challenges, a
 * verifier that fails or hangs, sessions bound to their principal, and `ctx.auth` in handlers
 * on both eras. Raw HTTP where the test is about the wire; McpClient where it is about use.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { AuthError } from "../../src/transport/auth-error.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import type { AuthInfo, ProtectedResourceOptions } from "../../src/transport/http-protected.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { eraHeaders, eraMeta, V } from "./http-era-helpers.ts";
import { agent, JSON_POST, send } from "./http-test-helpers.ts";

after(() => agent.destroy());

const ISSUER = "https://auth.example.test";
/** Tokens the test verifier knows. */
const TOKENS: Record<string, AuthInfo> = {
  alice: { clientId: "c1", subject: "alice", scopes: ["mcp:read"] },
  aliceAdmin: { clientId: "c1", subject: "alice", scopes: ["mcp:read", "mcp:admin"] },
  bob: { clientId: "c1", subject: "bob", scopes: ["mcp:read"] },
  expired: { clientId: "c1", subject: "alice", scopes: ["mcp:read"], expiresAt: 1 },
};

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

/**
 * A protected server whose `whoami` tool reports ctx.auth and whose `admin` tool needs
 * mcp:admin. It is mounted on a node:http server that listens first, since the resource URL
 * (and so the metadata and the audience) names the port.
 */
async function serve(extra: Partial<ProtectedResourceOptions> = {}) {
  const mcp = new McpServer({ name: "protected", version: "1.0.0" });
  mcp.tool({ name: "whoami", inputSchema: { type: "object" } }, (_args, ctx) => ({
    content: [{ type: "text", text: JSON.stringify({ subject: ctx.auth?.subject, scopes: ctx.auth?.scopes }) }],
  }));
  mcp.tool({ name: "admin", inputSchema: { type: "object" } }, () => ({ content: [{ type: "text", text: "done" }] }));
  const box: { resource: string } = { resource: "" };
  const options = (resource: string): ProtectedResourceOptions => ({
    resource,
    authorizationServers: [ISSUER],
    scopesSupported: ["mcp:read", "mcp:admin"],
    requiredScopes: ["mcp:read"],
    scopesFor: (m) => (m.method === "tools/call" && (m.params as { name?: unknown } | undefined)?.name === "admin" ? ["mcp:admin"] : undefined),
    verifier: async (token) => {
      if (token === "elsewhere") return { clientId: "c1", subject: "alice", scopes: ["mcp:read"], audience: "https://other.test/mcp" };
      const info = TOKENS[token];
      return info && { ...info, audience: box.resource };
    },
    ...extra,
  });
  const host = createServer();
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
  box.resource = `http://127.0.0.1:${(host.address() as AddressInfo).port}/mcp`;
  const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t), protectedResource: options(box.resource) });
  host.on("request", (req, res) => void http.handle(req, res));
  const stop = async (): Promise<void> => {
    await http.close();
    await mcp.close();
    host.closeAllConnections();
    await new Promise((resolve) => host.close(resolve));
  };
  return { url: new URL(box.resource), resource: box.resource, stop };
}

const bearer = (token: string) => ({ ...JSON_POST, authorization: `Bearer ${token}` });

describe("StreamableHttpServer with protectedResource", () => {
  test("publishes its metadata at the path-aware and the root well-known URLs, public and read-only", async () => {
    const s = await serve();
    try {
      for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
        const r = await send(new URL(path, s.url), { method: "GET" });
        assert.equal(r.status, 200, path);
        assert.equal(r.headers["access-control-allow-origin"], "*");
        assert.deepEqual(JSON.parse(r.body), {
          resource: s.resource,
          authorization_servers: [ISSUER],
          bearer_methods_supported: ["header"],
          scopes_supported: ["mcp:read", "mcp:admin"],
        });
      }
      const post = await send(new URL("/.well-known/oauth-protected-resource/mcp", s.url), { headers: JSON_POST, body: {} });
      assert.equal(post.status, 405);
      assert.equal((await send(new URL("/.well-known/other", s.url), { method: "GET" })).status, 404);
    } finally {
      await s.stop();
    }
  });

  test("no token: 401 naming the metadata and the scope, without an error code", async () => {
    const s = await serve();
    try {
      const r = await send(s.url, { headers: JSON_POST, body: INIT });
      assert.equal(r.status, 401);
      assert.equal(r.headers["www-authenticate"], `Bearer resource_metadata="http://127.0.0.1:${s.url.port}/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`);
      assert.equal((JSON.parse(r.body) as { error: { code: number } }).error.code, -32000);
    } finally {
      await s.stop();
    }
  });

  test("an unknown, expired or foreign-audience token: 401 invalid_token, each with its reason", async () => {
    const s = await serve();
    try {
      for (const [token, why] of [["nobody", "not valid"], ["expired", "expired"], ["elsewhere", "another resource"]]) {
        const r = await send(s.url, { headers: bearer(token!), body: INIT });
        assert.equal(r.status, 401, token);
        assert.match(String(r.headers["www-authenticate"]), /^Bearer error="invalid_token", resource_metadata="[^"]+", scope="mcp:read"$/);
        assert.match((JSON.parse(r.body) as { error: { message: string } }).error.message, new RegExp(why!));
      }
      const malformed = await send(s.url, { headers: { ...JSON_POST, authorization: "Basic abc" }, body: INIT });
      assert.equal(malformed.status, 401);
      assert.match(String(malformed.headers["www-authenticate"]), /error="invalid_request"/);
    } finally {
      await s.stop();
    }
  });

  test("a verifier that throws or never answers gives 503, not a new sign-in", async () => {
    const throwing = await serve({ verifier: () => Promise.reject(new Error("introspection down")) });
    const hanging = await serve({ verifier: () => new Promise(() => {}), verifyTimeoutMs: 50 });
    try {
      const a = await send(throwing.url, { headers: bearer("alice"), body: INIT });
      assert.equal(a.status, 503);
      assert.match(a.body, /introspection down/);
      const b = await send(hanging.url, { headers: bearer("alice"), body: INIT });
      assert.equal(b.status, 503);
      assert.match(b.body, /no answer within 50 ms/);
    } finally {
      await throwing.stop();
      await hanging.stop();
    }
  });

  test("a call needing a scope the token lacks: 403 insufficient_scope asking for held plus needed", async () => {
    const s = await serve();
    try {
      const init = await send(s.url, { headers: bearer("alice"), body: INIT });
      assert.equal(init.status, 200);
      const sid = String(init.headers["mcp-session-id"]);
      const h = { ...bearer("alice"), "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25" };
      const r = await send(s.url, { headers: h, body: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "admin", arguments: {} } } });
      assert.equal(r.status, 403);
      assert.equal(r.headers["www-authenticate"], `Bearer error="insufficient_scope", resource_metadata="http://127.0.0.1:${s.url.port}/.well-known/oauth-protected-resource/mcp", scope="mcp:read mcp:admin"`);
      // The stepped-up token of the same principal goes on in the same session.
      const up = await send(s.url, { headers: { ...h, authorization: "Bearer aliceAdmin" }, body: { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "admin", arguments: {} } } });
      assert.equal(up.status, 200);
    } finally {
      await s.stop();
    }
  });

  test("a session opened by one principal is refused to another", async () => {
    const s = await serve();
    try {
      const init = await send(s.url, { headers: bearer("alice"), body: INIT });
      const sid = String(init.headers["mcp-session-id"]);
      const r = await send(s.url, { headers: { ...bearer("bob"), "mcp-session-id": sid }, body: { jsonrpc: "2.0", id: 2, method: "tools/list" } });
      assert.equal(r.status, 403);
      assert.match(r.body, /belongs to another principal/);
      const del = await send(s.url, { method: "DELETE", headers: { authorization: "Bearer bob", "mcp-session-id": sid } });
      assert.equal(del.status, 403);
    } finally {
      await s.stop();
    }
  });

  test("handlers see the verified principal: McpClient on a 2025 session, raw POST on 2026-07-28", async () => {
    const s = await serve();
    const client = new McpClient({ clientInfo: { name: "t", version: "0" } });
    try {
      await client.connect(new StreamableHttpClientTransport({ url: s.url, headers: { authorization: "Bearer alice" } }));
      const r = await client.callTool("whoami", {});
      const said = r.content[0]?.type === "text" ? r.content[0].text : "";
      assert.deepEqual(JSON.parse(said), { subject: "alice", scopes: ["mcp:read"] });

      const params = { name: "whoami", arguments: {}, _meta: eraMeta() };
      const era = await send(s.url, { headers: { ...bearer("bob"), ...eraHeaders("tools/call", "whoami") }, body: { jsonrpc: "2.0", id: 9, method: "tools/call", params } });
      assert.equal(era.status, 200);
      const text = (JSON.parse(era.body) as { result: { content: { text: string }[] } }).result.content[0]!.text;
      assert.deepEqual(JSON.parse(text), { subject: "bob", scopes: ["mcp:read"] });
      assert.equal(V, "2026-07-28");
    } finally {
      await client.close();
      await s.stop();
    }
  });

  test("McpClient without a token fails with AuthError carrying the resource metadata URL", async () => {
    const s = await serve();
    const client = new McpClient({ clientInfo: { name: "t", version: "0" } });
    try {
      await assert.rejects(client.connect(new StreamableHttpClientTransport({ url: s.url })), (err: unknown) => {
        assert.ok(err instanceof AuthError);
        assert.equal(err.status, 401);
        assert.equal(err.challenge?.resourceMetadata, `http://127.0.0.1:${s.url.port}/.well-known/oauth-protected-resource/mcp`);
        return true;
      });
    } finally {
      await client.close();
      await s.stop();
    }
  });

  test("without a resource option the resource is http://<Host><path>, in the metadata, the challenge and the audience check", async () => {
    const mcp = new McpServer({ name: "protected", version: "1.0.0" });
    let audience = "";
    const http = new StreamableHttpServer({
      onSession: (t) => mcp.connect(t),
      protectedResource: { authorizationServers: [ISSUER], verifier: async () => ({ subject: "alice", scopes: [], audience }) },
    });
    const { url } = await http.listen(0);
    try {
      const meta = await send(new URL("/.well-known/oauth-protected-resource/mcp", url), { method: "GET" });
      assert.equal((JSON.parse(meta.body) as { resource: string }).resource, url.href);
      const anon = await send(url, { headers: JSON_POST, body: INIT });
      assert.equal(anon.headers["www-authenticate"], `Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`);
      audience = "http://localhost:1/mcp";
      assert.equal((await send(url, { headers: bearer("x"), body: INIT })).status, 401, "an audience for another host");
      audience = url.href;
      assert.equal((await send(url, { headers: bearer("x"), body: INIT })).status, 200);
    } finally {
      await http.close();
      await mcp.close();
    }
  });

  test("bad options are refused when the server is built", () => {
    const base = { resource: "http://127.0.0.1:1/mcp", authorizationServers: [ISSUER], verifier: async () => undefined };
    const build = (p: Partial<ProtectedResourceOptions>, bearerToken?: string) =>
      new StreamableHttpServer({ onSession: () => {}, bearerToken, protectedResource: { ...base, ...p } });
    assert.throws(() => build({ resource: "not a url" }), /absolute URL/);
    assert.throws(() => build({ resource: "ftp://x.test/mcp" }), /http\(s\) URL/);
    assert.throws(() => build({ resource: "https://x.test/mcp#frag" }), /without a fragment/);
    assert.throws(() => build({ authorizationServers: [] }), /at least one/);
    assert.throws(() => build({ requiredScopes: ['bad"scope'] }), /not a valid OAuth scope/);
    assert.throws(() => build({}, "static-token"), /exclude each other/);
  });
});
