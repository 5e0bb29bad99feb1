// What the validator's "could not validate" result becomes where the library uses it: the
// client's outputSchema check (a typed error of its own, not a mismatch), the bridge's failure
// result for the model, and the server's checks of arguments and results. Client and server run
// over the in-memory linked pair.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fromError } from "../../src/bridge/failures.ts";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { assertBridgeError } from "../helpers/errors.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { CallToolResult } from "../../src/mcp/types.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { refChain } from "../../scripts/bench/schema-corpus.ts";

/** A schema no validator can check within its budget on a long string: 2^22 paths. */
const costly = refChain(22, { type: "integer" });
const longText = "s".repeat(5000);

/** A server answering tools/list and tools/call by hand (it does not check its own results). */
async function fakeServer(call: () => unknown): Promise<McpClient> {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const peer = new JsonRpcPeer(a);
  peer.setRequestHandler("initialize", (p) => ({
    protocolVersion: (p as { protocolVersion: string }).protocolVersion,
    capabilities: { tools: {} },
    serverInfo: { name: "fake", version: "1" },
  }));
  peer.setRequestHandler("tools/list", () => ({
    tools: [
      { name: "costly", inputSchema: { type: "object" }, outputSchema: { type: "object", $defs: costly.$defs, properties: { text: { $ref: "#/$defs/d0" } } } },
    ],
  }));
  peer.setRequestHandler("tools/call", call);
  await peer.start();
  const client = new McpClient();
  await client.connect(b);
  await client.listTools();
  return client;
}

describe("client: outputSchema", () => {
  it("could not validate is OUTPUT_SCHEMA_UNDECIDED, not a mismatch, and the result is withheld", async () => {
    let text: unknown = longText;
    const client = await fakeServer(() => ({ content: [], structuredContent: { text } }));
    const withheld: unknown = await client.callTool("costly").then(() => "the call succeeded", (e: unknown) => e);
    assertBridgeError(
      withheld,
      "OUTPUT_SCHEMA_UNDECIDED",
      /^tool "costly" returned structuredContent that could not be checked against its outputSchema, so the result was withheld: \/text: could not validate: the validation budget of \d+ steps ran out[^]*validateStructuredContent/,
    );
    assert.equal(((withheld as BridgeError).details.errors as Array<{ keyword: string }>)[0]!.keyword, "budget");
    // The same schema decides short values (they are remembered), both ways.
    text = 7;
    assert.deepEqual((await client.callTool("costly")).structuredContent, { text: 7 });
    text = "short";
    await assert.rejects(client.callTool("costly"), { code: "OUTPUT_SCHEMA_MISMATCH" });
    await client.close();
  });

  it("the bridge tells the model it could not be checked, and that retrying will not help", () => {
    const err = new BridgeError("OUTPUT_SCHEMA_UNDECIDED", "tool \"costly\" returned structuredContent that could not be checked");
    const r = fromError(err, { server: "fs", tool: "costly" });
    assert.deepEqual(r.failure, { kind: "invalid_result", retryable: false });
    assert.match(r.text, /could not check against its declared output schema[\s\S]*Retrying will not help[\s\S]*could not be checked$/);
  });
});

describe("server: inputSchema and outputSchema", () => {
  async function callServer(server: McpServer, args: Record<string, unknown>): Promise<CallToolResult> {
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new McpClient({ validateStructuredContent: false });
    await client.connect(b);
    try {
      return await client.callTool("t", args);
    } finally {
      await client.close();
    }
  }

  it("arguments that could not be validated do not run the tool", async () => {
    let ran = 0;
    const server = new McpServer({ name: "s", version: "1" });
    const inputSchema = { type: "object", $defs: costly.$defs, properties: { text: { $ref: "#/$defs/d0" } } };
    server.tool({ name: "t", inputSchema }, () => {
      ran++;
      return { content: [{ type: "text", text: "ran" }] };
    });
    const r = await callServer(server, { text: longText });
    assert.equal(r.isError, true);
    assert.match(JSON.stringify(r.content), /Could not validate the arguments of tool \\"t\\", so it did not run: \/text: could not validate/);
    assert.equal(ran, 0);
    assert.equal((await callServer(server, { text: 3 })).isError, undefined);
    assert.equal(ran, 1);
  });

  it("a result that could not be checked is an error result naming the tool", async () => {
    const server = new McpServer({ name: "s", version: "1" });
    const outputSchema = { type: "object", $defs: costly.$defs, properties: { text: { $ref: "#/$defs/d0" } } };
    server.tool({ name: "t", inputSchema: { type: "object" }, outputSchema }, () => ({ content: [], structuredContent: { text: longText } }));
    const r = await callServer(server, {});
    assert.equal(r.isError, true);
    assert.match(JSON.stringify(r.content), /Tool \\"t\\" returned structuredContent that could not be checked against its outputSchema: \/text: could not validate/);
  });
});
