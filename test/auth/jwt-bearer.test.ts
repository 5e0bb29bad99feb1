/** The JWT-bearer grant (workload identity) and the ID-JAG token exchange of enterprise-managed authorization. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { JWT_BEARER_GRANT_TYPE, requestJwtBearerToken } from "../../src/auth/token-request.ts";
import { ID_JAG_TOKEN_TYPE, requestIdJag } from "../../src/auth/token-exchange.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { eachAuthServer } from "./auth-server-hooks.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const RESOURCE = "https://mcp.example/mcp";

describe("JWT-bearer grant", () => {
  const s = eachAuthServer();

  test("the assertion goes as given, with the resource; a public client sends its client_id", async () => {
    s.as.route("/token", () => json(200, { access_token: "at-wif-1", token_type: "Bearer", expires_in: 60 }));
    const tokens = await requestJwtBearerToken(s.metadata, { issuer: s.as.issuer, clientId: "workload" }, "eyJ.workload.jwt", { resource: RESOURCE });
    assert.equal(tokens.accessToken, "at-wif-1");
    const form = new URLSearchParams(s.as.requestsTo("/token")[0]!.body);
    assert.deepEqual(Object.fromEntries(form), { grant_type: JWT_BEARER_GRANT_TYPE, assertion: "eyJ.workload.jwt", resource: RESOURCE, client_id: "workload" });
  });

  test("a refused assertion is a typed error, not retried, and its message holds no assertion", async () => {
    s.as.route("/token", () => json(400, { error: "invalid_grant", error_description: "JWT assertion is expired" }));
    const err = await requestJwtBearerToken(s.metadata, { issuer: s.as.issuer, clientId: "workload" }, "eyJ.expired.jwt").then(() => undefined, (e: unknown) => e);
    assert.throws(() => {
      throw err;
    }, oauthFailure("TOKEN_REQUEST_REJECTED", /refused the urn:ietf:params:oauth:grant-type:jwt-bearer grant with "invalid_grant"/));
    assert.doesNotMatch((err as Error).message, /eyJ\.expired/);
    assert.equal(s.as.requestsTo("/token").length, 1);
  });
});

describe("enterprise-managed authorization: ID-JAG from the identity provider, then the JWT-bearer grant", () => {
  const s = eachAuthServer();

  test("OAuthProvider asks the assertion for the issuer and resource, and redeems it with its client secret", async () => {
    const idp = await AuthServerFixture.start();
    try {
      idp.route("/token", () => json(200, { access_token: "id-jag-for-as", issued_token_type: ID_JAG_TOKEN_TYPE, token_type: "N_A" }));
      s.as.route("/token", () => json(200, { access_token: "at-enterprise", token_type: "Bearer" }));
      const rs = await AuthServerFixture.start();
      try {
        rs.route("/.well-known/oauth-protected-resource/mcp", () => json(200, { resource: `${rs.origin}/mcp`, authorization_servers: [s.as.issuer] }));
        const oauth = new OAuthProvider({
          serverUrl: `${rs.origin}/mcp`,
          redirectUri: "http://127.0.0.1:9/callback",
          grant: "jwt_bearer",
          registration: { preRegistered: { [s.as.issuer]: { clientId: "mcp-client", clientSecret: "mcp-secret" } } },
          assertion: ({ issuer, resource }) => requestIdJag(`${idp.origin}/token`, { clientId: "idp-client", idToken: "user-id-token", audience: issuer, resource }),
        });
        assert.equal(await oauth.handleUnauthorized(401, "Bearer"), "at-enterprise");
        const exchange = Object.fromEntries(new URLSearchParams(idp.requestsTo("/token")[0]!.body));
        assert.deepEqual(exchange, {
          grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
          subject_token: "user-id-token",
          subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
          requested_token_type: ID_JAG_TOKEN_TYPE,
          audience: s.as.issuer,
          resource: `${rs.origin}/mcp`,
          client_id: "idp-client",
        });
        const grant = s.as.requestsTo("/token")[0]!;
        assert.equal(new URLSearchParams(grant.body).get("assertion"), "id-jag-for-as");
        assert.match(String(grant.headers.authorization), /^Basic /);
      } finally {
        await rs.close();
      }
    } finally {
      await idp.close();
    }
  });

  test("an identity provider that issues something else than an ID-JAG is refused", async () => {
    s.as.route("/token", () => json(200, { access_token: "plain", issued_token_type: "urn:ietf:params:oauth:token-type:access_token", token_type: "Bearer" }));
    await assert.rejects(
      requestIdJag(`${s.as.origin}/token`, { clientId: "c", idToken: "t", audience: "https://as.example", resource: RESOURCE }),
      oauthFailure("TOKEN_RESPONSE_INVALID", /did not issue an ID-JAG/),
    );
  });
});
