/**
 * A slow or hung server never holds up the session: `tools()` serves the cached list while a
 * refresh runs, and every request the manager makes is bounded by the server's own `timeout`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ManagerWarning } from "../../src/manager/events.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { echoServer, memConfig, memoryServers } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

/** A session of one in-process server, `hung` after its first tools/list answer (it drops everything). */
async function hungAfterReady(timeout: number) {
  const servers = memoryServers(() => {
    const server = echoServer();
    server.prompt({ name: "p" }, () => ({ messages: [] }));
    return server;
  });
  const manager = new McpManager({ transportFactory: servers.factory, toolCacheTtlMs: 0, processGuard: false });
  const warnings: ManagerWarning[] = [];
  manager.on("warning", (w) => warnings.push(w));
  await manager.connect([memConfig("slow", { timeout })]);
  assert.equal(manager.status()[0]!.state, "ready");
  servers.latest("slow").muted = true;
  return { manager, warnings };
}

test("tools() answers from the cached list while a refresh of a hung server is still waiting", { timeout: 20_000 }, async () => {
  const { manager, warnings } = await hungAfterReady(30_000);
  try {
    // The muted server swallows the refresh; a tools() that waited for it would not settle for 30 s.
    const first = await manager.tools();
    assert.deepEqual(first.map((t) => t.name), ["mcp__slow__echo"]);
    const second = await manager.tools();
    assert.deepEqual(second.map((t) => t.name), ["mcp__slow__echo"]);
    assert.deepEqual(warnings.filter((w) => w.kind === "tools_refresh"), [], "the refresh is still running");
  } finally {
    await manager.close();
  }
});

test("a hung refresh and a hung prompt request end after the server's own timeout, not the 60 s default", { timeout: 20_000 }, async () => {
  const { manager, warnings } = await hungAfterReady(300);
  try {
    await manager.tools();
    await until(() => warnings.some((w) => w.kind === "tools_refresh"), "the refresh to fail");
    const refresh = warnings.find((w) => w.kind === "tools_refresh")!;
    assert.match(refresh.message, /re-reading the tool list failed, keeping the previous one: request "tools\/list" timed out after 300 ms/);
    assert.deepEqual((await manager.tools()).map((t) => t.name), ["mcp__slow__echo"], "the previous list is kept");
    await assert.rejects(manager.getPrompt("slow", "p"), {
      name: "ManagerError",
      code: "REQUEST_FAILED",
      message: /getting prompt "p" failed: request "prompts\/get" timed out after 300 ms/,
    });
  } finally {
    await manager.close();
  }
});
