/**
 * Our client's whole OAuth flow against our own server: McpClient with an OAuthProvider,
 * StreamableHttpServer with `protectedResource` and a verifier backed by the loopback
 * authorization server fixture. The verified principal reaches the tool handler; a step-up
 * follows a 403. (The server's refusals one by one: test/transport/http-protected.test.ts.)
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { AuthServerFixture } from "../../fixtures/oauth/authorization-server.ts";

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
    protectedResource: {
      authorizationServers: [as.issuer],
      requiredScopes,
      scopesSupported: ["tools", "admin"],
      // The fixture's own record stands in for a JWT check; the audience is checked as it must be.
      verifier: async (token) => {
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
  const client = new McpClient({ era: "legacy" }); // sessions are the handshake era's
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

