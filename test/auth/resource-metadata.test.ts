import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, test } from "node:test";
import { discoverResourceMetadata, resourceMetadataCandidates } from "../../src/auth/resource-metadata.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

describe("protected resource metadata discovery (RFC 9728)", () => {
  let rs: AuthServerFixture;
  beforeEach(async () => {
    rs = await AuthServerFixture.start();
  });
  afterEach(async () => {
    await rs.close();
  });

  test("the challenge's resource_metadata URL is used first, and resource is kept as published", async () => {
    rs.route("/meta/here", json(200, { resource: `${rs.origin}/mcp`, authorization_servers: ["https://as.example/t"], scopes_supported: ["read"] }));
    const found = await discoverResourceMetadata(`${rs.origin}/mcp`, `${rs.origin}/meta/here`);
    assert.deepEqual(found.metadata, { resource: `${rs.origin}/mcp`, authorizationServers: ["https://as.example/t"], scopesSupported: ["read"] });
    assert.equal(found.metadataUrl, `${rs.origin}/meta/here`);
    assert.deepEqual(rs.requests.map((r) => r.path), ["/meta/here"]);
  });

  test("without a challenge URL: the path-based well-known URL, then the root", async () => {
    rs.route("/.well-known/oauth-protected-resource", json(200, { resource: `${rs.origin}/` }));
    const found = await discoverResourceMetadata(`${rs.origin}/api/mcp`, undefined);
    assert.equal(found.metadata.resource, `${rs.origin}/`);
    assert.deepEqual(rs.requests.map((r) => r.path), ["/.well-known/oauth-protected-resource/api/mcp", "/.well-known/oauth-protected-resource"]);
  });

  test("the root is never asked when the path-based document answered, even when it is refused", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: "https://elsewhere.example/mcp" }));
    rs.route("/.well-known/oauth-protected-resource", json(200, { resource: `${rs.origin}/mcp` }));
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("RESOURCE_MISMATCH", /is for "https:\/\/elsewhere\.example\/mcp", not for this server/));
    assert.deepEqual(rs.requests.map((r) => r.path), ["/.well-known/oauth-protected-resource/mcp"]);
  });

  test("a challenge URL that answers 404 falls back to the well-known URLs", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: `${rs.origin}/mcp` }));
    const found = await discoverResourceMetadata(`${rs.origin}/mcp`, `${rs.origin}/gone`);
    assert.equal(found.metadataUrl, `${rs.origin}/.well-known/oauth-protected-resource/mcp`);
  });

  test("resource: the same origin and a parent path are this server; a sibling path or another port is not", async () => {
    const check = async (resource: string) => {
      rs.route("/.well-known/oauth-protected-resource/a/mcp", json(200, { resource }));
      return discoverResourceMetadata(`${rs.origin}/a/mcp`, undefined);
    };
    assert.equal((await check(rs.origin)).metadata.resource, rs.origin);
    assert.equal((await check(`${rs.origin}/a`)).metadata.resource, `${rs.origin}/a`);
    await assert.rejects(check(`${rs.origin}/a/mc`), oauthFailure("RESOURCE_MISMATCH", /not for this server/));
    await assert.rejects(check(`${rs.origin}/b`), oauthFailure("RESOURCE_MISMATCH", /not for this server/));
    await assert.rejects(check("http://127.0.0.1:1/a/mcp"), oauthFailure("RESOURCE_MISMATCH", /not for this server/));
    await assert.rejects(check("not a url"), oauthFailure("METADATA_INVALID", /"resource" is not a URL/));
  });

  test("fields are checked one by one", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: `${rs.origin}/mcp`, authorization_servers: "https://as.example" }));
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("METADATA_INVALID", /"authorization_servers" must be an array of strings/));
    rs.route("/.well-known/oauth-protected-resource/mcp", json(200, { authorization_servers: [] }));
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("METADATA_INVALID", /has no "resource"/));
    rs.route("/.well-known/oauth-protected-resource/mcp", { status: 200, headers: { "content-type": "text/html" }, body: "<html></html>" });
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("METADATA_INVALID", /is not JSON \(HTTP 200, text\/html\)/));
  });

  test("nothing published: RESOURCE_METADATA_NOT_FOUND naming every URL tried", async () => {
    await assert.rejects(
      discoverResourceMetadata(`${rs.origin}/mcp`, undefined),
      oauthFailure("RESOURCE_METADATA_NOT_FOUND", /oauth-protected-resource\/mcp \(HTTP 404\), .*oauth-protected-resource \(HTTP 404\)/),
    );
  });

  test("metadata over 1 MiB is refused, declared or streamed", async () => {
    const big = JSON.stringify({ resource: `${rs.origin}/mcp`, pad: "x".repeat(1024 * 1024) });
    rs.route("/.well-known/oauth-protected-resource/mcp", { status: 200, headers: { "content-type": "application/json", "content-length": String(big.length) }, body: big });
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("TOO_LARGE", /larger than the limit of 1048576 bytes/));
    rs.route("/.well-known/oauth-protected-resource/mcp", { status: 200, headers: { "content-type": "application/json", "transfer-encoding": "chunked" }, body: big });
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined), oauthFailure("TOO_LARGE", /larger than the limit/));
  });

  test("a server that never answers fails within the time limit", async () => {
    rs.route("/.well-known/oauth-protected-resource/mcp", "hang");
    await assert.rejects(discoverResourceMetadata(`${rs.origin}/mcp`, undefined, { timeoutMs: 200 }), oauthFailure("FETCH_FAILED", /did not answer within 200 ms/));
  });

  test("URLs that are not https (or loopback http) are refused before any request", async () => {
    await assert.rejects(discoverResourceMetadata("http://mcp.example/mcp", undefined), oauthFailure("INSECURE_URL", /must use https/));
    assert.throws(() => resourceMetadataCandidates(new URL("https://mcp.example/mcp"), "http://evil.example/meta"), oauthFailure("INSECURE_URL", /resource_metadata URL/));
    assert.equal(rs.requests.length, 0);
  });
});
