/** `AcpMcpSessionsOptions.auth`: the agent's authorize step, a provider per server, one store for every session. */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { authFor, type AcpSessionAuth } from "../../src/acp/session-auth.ts";
import { withDefaults } from "../../src/config/parse-common.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";

let rs: AuthServerFixture;
let as: AuthServerFixture;
beforeEach(async () => {
  rs = await AuthServerFixture.start();
  as = await AuthServerFixture.start();
  rs.route("/.well-known/oauth-protected-resource/mcp", () => json(200, { resource: `${rs.origin}/mcp`, authorization_servers: [as.issuer] }));
});
afterEach(async () => {
  await rs.close();
  await as.close();
});

test("the agent's authorize step is told the session and server; a second session reuses the tokens", async () => {
  const shown: { url: string; info: unknown }[] = [];
  const auth: AcpSessionAuth = {
    redirectUri: "http://127.0.0.1:9/callback",
    authorize: async (url, info) => {
      shown.push({ url, info });
      const res = await fetch(url, { redirect: "manual" });
      await res.body?.cancel();
      return res.headers.get("location") ?? "";
    },
  };
  const server = withDefaults({ name: "remote", transport: "http", url: `${rs.origin}/mcp` });
  const first = authFor("s1", undefined, auth)!(server)!;
  const token = await first.handleUnauthorized(401, "Bearer");
  assert.deepEqual(shown.map((s) => s.info), [{ sessionId: "s1", server: "remote", issuer: as.issuer }]);
  assert.equal(as.accessTokens.get(token), `${rs.origin}/mcp`);
  const second = authFor("s2", undefined, auth)!(server)!;
  assert.equal(await second.accessToken(), token, "one store for every session of these options");
  assert.equal(shown.length, 1);
});

test("a provider the manager options give wins; without the agent's auth the configured one stays", () => {
  const mine = { accessToken: async () => "x", handleUnauthorized: async () => "y" };
  const auth: AcpSessionAuth = { redirectUri: "http://127.0.0.1:9/cb", authorize: async () => "" };
  const pick = authFor("s", (c) => (c.name === "mine" ? mine : undefined), auth)!;
  assert.equal(pick(withDefaults({ name: "mine", transport: "http", url: "http://127.0.0.1:1/mcp" })), mine);
  assert.notEqual(pick(withDefaults({ name: "other", transport: "http", url: "http://127.0.0.1:1/mcp" })), undefined);
  assert.equal(authFor("s", undefined, undefined), undefined);
});
