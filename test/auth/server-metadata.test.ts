import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { discoverServerMetadata, legacyServerMetadata, requirePkceS256, serverMetadataCandidates } from "../../src/auth/server-metadata.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

describe("authorization server metadata (RFC 8414, OIDC discovery)", () => {
  let as: AuthServerFixture | undefined;
  afterEach(async () => {
    await as?.close();
    as = undefined;
  });

  test("the candidate orders the spec lists, with and without a path", () => {
    const paths = (issuer: string) => serverMetadataCandidates(new URL(issuer)).map((u) => u.pathname);
    assert.deepEqual(paths("https://as.example"), ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]);
    assert.deepEqual(paths("https://as.example/tenant1/"), [
      "/.well-known/oauth-authorization-server/tenant1",
      "/.well-known/openid-configuration/tenant1",
      "/tenant1/.well-known/openid-configuration",
    ]);
  });

  test("an issuer with a path: RFC 8414 path-aware metadata, read field by field", async () => {
    as = await AuthServerFixture.start({ issuerPath: "/tenant1" });
    const meta = await discoverServerMetadata(as.issuer);
    assert.equal(meta.issuer, `${as.origin}/tenant1`);
    assert.equal(meta.tokenEndpoint, `${as.origin}/token`);
    assert.equal(meta.authorizationResponseIssParameterSupported, true);
    assert.deepEqual(meta.codeChallengeMethodsSupported, ["S256"]);
    assert.deepEqual(as.requests.map((r) => r.path), ["/.well-known/oauth-authorization-server/tenant1"]);
  });

  test("OIDC discovery is tried in order when RFC 8414 is not published", async () => {
    as = await AuthServerFixture.start({ issuerPath: "/t" });
    const fixture = as;
    as.route("/.well-known/oauth-authorization-server/t", json(404, {}));
    as.route("/t/.well-known/openid-configuration", () => json(200, fixture.baseMetadata()));
    const meta = await discoverServerMetadata(as.issuer);
    assert.equal(meta.issuer, as.issuer);
    assert.deepEqual(as.requests.map((r) => r.path), [
      "/.well-known/oauth-authorization-server/t",
      "/.well-known/openid-configuration/t",
      "/t/.well-known/openid-configuration",
    ]);
  });

  test("issuer must be exactly the one asked for", async () => {
    as = await AuthServerFixture.start({ metadata: { issuer: "https://evil.example" } });
    await assert.rejects(discoverServerMetadata(as.issuer), oauthFailure("ISSUER_MISMATCH", /names issuer "https:\/\/evil\.example", not "http:\/\/127\.0\.0\.1:\d+"/));
    await assert.rejects(discoverServerMetadata(`${as.issuer}/`), oauthFailure("ISSUER_MISMATCH", /not "http:\/\/127\.0\.0\.1:\d+\/"/));
  });

  test("wrong field types, an insecure endpoint, and missing endpoints are refused", async () => {
    as = await AuthServerFixture.start({ metadata: { code_challenge_methods_supported: "S256" } });
    await assert.rejects(discoverServerMetadata(as.issuer), oauthFailure("METADATA_INVALID", /"code_challenge_methods_supported" must be an array of strings/));
    await as.close();
    as = await AuthServerFixture.start({ metadata: { token_endpoint: "http://as.example/token" } });
    await assert.rejects(discoverServerMetadata(as.issuer), oauthFailure("INSECURE_URL", /"token_endpoint" of .* must use https/));
    await as.close();
    as = await AuthServerFixture.start({ metadata: { authorization_endpoint: undefined } });
    await assert.rejects(discoverServerMetadata(as.issuer), oauthFailure("METADATA_INVALID", /has no "authorization_endpoint"/));
  });

  test("no metadata anywhere: AUTHORIZATION_SERVER_NOT_FOUND", async () => {
    as = await AuthServerFixture.start({ issuerPath: "/x" });
    await assert.rejects(discoverServerMetadata(`${as.origin}/y`), oauthFailure("AUTHORIZATION_SERVER_NOT_FOUND", /no authorization server metadata for http:\/\/127\.0\.0\.1:\d+\/y/));
  });

  test("an authorization server that never answers fails within the time limit", async () => {
    as = await AuthServerFixture.start();
    as.route("/.well-known/oauth-authorization-server", "hang");
    await assert.rejects(discoverServerMetadata(as.issuer, { timeoutMs: 200 }), oauthFailure("FETCH_FAILED", /did not answer within 200 ms/));
  });

  test("2025-03-26 fallback: root metadata of the MCP server's origin, else the default endpoints", async () => {
    as = await AuthServerFixture.start();
    const meta = await legacyServerMetadata(`${as.origin}/some/mcp`);
    assert.equal(meta.source, `${as.origin}/.well-known/oauth-authorization-server`);
    as.route("/.well-known/oauth-authorization-server", json(404, {}));
    const defaults = await legacyServerMetadata(`${as.origin}/some/mcp`);
    assert.deepEqual(
      [defaults.issuer, defaults.authorizationEndpoint, defaults.tokenEndpoint, defaults.registrationEndpoint, defaults.source],
      [as.origin, `${as.origin}/authorize`, `${as.origin}/token`, `${as.origin}/register`, "defaults"],
    );
    as.route("/.well-known/oauth-authorization-server", json(200, { ...as.baseMetadata(), issuer: `${as.origin}/oauth` }));
    assert.equal((await legacyServerMetadata(`${as.origin}/mcp`)).issuer, `${as.origin}/oauth`, "the server's own origin, at a path");
    as.route("/.well-known/oauth-authorization-server", json(200, { ...as.baseMetadata(), issuer: "https://other.example" }));
    await assert.rejects(legacyServerMetadata(`${as.origin}/mcp`), oauthFailure("ISSUER_MISMATCH", /other\.example/));
  });

  test("PKCE S256 is required: absent or without S256 is refused", () => {
    const base = { issuer: "https://as.example", authorizationEndpoint: "https://as.example/a", tokenEndpoint: "https://as.example/t", source: "x" };
    requirePkceS256({ ...base, codeChallengeMethodsSupported: ["plain", "S256"] });
    assert.throws(() => requirePkceS256(base), oauthFailure("PKCE_UNSUPPORTED", /does not list code_challenge_methods_supported/));
    assert.throws(() => requirePkceS256({ ...base, codeChallengeMethodsSupported: ["plain"] }), oauthFailure("PKCE_UNSUPPORTED", /lists only plain/));
  });
});
