/**
 * The server loads its JSON Schema validator with the first tools/call of the process and
 * compiles each tool's schemas on that tool's first call. This file runs in a process of its
 * own (node --test), so its first call really is the one that loads the validator.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { McpServer } from "../../src/mcp/server.ts";
import type { CallToolResult } from "../../src/mcp/types.ts";
import { connect } from "./server-harness.ts";

const numberArg = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
const sumOut = { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] };

test("first calls arriving together, before the validator is loaded, are each validated", async () => {
  const server = new McpServer({ name: "lazy", version: "1" });
  let ran = 0;
  server.tool({ name: "double", inputSchema: numberArg, outputSchema: sumOut }, (args) => {
    ran++;
    const n = args.n as number;
    return { content: [], structuredContent: n < 0 ? { sum: "negative" } : { sum: 2 * n } };
  });
  const h = await connect(server);
  await h.initialize();
  const listed = await h.client.request<{ tools: unknown[] }>("tools/list");
  assert.deepEqual(listed.tools, [{ name: "double", inputSchema: numberArg, outputSchema: sumOut }]);

  const call = (args: unknown) => h.client.request<CallToolResult>("tools/call", { name: "double", arguments: args });
  const [good, badInput, badOutput, unknown] = await Promise.allSettled([
    call({ n: 4 }),
    call({ n: "four" }),
    call({ n: -1 }),
    h.client.request("tools/call", { name: "nope", arguments: {} }),
  ]);
  assert.equal(good.status, "fulfilled");
  assert.deepEqual(good.status === "fulfilled" && good.value.structuredContent, { sum: 8 });
  assert.ok(badInput.status === "fulfilled" && badInput.value.isError === true);
  assert.match(JSON.stringify(badInput.status === "fulfilled" && badInput.value.content), /Invalid arguments for tool \\"double\\"/);
  assert.ok(badOutput.status === "fulfilled" && badOutput.value.isError === true);
  assert.match(JSON.stringify(badOutput.status === "fulfilled" && badOutput.value.content), /does not match its outputSchema/);
  assert.equal(unknown.status, "rejected");
  assert.equal(ran, 2, "the handler never runs for arguments its schema refuses");

  // A tool registered after the validator is loaded is compiled on its first call, synchronously.
  server.tool({ name: "later", inputSchema: numberArg }, () => ({ content: [{ type: "text", text: "ok" }] }));
  const later = await h.client.request<CallToolResult>("tools/call", { name: "later", arguments: {} });
  assert.equal(later.isError, true);
  await h.client.close();
  await server.close();
});
