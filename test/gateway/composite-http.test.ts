/**
 * A server serving a CompositeProvider over Streamable HTTP, where the stateless era gives
 * every POST a session of its own: a 2025 session through McpClient, then stateless POSTs
 * (the serving code loaded once, names the same on every request, Mcp-Name checked).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CompositeProvider } from "../../src/gateway/composite.ts";
import { toolPolicy } from "../../src/gateway/middleware-access.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer, type ServerProvider } from "../../src/mcp/server.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { bodyOf, eraPost } from "../transport/http-era-helpers.ts";

const member = (label: string): ServerProvider => ({
  listTools: () => [{ name: "who", inputSchema: { type: "object" } }, { name: "drop", inputSchema: { type: "object" } }],
  callTool: (name, _args, ctx) => ({ content: [{ type: "text", text: `${label} ${name} for ${ctx.client.name} (${ctx.era})` }] }),
});

test("both eras over Streamable HTTP: namespaced names, the policy, the client and era each request carries", async () => {
  const composite = new CompositeProvider([{ namespace: "a", provider: member("a") }, { namespace: "b", provider: member("b") }]);
  const server = new McpServer({ name: "gw", version: "1" }, { providers: [composite], middleware: [toolPolicy({ deny: ["*__drop"] })] });
  const http = new StreamableHttpServer({ onSession: (transport) => server.connect(transport) });
  const { url } = await http.listen(0);
  const client = new McpClient({ clientInfo: { name: "sessionful", version: "1" }, era: "legacy" });
  try {
    await client.connect(new StreamableHttpClientTransport({ url }));
    assert.deepEqual((await client.listTools()).map((t) => t.name), ["a__who", "b__who"]);
    assert.deepEqual((await client.callTool("b__who")).content, [{ type: "text", text: "b who for sessionful (handshake)" }]);
    const listed = await bodyOf(await eraPost(new URL(url), 1, "tools/list"));
    assert.deepEqual(listed.result.tools.map((t: { name: string }) => t.name), ["a__who", "b__who"]);
    const called = await bodyOf(await eraPost(new URL(url), 2, "tools/call", { name: "a__who", arguments: {} }));
    assert.deepEqual([called.result.content[0].text, called.result.resultType], ["a who for raw (stateless)", "complete"]);
    const refused = await bodyOf(await eraPost(new URL(url), 3, "tools/call", { name: "a__drop", arguments: {} }));
    assert.equal(refused.result.isError, true);
  } finally {
    await client.close();
    await http.close();
    await server.close();
  }
});
