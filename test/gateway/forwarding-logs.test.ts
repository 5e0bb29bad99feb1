/**
 * Upstream log messages through a gateway built in process (McpServer + ManagerProvider with
 * CallForwarding over a real McpManager and real fixture children): a log message reaches the
 * client whose call is running, and no client when two clients' calls run on that upstream.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { CallForwarding } from "../../src/gateway/forwarding.ts";
import { ManagerProvider } from "../../src/gateway/manager-provider.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { LoggingMessageNotificationParams } from "../../src/mcp/types.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { fixtureConfig } from "../e2e/manager-helpers.ts";
import { within } from "../helpers/wait.ts";

const forwarding = new CallForwarding();
const manager = new McpManager({ clientFeatures: forwarding.clientFeatures });
const server = new McpServer({ name: "gw", version: "1" }, { providers: [new ManagerProvider(manager, { forwarding })] });
const alice = new McpClient({ era: "legacy" });
const bob = new McpClient({ era: "legacy" });
const seen = { alice: [] as LoggingMessageNotificationParams[], bob: [] as LoggingMessageNotificationParams[] };

before(async () => {
  await manager.connect([fixtureConfig("echo", "echo.ts")]);
  for (const [client, name] of [[alice, "alice"], [bob, "bob"]] as const) {
    const [x, y] = InMemoryTransport.createLinkedPair();
    await server.connect(x);
    await client.connect(y);
    client.on("log", (m) => seen[name].push(m));
    await client.setLoggingLevel("debug");
  }
});

after(async () => {
  await alice.close();
  await bob.close();
  await server.close();
  await manager.close();
});

test("with calls of two clients running on the upstream, its log message goes to neither", async () => {
  const stop = new AbortController();
  let progressed = (): void => {};
  const running = new Promise<void>((resolve) => (progressed = resolve));
  const long = bob.callTool("mcp__echo__slow_progress", { steps: 1000, delayMs: 50 }, { signal: stop.signal, onProgress: () => progressed() });
  long.catch(() => undefined); // cancelled below
  await within(running, "Bob's call to be running");
  await alice.callTool("mcp__echo__log", { level: "warning", message: "whose?" });
  stop.abort();
  await assert.rejects(long);
  assert.deepEqual([seen.alice, seen.bob], [[], []]);
  // Bob's call is over: Alice's next one is hers alone.
  await alice.callTool("mcp__echo__log", { level: "warning", message: "hers" });
  assert.deepEqual(
    seen.alice.map((m) => m.data),
    ["hers"],
  );
  assert.deepEqual(seen.bob, []);
});
