/**
 * `list_changed` through `mcp-bridge serve`, with real processes: an upstream whose tools,
 * prompts and resources change makes the gateway list them afresh and tell each downstream
 * client with its own notification, after which the client's next list holds the new items
 * under the gateway's names.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { McpClient } from "../../src/mcp/client.ts";
import { within } from "../helpers/wait.ts";
import { fixtureEntry, sharing, startServeHttp, textOf } from "./serve-helpers.ts";

/** Resolves on the client's next event of each kind. */
function nextChanges(client: McpClient): Promise<unknown[]> {
  const kinds = ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] as const;
  return Promise.all(kinds.map((kind) => within(new Promise((resolve) => client.on(kind, () => resolve(kind))), `${kind} from serve`)));
}

for (const era of ["legacy", "modern"] as const) {
  test(`an upstream's changed lists reach every ${era === "legacy" ? "2025 (session)" : "stateless"} client as the gateway's own list_changed`, { timeout: 120_000 }, async () => {
    // One upstream that both clients see change: shared (a stateless client is served by shared ones only).
    const serve = await startServeHttp({ echo: fixtureEntry("echo.ts"), changing: fixtureEntry("changing.ts") }, [], sharing("echo", "changing"));
    try {
      const caller = await serve.connect({ era });
      const watcher = await serve.connect({ era });
      // Each client has listed once: a client is told of changes to what it has seen.
      for (const client of [caller, watcher]) assert.ok(!(await client.listTools()).some((t) => t.name === "mcp__changing__extra_1"));
      const changes = [nextChanges(caller), nextChanges(watcher)];
      assert.equal(textOf(await caller.callTool("mcp__changing__grow")), "added extra_1");
      await Promise.all(changes);
      const tools = (await watcher.listTools()).map((t) => t.name);
      assert.ok(tools.includes("mcp__changing__extra_1") && tools.includes("mcp__echo__echo"), tools.join(", "));
      assert.equal(textOf(await watcher.callTool("mcp__changing__extra_1")), "extra 1");
      assert.ok((await watcher.listPrompts()).some((p) => p.name === "mcp__changing__extra_1"));
      const uris = (await watcher.listResources()).map((r) => r.uri);
      assert.ok(uris.includes("mcp-bridge://changing/changing://extra/1"), uris.join(", "));
    } finally {
      assert.deepEqual(await serve.stop(), [0, null]);
    }
  });
}
