/** DPoP (RFC 9449): the proofs, the token request with a nonce retry, and OAuthProvider's headers. */
import assert from "node:assert/strict";
import { createHash, createPublicKey, verify } from "node:crypto";
import { describe, test } from "node:test";
import { DpopKey } from "../../src/auth/dpop.ts";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { requestClientCredentialsToken } from "../../src/auth/token-request.ts";
import { json } from "../../fixtures/oauth/authorization-server.ts";
import { eachAuthServer } from "./auth-server-hooks.ts";
import { oauthFailure } from "./oauth-matchers.ts";

/** The header and payload of a proof, after checking its signature with the key in its header. */
function opened(proof: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [h, p, s] = proof.split(".") as [string, string, string];
  const header = JSON.parse(Buffer.from(h, "base64url").toString("utf8")) as Record<string, unknown>;
  const key = createPublicKey({ key: header.jwk as never, format: "jwk" });
  assert.ok(verify("sha256", Buffer.from(`${h}.${p}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(s, "base64url")), "the signature verifies");
  return { header, payload: JSON.parse(Buffer.from(p, "base64url").toString("utf8")) as Record<string, unknown> };
}

describe("DPoP proofs", () => {
  test("typ, ES256 and the public key only; htm, htu without query, iat, a fresh jti, ath and nonce when due", () => {
    const key = new DpopKey();
    const first = opened(key.proof("POST", new URL("https://mcp.example/mcp?x=1#f"), "at-123", 1_700_000_000_900));
    assert.deepEqual([first.header.typ, first.header.alg, (first.header.jwk as Record<string, unknown>).d], ["dpop+jwt", "ES256", undefined]);
    assert.deepEqual(
      { htm: first.payload.htm, htu: first.payload.htu, iat: first.payload.iat, ath: first.payload.ath, nonce: first.payload.nonce },
      { htm: "POST", htu: "https://mcp.example/mcp", iat: 1_700_000_000, ath: createHash("sha256").update("at-123").digest("base64url"), nonce: undefined },
    );
    key.setNonce(new URL("https://mcp.example/other"), "n-1");
    const second = opened(key.proof("GET", new URL("https://mcp.example/mcp")));
    assert.deepEqual([second.payload.nonce, second.payload.ath], ["n-1", undefined]);
    assert.notEqual(second.payload.jti, first.payload.jti);
    assert.equal(opened(key.proof("GET", new URL("https://as.example/token"))).payload.nonce, undefined, "nonces are per origin");
  });
});

describe("DPoP at the token endpoint", () => {
  const s = eachAuthServer();

  test("a use_dpop_nonce answer is retried once with the nonce; the token comes back DPoP-bound", async () => {
    s.as.clients.set("svc", { secret: "sec", redirectUris: [] });
    let calls = 0;
    s.as.route("/token", () => (++calls === 1 ? json(400, { error: "use_dpop_nonce" }, { "dpop-nonce": "as-nonce-7" }) : json(200, { access_token: "at-dpop", token_type: "DPoP" })));
    const key = new DpopKey();
    const tokens = await requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", clientSecret: "sec" }, {}, { dpop: key });
    assert.deepEqual([tokens.accessToken, tokens.tokenType], ["at-dpop", "DPoP"]);
    const proofs = s.as.requestsTo("/token").map((r) => opened(String(r.headers.dpop)).payload);
    assert.deepEqual(proofs.map((p) => [p.htm, p.htu, p.nonce]), [["POST", `${s.as.origin}/token`, undefined], ["POST", `${s.as.origin}/token`, "as-nonce-7"]]);
  });

  test("without a proof sent, a DPoP token_type is refused", async () => {
    s.as.clients.set("svc", { secret: "sec", redirectUris: [] });
    s.as.route("/token", () => json(200, { access_token: "at-dpop", token_type: "DPoP" }));
    await assert.rejects(
      requestClientCredentialsToken(s.metadata, { issuer: s.as.issuer, clientId: "svc", clientSecret: "sec" }),
      oauthFailure("TOKEN_RESPONSE_INVALID", /only Bearer is supported/),
    );
  });
});

describe("OAuthProvider with dpop", () => {
  test("a DPoP-bound token goes with the DPoP scheme and a proof per request; a nonce challenge keeps the token", async () => {
    const { AuthServerFixture } = await import("../../fixtures/oauth/authorization-server.ts");
    const as = await AuthServerFixture.start({ metadata: { dpop_signing_alg_values_supported: ["ES256"] } });
    const rs = await AuthServerFixture.start();
    try {
      rs.route("/.well-known/oauth-protected-resource/mcp", () => json(200, { resource: `${rs.origin}/mcp`, authorization_servers: [as.issuer] }));
      as.clients.set("svc", { secret: "sec", redirectUris: [] });
      as.route("/token", () => json(200, { access_token: "at-bound", token_type: "DPoP" }));
      const oauth = new OAuthProvider({
        serverUrl: `${rs.origin}/mcp`,
        redirectUri: "http://127.0.0.1:9/cb",
        grant: "client_credentials",
        dpop: true,
        registration: { preRegistered: { [as.issuer]: { clientId: "svc", clientSecret: "sec" } } },
      });
      const token = await oauth.handleUnauthorized(401, `DPoP resource_metadata="${rs.origin}/.well-known/oauth-protected-resource/mcp"`);
      const url = new URL(`${rs.origin}/mcp`);
      const headers = oauth.authorizationHeaders(token, "POST", url);
      assert.equal(headers.authorization, "DPoP at-bound");
      assert.equal(opened(headers.dpop!).payload.ath, createHash("sha256").update("at-bound").digest("base64url"));
      assert.equal(await oauth.handleUnauthorized(401, 'DPoP error="use_dpop_nonce"', { dpopNonce: "rs-nonce" }), "at-bound", "no new token for a nonce");
      assert.equal(opened(oauth.authorizationHeaders(token, "POST", url).dpop!).payload.nonce, "rs-nonce");
      assert.equal(as.requestsTo("/token").length, 1);
      assert.deepEqual(oauth.authorizationHeaders("some-bearer", "GET", url), { authorization: "Bearer some-bearer" });
    } finally {
      await rs.close();
      await as.close();
    }
  });
});
