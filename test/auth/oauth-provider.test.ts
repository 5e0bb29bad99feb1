import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { afterEach, beforeEach, describe, test } from "node:test";
import { OAuthProvider, type OAuthProviderOptions } from "../../src/auth/oauth-provider.ts";
import { MemoryTokenStore } from "../../src/auth/token-store.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const REDIRECT = "http://127.0.0.1:9/callback";

/** The user agent: follows the authorization URL and returns the redirect it gets. */
async function consent(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  return res.headers.get("location") ?? assert.fail(`no redirect from the authorization endpoint (HTTP ${res.status})`);
}

describe("OAuthProvider: the client flow on 401 against a loopback resource and authorization server", () => {
  let rs: AuthServerFixture;
  let as: AuthServerFixture;
  let opened: string[];
  let clock: number;
  let secrets: string[];
  const provider = (more: Partial<OAuthProviderOptions> = {}) =>
    new OAuthProvider({
      serverUrl: `${rs.origin}/mcp`,
      redirectUri: REDIRECT,
      authorize: async (url) => {
        opened.push(url);
        return consent(url);
      },
      now: () => clock,
      onSecret: (s) => secrets.push(s),
      ...more,
    });
  const challenge = () => `Bearer resource_metadata="${rs.origin}/.well-known/oauth-protected-resource/mcp", scope="tools:read"`;

  beforeEach(async () => {
    rs = await AuthServerFixture.start();
    as = await AuthServerFixture.start({ issuerPath: "/tenant", metadata: { scopes_supported: ["tools:read", "tools:write", "offline_access"] } });
    rs.route("/.well-known/oauth-protected-resource/mcp", () => json(200, { resource: `${rs.origin}/mcp`, authorization_servers: [as.issuer], scopes_supported: ["tools:read", "tools:write"] }));
    opened = [];
    clock = 1_000_000;
    secrets = [];
  });
  afterEach(async () => {
    await rs.close();
    await as.close();
  });

  test("a 401 runs discovery, registration and the code flow; the token is stored and reused", async () => {
    const oauth = provider();
    assert.equal(await oauth.accessToken(), undefined);
    const token = await oauth.handleUnauthorized(401, challenge());
    assert.equal(as.accessTokens.get(token), `${rs.origin}/mcp`, "issued for the published resource");
    const url = new URL(opened[0]!);
    assert.deepEqual([url.searchParams.get("resource"), url.searchParams.get("scope")], [`${rs.origin}/mcp`, "tools:read offline_access"]);
    assert.equal(as.requestsTo("/register").length, 1);
    assert.equal(await oauth.accessToken(), token);
    assert.equal(as.requestsTo("/token").length, 1, "the stored token is reused without a request");
    assert.ok(secrets.includes(token), "the redactor hook is told the token");
    // The access token went nowhere: no request to either server carried it.
    for (const r of [...rs.requests, ...as.requests]) assert.ok(!JSON.stringify([r.headers, r.body, r.query.toString()]).includes(token));
  });

  test("concurrent 401s share one flow", async () => {
    const oauth = provider();
    const tokens = await Promise.all([oauth.handleUnauthorized(401, challenge()), oauth.handleUnauthorized(401, challenge()), oauth.accessToken()]);
    assert.equal(new Set(tokens).size, 1);
    assert.deepEqual([opened.length, as.requestsTo("/token").length, as.requestsTo("/register").length], [1, 1, 1]);
  });

  test("a token near expiry is refreshed once, even when asked for concurrently, with the resource", async () => {
    const oauth = provider();
    const first = await oauth.handleUnauthorized(401, challenge());
    clock += 3_600_000 - 30_000;
    const [a, b] = await Promise.all([oauth.accessToken(), oauth.accessToken()]);
    assert.equal(a, b);
    assert.notEqual(a, first);
    const refreshes = as.requestsTo("/token").map((r) => new URLSearchParams(r.body)).filter((f) => f.get("grant_type") === "refresh_token");
    assert.equal(refreshes.length, 1);
    assert.equal(refreshes[0]!.get("resource"), `${rs.origin}/mcp`);
    assert.equal(opened.length, 1, "no second authorization");
  });

  test("a 401 with a stored refresh token refreshes; a refused refresh falls back to a new authorization", async () => {
    const store = new MemoryTokenStore();
    const oauth = provider({ store });
    await oauth.handleUnauthorized(401, challenge());
    const refreshed = await oauth.handleUnauthorized(401, 'Bearer error="invalid_token"');
    assert.ok(as.accessTokens.has(refreshed));
    assert.equal(opened.length, 1, "refreshed without the user");
    as.route("/token", json(400, { error: "invalid_grant" }));
    await assert.rejects(oauth.handleUnauthorized(401, challenge()), oauthFailure("TOKEN_REQUEST_REJECTED", /authorization_code grant with "invalid_grant"/));
    assert.equal(opened.length, 2, "the refused refresh led to a new authorization");
    assert.equal(await store.getTokens(`${rs.origin}/mcp`), undefined, "the refused tokens are forgotten");
  });

  test("a refresh that cannot reach the server keeps the tokens; a plain 403 is FORBIDDEN, with no new flow", async () => {
    const store = new MemoryTokenStore();
    const oauth = provider({ store, http: { timeoutMs: 200 } });
    await oauth.handleUnauthorized(401, challenge());
    as.route("/token", "hang");
    clock += 3_600_000;
    assert.equal(await oauth.accessToken(), undefined);
    assert.ok((await store.getTokens(`${rs.origin}/mcp`))?.refreshToken, "the refresh token is kept");
    await assert.rejects(oauth.handleUnauthorized(401, challenge()), oauthFailure("FETCH_FAILED", /did not answer within 200 ms/));
    assert.equal(opened.length, 1, "no authorization was started against an unreachable server");
    await assert.rejects(oauth.handleUnauthorized(403, 'Bearer error="forbidden"'), oauthFailure("FORBIDDEN", /refused access \(HTTP 403\) without asking for a scope/));
  });

  test("403 insufficient_scope asks again with the union of the scopes", async () => {
    const oauth = provider();
    await oauth.handleUnauthorized(401, challenge());
    await oauth.handleUnauthorized(403, 'Bearer error="insufficient_scope", scope="tools:write"');
    assert.equal(new URL(opened[1]!).searchParams.get("scope"), "tools:read offline_access tools:write");
  });

  test("a server that keeps answering insufficient_scope for the same scopes gets at most 3 step-ups", async () => {
    const oauth = provider();
    await oauth.handleUnauthorized(401, challenge());
    const more = 'Bearer error="insufficient_scope", scope="tools:write admin"';
    for (let i = 0; i < 3; i++) await oauth.handleUnauthorized(403, more);
    await assert.rejects(oauth.handleUnauthorized(403, more), oauthFailure("STEP_UP_LIMIT", /still answers insufficient_scope for "admin tools:write" after 3 new authorizations/));
    assert.equal(opened.length, 4);
    await oauth.handleUnauthorized(401, challenge());
    await oauth.handleUnauthorized(403, more);
    assert.equal(opened.length, 5, "after a 401 (a refresh here) the count starts again");
  });

  test("client_credentials: configured private_key_jwt credentials, no user, no registration", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    as.clients.set("svc", { publicKey, redirectUris: [] });
    const oauth = provider({ grant: "client_credentials", authorize: undefined, now: Date.now, registration: { preRegistered: { [as.issuer]: { clientId: "svc", privateKey } } } });
    const token = await oauth.handleUnauthorized(401, challenge());
    assert.equal(as.accessTokens.get(token), `${rs.origin}/mcp`);
    assert.deepEqual([opened.length, as.requestsTo("/register").length, as.requestsTo("/authorize").length], [0, 0, 0]);
    assert.equal(new URLSearchParams(as.requestsTo("/token")[0]!.body).get("grant_type"), "client_credentials");
  });

  test("without an authorize callback the flow stops with INTERACTION_REQUIRED, before any token request", async () => {
    const oauth = provider({ authorize: undefined });
    await assert.rejects(oauth.handleUnauthorized(401, challenge()), oauthFailure("INTERACTION_REQUIRED", /needs a user's authorization at http:\/\/127\.0\.0\.1:\d+\/tenant/));
    assert.equal(as.requestsTo("/token").length, 0);
  });

  test("a bad redirect (state mismatch) stops the flow before the code is redeemed", async () => {
    const oauth = provider({ authorize: async (url) => {
      const redirect = new URL(await consent(url));
      redirect.searchParams.set("state", "forged");
      return redirect;
    } });
    await assert.rejects(oauth.handleUnauthorized(401, challenge()), oauthFailure("STATE_MISMATCH", /a different state/));
    assert.equal(as.requestsTo("/token").length, 0);
  });

  test("an authorization server change registers anew, and the old client is never shown to the new server", async () => {
    const store = new MemoryTokenStore();
    const oauth = provider({ store });
    await oauth.handleUnauthorized(401, challenge());
    const oldClient = (await store.getClient(as.issuer))!;
    const next = await AuthServerFixture.start();
    try {
      rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: `${rs.origin}/mcp`, authorization_servers: [next.issuer] }));
      const token = await oauth.handleUnauthorized(401, 'Bearer error="invalid_token"');
      assert.ok(next.accessTokens.has(token));
      assert.equal(next.requestsTo("/register").length, 1);
      assert.equal(as.requestsTo("/token").length, 1, "the old server's refresh token was not used");
      assert.equal((await store.getTokens(`${rs.origin}/mcp`))?.issuer, next.issuer);
      for (const r of next.requests) assert.ok(!JSON.stringify([r.headers, r.body, r.query.toString()]).includes(oldClient.clientId));
    } finally {
      await next.close();
    }
  });

  test("no protected resource metadata: the 2025-03-26 fallback at the server's origin, resource still sent", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", json(404, {}));
    const token = await provider({ serverUrl: `${rs.origin}/mcp?tenant=a` }).handleUnauthorized(401, "Bearer");
    assert.equal(rs.accessTokens.get(token), `${rs.origin}/mcp`, "the MCP server's origin was the authorization server");
    assert.equal(new URL(opened[0]!).searchParams.get("resource"), `${rs.origin}/mcp`);
  });

  test("no OAuth metadata anywhere and no /register (a static-token server): a message that says so, and nothing authorized", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/register"]) rs.route(path, json(404, {}));
    await assert.rejects(provider().handleUnauthorized(401, "Bearer"), (e: unknown) => {
      assert.match(String((e as Error).message), /publishes no OAuth metadata.*answered HTTP 404.*Authorization: Bearer <token>/);
      assert.deepEqual([(e as { reason?: string }).reason, (e as { details?: Record<string, unknown> }).details?.noOAuthMetadata], ["REGISTRATION_FAILED", true]);
      return true;
    });
    assert.deepEqual([opened, rs.requestsTo("/token").length], [[], 0]);
  });

  test("metadata with the wrong resource stops the flow before anything is sent to an authorization server", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: "https://other.example/mcp", authorization_servers: [as.issuer] }));
    await assert.rejects(provider().handleUnauthorized(401, challenge()), oauthFailure("RESOURCE_MISMATCH", /not for this server/));
    assert.equal(as.requests.length, 0);
  });
});
