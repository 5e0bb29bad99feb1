import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startLoopbackRedirect } from "../../src/auth/loopback-redirect.ts";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { AuthServerFixture, json } from "../../fixtures/oauth/authorization-server.ts";
import { oauthFailure } from "./oauth-matchers.ts";

describe("loopback redirect listener", () => {
  test("takes one redirect on its path, echoes none of it, and stops listening", async () => {
    const listener = await startLoopbackRedirect();
    try {
      assert.match(listener.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const stray = await fetch(new URL("/favicon.ico", listener.redirectUri));
      assert.equal(stray.status, 404);
      await stray.body?.cancel();
      const res = await fetch(`${listener.redirectUri}?code=secret-code-1&state=s1`);
      const page = await res.text();
      assert.equal(res.status, 200);
      assert.ok(!page.includes("secret-code-1"));
      const got = await listener.redirect;
      assert.equal(got.searchParams.get("code"), "secret-code-1");
      await assert.rejects(fetch(`${listener.redirectUri}?code=again`), TypeError, "the listener is closed after the one redirect");
    } finally {
      await listener.close();
    }
  });

  test("no redirect within the time limit: INTERACTION_REQUIRED, and the port is closed", async () => {
    const listener = await startLoopbackRedirect({ timeoutMs: 100, path: "/cb" });
    try {
      await assert.rejects(listener.redirect, oauthFailure("INTERACTION_REQUIRED", /no authorization redirect arrived within 100 ms/));
      await assert.rejects(fetch(listener.redirectUri), TypeError);
    } finally {
      await listener.close();
    }
  });

  test("closing before a redirect rejects the wait", async () => {
    const listener = await startLoopbackRedirect();
    await listener.close();
    await assert.rejects(listener.redirect, oauthFailure("INTERACTION_REQUIRED", /closed before a redirect arrived/));
  });

  test("with OAuthProvider: a browser stand-in follows the authorization URL to the listener, and the flow completes", async () => {
    const as = await AuthServerFixture.start();
    const listener = await startLoopbackRedirect();
    try {
      as.route("/.well-known/oauth-protected-resource/mcp", json(200, { resource: `${as.origin}/mcp`, authorization_servers: [as.issuer] }));
      const oauth = new OAuthProvider({
        serverUrl: `${as.origin}/mcp`,
        redirectUri: listener.redirectUri,
        authorize: async (url) => {
          // The browser: follows the authorization server's 302 to the loopback listener.
          const res = await fetch(url);
          await res.body?.cancel();
          return listener.redirect;
        },
      });
      const token = await oauth.handleUnauthorized(401, "Bearer");
      assert.equal(as.accessTokens.get(token), `${as.origin}/mcp`);
      assert.deepEqual(JSON.parse(as.requestsTo("/register")[0]!.body).redirect_uris, [listener.redirectUri]);
    } finally {
      await listener.close();
      await as.close();
    }
  });
});
