/**
 * A server that serves from providers, as a real stdio child (fixtures/servers/composite.ts):
 * McpClient in the handshake era, raw lines in the stateless era; clashing names under
 * namespaces, the policy and the result limit applied, input asked of the client in both eras.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { alive, connectFixture, rawStdioChild, reap } from "./helpers.ts";

test("handshake era: namespaced tools and prompts, the policy, the limit, and an elicitation", { timeout: 60_000 }, async () => {
  const { client, transport } = await connectFixture("composite.ts", [], {
    era: "legacy",
    handlers: { elicitation: () => ({ action: "accept", content: { name: "Ada" } }) },
  });
  try {
    assert.deepEqual((await client.listTools()).map((t) => t.name), ["docs__search", "docs__long", "docs__ask", "tickets__search", "tickets__long", "tickets__ask"]);
    assert.deepEqual((await client.callTool("tickets__search", { q: "slow" })).content, [{ type: "text", text: "tickets search slow" }]);
    const refused = await client.callTool("docs__delete");
    assert.equal(refused.isError, true);
    assert.match((refused.content[0] as { text: string }).text, /refused by deny pattern "\*__delete"/);
    const long = await client.callTool("docs__long");
    assert.equal((long.content[0] as { text: string }).text.length, 200);
    assert.deepEqual(long.content[1], { type: "text", text: "[… 1800 more characters cut by mcp-bridge]" });
    assert.deepEqual((await client.callTool("tickets__ask")).content, [{ type: "text", text: "tickets: hello Ada (handshake)" }]);
    assert.deepEqual((await client.listPrompts()).map((p) => p.name), ["docs__summary", "tickets__summary"]);
    assert.deepEqual((await client.getPrompt("tickets__summary")).messages[0]!.content, { type: "text", text: "tickets summary" });
  } finally {
    const pid = transport.pid;
    await client.close();
    assert.equal(alive(pid), false, "the fixture must be gone after close()");
    reap(pid);
  }
});

test("stateless era over stdio: the same names, and the elicitation as an input round", { timeout: 60_000 }, async () => {
  const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };
  const { send, next, end, kill } = rawStdioChild("composite.ts");
  try {
    send({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } });
    const listed = await next();
    assert.deepEqual(listed.result.tools.map((t: { name: string }) => t.name).slice(0, 3), ["docs__search", "docs__long", "docs__ask"]);
    const ask = { name: "docs__ask", arguments: {}, _meta: META };
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: ask });
    const round = await next();
    assert.equal(round.result.resultType, "input_required");
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { ...ask, inputResponses: { name: { action: "accept", content: { name: "Grace" } } }, requestState: round.result.requestState } });
    const done = await next();
    assert.deepEqual([done.id, done.result.content[0].text, done.result.resultType], [3, "docs: hello Grace (stateless)", "complete"]);
    assert.equal(await end(), 0);
  } finally {
    await kill();
  }
});
