import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { AuthorizationRequest } from "../../src/auth/authorization-request.ts";
import { createPkcePair } from "../../src/auth/pkce.ts";
import { chooseScope } from "../../src/auth/scopes.ts";
import { discoverServerMetadata, type AuthorizationServerMetadata } from "../../src/auth/server-metadata.ts";
import { exchangeCode, refreshAccessToken, type ClientCredentials } from "../../src/auth/token-request.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const REDIRECT = "http://127.0.0.1:9/callback";
const RESOURCE = "https://mcp.example/mcp";

/** The user agent: follows the authorization URL to the fixture and returns the redirect it gets. */
async function consent(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  const location = res.headers.get("location");
  assert.ok(location, `authorization endpoint answered ${res.status} without a redirect`);
  return location;
}

describe("PKCE and scopes", () => {
  test("the S256 challenge is base64url(SHA-256(verifier)), checked with Web Crypto", async () => {
    const pair = createPkcePair();
    assert.match(pair.verifier, /^[A-Za-z0-9_-]{43}$/);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(pair.verifier));
    assert.equal(pair.challenge, Buffer.from(digest).toString("base64url"));
    assert.notEqual(createPkcePair().verifier, pair.verifier);
  });

  test("scope: the challenge's, else the resource's list, else none; offline_access only when the server lists it", () => {
    assert.equal(chooseScope({ challengeScope: "files:read", resourceScopes: ["a", "b"] }), "files:read");
    assert.equal(chooseScope({ resourceScopes: ["a", "b"] }), "a b");
    assert.equal(chooseScope({}), undefined);
    assert.equal(chooseScope({ resourceScopes: ["a"], serverScopes: ["a", "offline_access"] }), "a offline_access");
    assert.equal(chooseScope({ resourceScopes: ["a"], serverScopes: ["a"] }), "a");
    assert.equal(chooseScope({ resourceScopes: ["a"], serverScopes: ["offline_access"], offlineAccess: false }), "a");
  });
});

describe("authorization code with PKCE against a loopback authorization server", () => {
  let as: AuthServerFixture;
  let metadata: AuthorizationServerMetadata;
  let client: ClientCredentials;
  beforeEach(async () => {
    as = await AuthServerFixture.start();
    metadata = await discoverServerMetadata(as.issuer);
    as.clients.set("c1", { secret: "s3cret-value", redirectUris: [REDIRECT] });
    client = { issuer: as.issuer, clientId: "c1", clientSecret: "s3cret-value" };
  });
  afterEach(async () => {
    await as.close();
  });

  test("the URL carries PKCE S256, state, resource and scope; the code is redeemed and refreshed", async () => {
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT, resource: RESOURCE, scope: "read write" });
    const q = new URL(request.url).searchParams;
    assert.deepEqual(
      [q.get("response_type"), q.get("client_id"), q.get("redirect_uri"), q.get("code_challenge_method"), q.get("state"), q.get("resource"), q.get("scope")],
      ["code", "c1", REDIRECT, "S256", request.state, RESOURCE, "read write"],
    );
    const grant = request.acceptRedirect(await consent(request.url));
    const tokens = await exchangeCode(metadata, client, grant, { now: () => 1_000 });
    assert.equal(as.accessTokens.get(tokens.accessToken), RESOURCE, "issued for the resource sent");
    assert.deepEqual([tokens.tokenType, tokens.expiresAt, tokens.scope], ["Bearer", 1_000 + 3_600_000, "read write"]);
    const form = new URLSearchParams(as.requestsTo("/token")[0]!.body);
    assert.deepEqual([form.get("grant_type"), form.get("resource"), form.get("client_secret")], ["authorization_code", RESOURCE, null]);
    assert.match(as.requestsTo("/token")[0]!.headers.authorization ?? "", /^Basic /);

    const refreshed = await refreshAccessToken(metadata, client, tokens.refreshToken!, { resource: RESOURCE });
    assert.notEqual(refreshed.accessToken, tokens.accessToken);
    assert.equal(as.accessTokens.get(refreshed.accessToken), RESOURCE);
    await assert.rejects(refreshAccessToken(metadata, client, tokens.refreshToken!), oauthFailure("TOKEN_REQUEST_REJECTED", /refused the refresh_token grant with "invalid_grant"/));
  });

  test("a public client sends client_id in the form and no Authorization header; post sends the secret in the form", async () => {
    as.clients.set("pub", { redirectUris: [REDIRECT] });
    const request = new AuthorizationRequest({ metadata, clientId: "pub", redirectUri: REDIRECT });
    const tokens = await exchangeCode(metadata, { issuer: as.issuer, clientId: "pub" }, request.acceptRedirect(await consent(request.url)));
    assert.ok(as.accessTokens.has(tokens.accessToken));
    const sent = as.requestsTo("/token")[0]!;
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(new URLSearchParams(sent.body).get("client_id"), "pub");
    const post = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    await exchangeCode(metadata, { ...client, tokenEndpointAuthMethod: "client_secret_post" }, post.acceptRedirect(await consent(post.url)));
    assert.equal(new URLSearchParams(as.requestsTo("/token")[1]!.body).get("client_secret"), "s3cret-value");
  });

  test("an iss that is not the recorded issuer is refused before the code goes anywhere", async () => {
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const redirect = new URL(await consent(request.url));
    redirect.searchParams.set("iss", "https://attacker.example");
    assert.throws(() => request.acceptRedirect(redirect), oauthFailure("ISS_MISMATCH", /from issuer "https:\/\/attacker\.example", not "http:\/\/127\.0\.0\.1:\d+"/));
    assert.equal(as.requestsTo("/token").length, 0);
  });

  test("iss is required when the server advertises it, and optional when it does not", async () => {
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const redirect = new URL(await consent(request.url));
    redirect.searchParams.delete("iss");
    assert.throws(() => request.acceptRedirect(redirect), oauthFailure("ISS_MISMATCH", /has no "iss"/));
    const quiet = { ...metadata, authorizationResponseIssParameterSupported: false };
    const second = new AuthorizationRequest({ metadata: quiet, clientId: "c1", redirectUri: REDIRECT });
    const bare = new URL(await consent(second.url));
    bare.searchParams.delete("iss");
    assert.ok(second.acceptRedirect(bare).code.startsWith("code-"));
  });

  test("a state mismatch, a replayed redirect, an error redirect and a missing code are refused", async () => {
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const redirect = await consent(request.url);
    const forged = new URL(redirect);
    forged.searchParams.set("state", "guessed");
    assert.throws(() => new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT }).acceptRedirect(forged), oauthFailure("STATE_MISMATCH", /a different state/));
    request.acceptRedirect(redirect);
    assert.throws(() => request.acceptRedirect(redirect), oauthFailure("REDIRECT_REPLAYED", /already received its redirect/));

    const denied = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const params = new URLSearchParams({ state: denied.state, iss: as.issuer, error: "access_denied", error_description: "the user said no" });
    assert.throws(() => denied.acceptRedirect(params), oauthFailure("AUTHORIZATION_DENIED", /answered "access_denied": the user said no/));
    const empty = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    assert.throws(() => empty.acceptRedirect(new URLSearchParams({ state: empty.state, iss: as.issuer })), oauthFailure("CODE_MISSING", /no code/));
  });

  test("a token endpoint answering HTML, a wrong token_type or an error without JSON is a typed error without the secrets", async () => {
    const cases: Array<[Parameters<AuthServerFixture["route"]>[1], RegExp, string]> = [
      [{ status: 200, headers: { "content-type": "text/html" }, body: "<html>login</html>" }, /is not JSON \(HTTP 200, text\/html\)/, "TOKEN_RESPONSE_INVALID"],
      [json(200, { access_token: "at-leak-me", token_type: "mac" }), /token_type "mac"; only Bearer/, "TOKEN_RESPONSE_INVALID"],
      [json(200, { token_type: "Bearer" }), /has no "access_token"/, "TOKEN_RESPONSE_INVALID"],
      [json(200, { access_token: "at-leak-me", token_type: "Bearer", expires_in: "soon" }), /"expires_in" must be a non-negative number/, "TOKEN_RESPONSE_INVALID"],
      [json(500, { message: "boom" }), /answered HTTP 500 without an OAuth error/, "TOKEN_RESPONSE_INVALID"],
    ];
    for (const [reply, message, reason] of cases) {
      as.route("/token", reply);
      const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
      const grant = request.acceptRedirect(await consent(request.url));
      const err = await exchangeCode(metadata, client, grant).then(() => undefined, (e: unknown) => e);
      assert.throws(() => {
        throw err;
      }, oauthFailure(reason, message));
      const shown = `${(err as Error).message} ${JSON.stringify((err as { details: unknown }).details)}`;
      for (const secret of ["at-leak-me", "s3cret-value", grant.code, grant.codeVerifier]) assert.ok(!shown.includes(secret), `error shows ${secret}`);
    }
  });

  test("credentials of another issuer are never sent to this token endpoint", async () => {
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const grant = request.acceptRedirect(await consent(request.url));
    await assert.rejects(exchangeCode(metadata, { ...client, issuer: "https://other.example" }, grant), oauthFailure("REGISTRATION_FAILED", /are not for/));
    assert.equal(as.requestsTo("/token").length, 0);
  });

  test("a token endpoint that never answers fails within the time limit", async () => {
    as.route("/token", "hang");
    const request = new AuthorizationRequest({ metadata, clientId: "c1", redirectUri: REDIRECT });
    const grant = request.acceptRedirect(await consent(request.url));
    await assert.rejects(exchangeCode(metadata, client, grant, { timeoutMs: 200 }), oauthFailure("FETCH_FAILED", /did not answer within 200 ms/));
  });
});
