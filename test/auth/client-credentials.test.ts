import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { afterEach, beforeEach, describe, test } from "node:test";
import { createClientAssertion } from "../../src/auth/client-assertion.ts";
import { discoverServerMetadata, type AuthorizationServerMetadata } from "../../src/auth/server-metadata.ts";
import { requestClientCredentialsToken } from "../../src/auth/token-request.ts";
import { AuthServerFixture } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const RESOURCE = "https://mcp.example/mcp";

describe("client credentials grant", () => {
  let as: AuthServerFixture;
  let metadata: AuthorizationServerMetadata;
  beforeEach(async () => {
    as = await AuthServerFixture.start();
    metadata = await discoverServerMetadata(as.issuer);
  });
  afterEach(async () => {
    await as.close();
  });

  test("private_key_jwt: an ES256 assertion with iss = sub = client_id and aud = issuer", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    as.clients.set("svc", { publicKey, redirectUris: [] });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const tokens = await requestClientCredentialsToken(metadata, { issuer: as.issuer, clientId: "svc", privateKey: pem }, { resource: RESOURCE, scope: "jobs" });
    assert.equal(as.accessTokens.get(tokens.accessToken), RESOURCE);
    assert.equal(tokens.refreshToken, undefined);
    const form = new URLSearchParams(as.requestsTo("/token")[0]!.body);
    assert.deepEqual([form.get("grant_type"), form.get("client_assertion_type"), form.get("scope")], ["client_credentials", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "jobs"]);
    const [header, payload] = form.get("client_assertion")!.split(".").slice(0, 2).map((p) => JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as Record<string, unknown>);
    assert.deepEqual(header, { alg: "ES256", typ: "JWT" });
    assert.deepEqual([payload!.iss, payload!.sub, payload!.aud], ["svc", "svc", as.issuer]);
    assert.equal(as.requestsTo("/token")[0]!.headers.authorization, undefined);
  });

  test("an assertion signed with another key is refused by the server: a typed error without the assertion", async () => {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    as.clients.set("svc", { publicKey, redirectUris: [] });
    const err = await requestClientCredentialsToken(metadata, { issuer: as.issuer, clientId: "svc", privateKey: other }).then(() => undefined, (e: unknown) => e);
    assert.throws(() => {
      throw err;
    }, oauthFailure("TOKEN_REQUEST_REJECTED", /refused the client_credentials grant with "invalid_client"/));
    const assertion = new URLSearchParams(as.requestsTo("/token")[0]!.body).get("client_assertion")!;
    assert.ok(!JSON.stringify([(err as Error).message, (err as { details: unknown }).details]).includes(assertion.split(".")[2]!));
  });

  test("a client secret works too (Basic), and a client registered for private_key_jwt without a key is refused before sending", async () => {
    as.clients.set("svc", { secret: "pw-svc", redirectUris: [] });
    const tokens = await requestClientCredentialsToken(metadata, { issuer: as.issuer, clientId: "svc", clientSecret: "pw-svc" });
    assert.ok(as.accessTokens.has(tokens.accessToken));
    await assert.rejects(
      requestClientCredentialsToken(metadata, { issuer: as.issuer, clientId: "svc", tokenEndpointAuthMethod: "private_key_jwt" }),
      oauthFailure("REGISTRATION_FAILED", /registered for private_key_jwt but has no private key/),
    );
    assert.equal(as.requestsTo("/token").length, 1);
  });

  test("the assertion expires 5 minutes after it is made", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const payload = JSON.parse(Buffer.from(createClientAssertion("c", "https://as.example", privateKey, 1_700_000_000_500).split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
    assert.deepEqual([payload.iat, payload.exp], [1_700_000_000, 1_700_000_300]);
    assert.match(String(payload.jti), /^[A-Za-z0-9_-]{22}$/);
  });
});
