/**
 * StreamableHttpServer as an OAuth protected resource, and our client's whole flow against it:
 * McpClient with an OAuthProvider, our server with a token verifier, the loopback
 * authorization server fixture. The verified principal reaches the tool handler.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import type { AuthInfo } from "../../src/transport/transport.ts";
import { AuthServerFixture } from "../../fixtures/oauth/authorization-server.ts";
import { INIT_PARAMS } from "./http-client-helpers.ts";

let as: AuthServerFixture;
let http: StreamableHttpServer;
let mcp: McpServer;
let url = "";
let subjects: Map<string, string>;
/** Scopes a test makes the verifier report instead of the issued ones (undefined: the issued ones). */
let downscoped: (token: string) => string[] | undefined;

/** Starts our server with `requiredScopes`; the tool `whoami` answers the handler's principal. */
async function serve(requiredScopes: string[]): Promise<void> {
  mcp = new McpServer({ name: "guarded", version: "1.0.0" });
  mcp.tool({ name: "whoami", inputSchema: { type: "object" } }, (_args, ctx) => ({
    content: [{ type: "text", text: JSON.stringify(ctx.session.transport.authInfo ?? null) }],
  }));
  http = new StreamableHttpServer({
    onSession: (t) => mcp.connect(t),
    auth: {
      authorizationServers: [as.issuer],
      requiredScopes,
      scopesSupported: ["tools", "admin"],
      // The fixture's own record stands in for a JWT check; the audience is checked as it must be.
      verifyToken: (token): AuthInfo | undefined => {
        if (as.accessTokens.get(token) !== url) return undefined;
        const scopes = downscoped(token) ?? (as.tokenScopes.get(token) ?? "").split(" ").filter(Boolean);
        return { subject: subjects.get(token) ?? "user-1", scopes };
      },
    },
  });
  url = (await http.listen(0)).url.href;
}

beforeEach(async () => {
  as = await AuthServerFixture.start();
  subjects = new Map();
  downscoped = () => undefined;
});
afterEach(async () => {
  await http.close();
  await mcp.close();
  await as.close();
});

async function consent(u: string): Promise<string> {
  const res = await fetch(u, { redirect: "manual" });
  await res.body?.cancel();
  return res.headers.get("location") ?? "";
}

const provider = () => new OAuthProvider({ serverUrl: url, redirectUri: "http://127.0.0.1:9/callback", authorize: consent, offlineAccess: false });

test("the metadata is served at the path-based and root well-known URLs; 401 names it and the scope", async () => {
  await serve(["tools"]);
  const origin = new URL(url).origin;
  for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
    const doc = (await (await fetch(`${origin}${path}`)).json()) as Record<string, unknown>;
    assert.deepEqual(doc, { resource: url, authorization_servers: [as.issuer], bearer_methods_supported: ["header"], scopes_supported: ["tools", "admin"] });
  }
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS }) });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("www-authenticate"), `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="tools"`);
  const bad = await fetch(url, { method: "POST", headers: { authorization: "Bearer not-a-token", "content-type": "application/json" }, body: "{}" });
  assert.match(String(bad.headers.get("www-authenticate")), /error="invalid_token"/);
});

test("our client's whole flow against our server: discovery, consent, token, and the principal in the handler", async () => {
  await serve(["tools"]);
  const client = new McpClient();
  try {
    await client.connect(new StreamableHttpClientTransport({ url, auth: provider() }));
    const result = await client.callTool("whoami", {});
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text), { subject: "user-1", scopes: ["tools"] });
  } finally {
    await client.close();
  }
  assert.equal(new URL(as.requestsTo("/authorize")[0]!.query.get("resource")!).href, url);
});

test("a missing scope is 403 insufficient_scope, and the client steps up to it", async () => {
  await serve(["tools", "admin"]);
  // The first token comes back narrower than asked (an authorization server may grant less).
  const first = new Set<string>();
  downscoped = (token) => {
    if (first.size === 0) first.add(token);
    return first.has(token) ? ["tools"] : undefined;
  };
  const client = new McpClient();
  try {
    await client.connect(new StreamableHttpClientTransport({ url, auth: provider() }));
    const result = await client.callTool("whoami", {});
    assert.deepEqual(JSON.parse((result.content[0] as { text: string }).text).scopes, ["tools", "admin"]);
  } finally {
    await client.close();
  }
  assert.equal(as.requestsTo("/authorize").length, 2, "one authorization, then one step-up");
  assert.equal(as.requestsTo("/authorize")[1]!.query.get("scope"), "tools admin");
});

test("a session belongs to its subject: another subject's token on it is 403", async () => {
  await serve([]);
  const client = new McpClient();
  try {
    const transport = new StreamableHttpClientTransport({ url, auth: provider(), openGetStream: false });
    await client.connect(transport);
    as.accessTokens.set("tok-of-user-2", url);
    subjects.set("tok-of-user-2", "user-2");
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: "Bearer tok-of-user-2", "mcp-session-id": transport.sessionId!, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /belongs to another principal/);
  } finally {
    await client.close();
  }
});

test("auth excludes a static bearerToken, and needs an authorization server", () => {
  http = new StreamableHttpServer({ onSession: () => undefined });
  mcp = new McpServer({ name: "unused", version: "1.0.0" });
  const verifyToken = () => undefined;
  assert.throws(() => new StreamableHttpServer({ onSession: () => undefined, bearerToken: "t", auth: { authorizationServers: [as.issuer], verifyToken } }), /auth or bearerToken, not both/);
  assert.throws(() => new StreamableHttpServer({ onSession: () => undefined, auth: { authorizationServers: [], verifyToken } }), /at least one issuer/);
});
