/**
 * McpClient loads its JSON Schema validator with the first tool result it has to check, not
 * with the listing (which `mcp-bridge inspect` stops at). This file runs in a process of its own
 * (node --test), so its first checked result really is the one that loads the validator.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CallToolResult } from "../../src/mcp/types.ts";
import { connectPair } from "./client-helpers.ts";

const outputSchema = { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] };

test("results arriving together before the validator is loaded are each checked, and in order of their calls", async () => {
  const pair = await connectPair();
  pair.server.setRequestHandler("tools/list", () => ({
    tools: [
      { name: "add", inputSchema: { type: "object" }, outputSchema },
      { name: "plain", inputSchema: { type: "object" } },
    ],
  }));
  pair.server.setRequestHandler("tools/call", (p) => {
    const { name, arguments: args } = p as { name: string; arguments: { sum?: unknown } };
    if (name === "plain") return { content: [{ type: "text", text: "no schema" }] };
    return { content: [], structuredContent: { sum: args.sum } };
  });
  await pair.client.connect(pair.transport);
  await pair.client.listTools();

  const [good, bad, plain, againGood] = await Promise.allSettled([
    pair.client.callTool("add", { sum: 3 }),
    pair.client.callTool("add", { sum: "three" }),
    pair.client.callTool("plain"),
    pair.client.callTool("add", { sum: 4 }),
  ]);
  assert.deepEqual(good.status === "fulfilled" && good.value.structuredContent, { sum: 3 });
  assert.equal(bad.status, "rejected");
  assert.deepEqual(
    bad.status === "rejected" && { name: (bad.reason as Error).name, code: (bad.reason as { code?: string }).code },
    { name: "BridgeError", code: "OUTPUT_SCHEMA_MISMATCH" },
  );
  assert.match(bad.status === "rejected" ? (bad.reason as Error).message : "", /\/sum/);
  assert.deepEqual(plain.status === "fulfilled" && (plain.value as CallToolResult).content, [{ type: "text", text: "no schema" }]);
  assert.deepEqual(againGood.status === "fulfilled" && againGood.value.structuredContent, { sum: 4 });

  // Once loaded, a mismatch is reported as before (now without a load in between).
  await assert.rejects(pair.client.callTool("add", { sum: null }), { name: "BridgeError", code: "OUTPUT_SCHEMA_MISMATCH" });
  await pair.client.close();
});
