/**
 * What a caller without type checks (plain JavaScript) gets wrong at the public entry points
 * is a TypeError at once, naming the option, not an error from deep inside Node or a failure
 * at the first call. (McpServer registrations: test/mcp/server.test.ts; McpManager.connect:
 * test/manager/manager.test.ts.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { McpClient } from "../src/mcp/client.ts";
import { StdioClientTransport } from "../src/transport/stdio-client.ts";
import { StreamableHttpServer } from "../src/transport/http-server.ts";
import { SseServer } from "../src/transport/sse-server.ts";

/** Calls `make` with arguments the types forbid. */
function loosely<T>(make: (...args: never[]) => T, ...args: unknown[]): () => T {
  return () => (make as (...a: unknown[]) => T)(...args);
}

test("StdioClientTransport: a missing or empty command, or args as one string, is a TypeError naming it", () => {
  const make = (o: unknown) => new StdioClientTransport(o as never);
  assert.throws(loosely(make, {}), { name: "TypeError", message: "StdioClientTransport: command must be a non-empty string, got undefined" });
  assert.throws(loosely(make, { command: 5 }), { name: "TypeError", message: /command must be a non-empty string, got number/ });
  assert.throws(loosely(make, { command: "" }), { name: "TypeError", message: /got an empty string/ });
  assert.throws(loosely(make, { command: "node", args: "-v" }), { name: "TypeError", message: /args must be an array of strings/ });
  assert.throws(loosely(make, { command: "node", args: ["-e", 1] }), { name: "TypeError", message: /args must be an array of strings/ });
  assert.throws(loosely(make, undefined), { name: "TypeError", message: /needs options/ });
  // The right shape is accepted (nothing is spawned before start()).
  assert.equal(new StdioClientTransport({ command: "node", args: ["-v"] }).pid, undefined);
});

test("McpClient: connect without a Transport, a bad era or a timeout that is not a number of ms is a TypeError", async () => {
  const client = new McpClient();
  for (const bad of [undefined, {}, { start: () => undefined, send: () => undefined }, "stdio"]) {
    await assert.rejects(client.connect(bad as never), { name: "TypeError", message: /McpClient\.connect needs a Transport \(an object with start, send and close\)/ }, String(bad));
  }
  // The refused connect left nothing half-made: the client still refuses calls as unconnected.
  await assert.rejects(client.listTools(), { name: "BridgeError", code: "NOT_CONNECTED" });
  assert.throws(() => new McpClient({ era: "2025" as never }), { name: "TypeError", message: 'McpClient: era must be "auto", "legacy" or "modern", got "2025"' });
  assert.throws(() => new McpClient({ toolTimeoutMs: "fast" as never }), { name: "TypeError", message: /toolTimeoutMs must be a finite number of milliseconds >= 0, got string/ });
  assert.throws(() => new McpClient({ connectTimeoutMs: -1 }), { name: "TypeError", message: /connectTimeoutMs .* got -1/ });
  assert.throws(() => new McpClient({ requestTimeoutMs: Number.NaN }), { name: "TypeError", message: /requestTimeoutMs .* got NaN/ });
  assert.ok(new McpClient({ toolTimeoutMs: 5000, era: "legacy" }));
});

test("StreamableHttpServer and SseServer: onSession must be a function", () => {
  for (const [name, make] of [
    ["StreamableHttpServer", (o: unknown): unknown => new StreamableHttpServer(o as never)],
    ["SseServer", (o: unknown): unknown => new SseServer(o as never)],
  ] as const) {
    for (const options of [{}, { onSession: "connect" }, undefined]) {
      assert.throws(loosely(make, options), { name: "TypeError", message: `${name}: onSession must be a function (transport) => server.connect(transport)` });
    }
  }
});
