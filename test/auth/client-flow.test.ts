/**
 * McpClient over Streamable HTTP with an OAuthProvider as the transport's `auth`, against the
 * protected echo server and the loopback authorization server fixture: the whole flow, an
 * authorization server that never answers, and where the token may go.
 */
import assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { OAuthProvider } from "../../src/auth/oauth-provider.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { eachProtectedServer } from "./auth-server-hooks.ts";

const servers = eachProtectedServer();

async function consent(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  return res.headers.get("location") ?? "";
}

const provider = (more: { timeoutMs?: number } = {}) =>
  new OAuthProvider({ serverUrl: servers.rs.url, redirectUri: "http://127.0.0.1:9/callback", authorize: consent, http: { timeoutMs: more.timeoutMs ?? 10_000 } });

test("connect, list and call through the flow; every request after the first carries the token", async () => {
  const client = new McpClient();
  try {
    await client.connect(new StreamableHttpClientTransport({ url: servers.rs.url, auth: provider() }));
    const result = await client.callTool("echo", { text: "through OAuth" });
    assert.deepEqual(result.content, [{ type: "text", text: "through OAuth" }]);
  } finally {
    await client.close();
  }
  assert.equal(servers.rs.seen[0], undefined);
  const bearers = new Set(servers.rs.seen.slice(1));
  assert.equal(bearers.size, 1, "one token for every later request, DELETE included");
  assert.ok(servers.as.accessTokens.has(String([...bearers][0]).slice("Bearer ".length)));
});

test("an authorization server that never answers: connect fails at the connect time limit", async () => {
  servers.as.route("/.well-known/oauth-authorization-server", "hang");
  const client = new McpClient({ connectTimeoutMs: 300 });
  await assert.rejects(client.connect(new StreamableHttpClientTransport({ url: servers.rs.url, auth: provider({ timeoutMs: 5_000 }) })), { code: "TIMEOUT" });
  await client.close();
});

test("a redirect to another origin is refused before the token goes there", async () => {
  const elsewhere: (string | undefined)[] = [];
  const other = http.createServer((req, res) => {
    elsewhere.push(req.headers.authorization);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  const otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  const moved = http.createServer((_req, res) => void res.writeHead(307, { location: `${otherOrigin}/mcp` }).end());
  await new Promise<void>((resolve) => moved.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(moved.address() as AddressInfo).port}/mcp`;
  const auth = { accessToken: async () => "tok-never-elsewhere-123", handleUnauthorized: async () => "tok-never-elsewhere-123" };
  const client = new McpClient({ connectTimeoutMs: 5_000 });
  try {
    await assert.rejects(client.connect(new StreamableHttpClientTransport({ url, auth })), /redirecting to another origin/);
    assert.deepEqual(elsewhere, []);
  } finally {
    await client.close();
    moved.closeAllConnections();
    other.closeAllConnections();
    await Promise.all([new Promise((r) => moved.close(r)), new Promise((r) => other.close(r))]);
  }
});
