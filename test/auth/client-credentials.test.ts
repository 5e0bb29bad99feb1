import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { createClientAssertion } from "../../src/auth/client-assertion.ts";
import { requestClientCredentialsToken } from "../../src/auth/token-request.ts";
import { eachAuthServer } from "./auth-server-hooks.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const RESOURCE = "https://mcp.example/mcp";

describe("client credentials grant", () => {
  const s = eachAuthServer();

  test("private_key_jwt: an ES256 assertion with iss = sub = client_id and aud = issuer", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    s.as.clients.set("svc", { publicKey, redirectUris: [] });
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const tokens = await requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", privateKey: pem }, { resource: RESOURCE, scope: "jobs" });
    assert.equal(s.as.accessTokens.get(tokens.accessToken), RESOURCE);
    assert.equal(tokens.refreshToken, undefined);
    const form = new URLSearchParams(s.as.requestsTo("/token")[0]!.body);
    assert.deepEqual([form.get("grant_type"), form.get("client_assertion_type"), form.get("scope")], ["client_credentials", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", "jobs"]);
    const [header, payload] = form.get("client_assertion")!.split(".").slice(0, 2).map((p) => JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as Record<string, unknown>);
    assert.deepEqual(header, { alg: "ES256", typ: "JWT" });
    assert.deepEqual([payload!.iss, payload!.sub, payload!.aud], ["svc", "svc", s.as.issuer]);
    assert.equal(s.as.requestsTo("/token")[0]!.headers.authorization, undefined);
  });

  test("an assertion signed with another key is refused by the server: a typed error without the assertion", async () => {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    s.as.clients.set("svc", { publicKey, redirectUris: [] });
    const err = await requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", privateKey: other }).then(() => undefined, (e: unknown) => e);
    assert.throws(() => {
      throw err;
    }, oauthFailure("TOKEN_REQUEST_REJECTED", /refused the client_credentials grant with "invalid_client"/));
    const assertion = new URLSearchParams(s.as.requestsTo("/token")[0]!.body).get("client_assertion")!;
    assert.ok(!JSON.stringify([(err as Error).message, (err as { details: unknown }).details]).includes(assertion.split(".")[2]!));
  });

  test("a client secret works too (Basic), and a client registered for private_key_jwt without a key is refused before sending", async () => {
    s.as.clients.set("svc", { secret: "pw-svc", redirectUris: [] });
    const tokens = await requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", clientSecret: "pw-svc" });
    assert.ok(s.as.accessTokens.has(tokens.accessToken));
    await assert.rejects(
      requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", tokenEndpointAuthMethod: "private_key_jwt" }),
      oauthFailure("REGISTRATION_FAILED", /registered for private_key_jwt but has no private key/),
    );
    assert.equal(s.as.requestsTo("/token").length, 1);
  });

  test("the assertion expires 5 minutes after it is made", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const payload = JSON.parse(Buffer.from(createClientAssertion("c", "https://s.as.example", privateKey, 1_700_000_000_500).split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
    assert.deepEqual([payload.iat, payload.exp], [1_700_000_000, 1_700_000_300]);
    assert.match(String(payload.jti), /^[A-Za-z0-9_-]{22}$/);
  });
});
