/** A real child whose tools/list hangs after the first answer never holds up manager.tools(). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpManager } from "../../src/manager/manager.ts";
import { alive } from "./helpers.ts";
import { capture, fixtureConfig } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

test("tools() serves the cached list while the child's tools/list hangs; the refresh ends after the server's timeout", { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpb-slow-"));
  const log = join(dir, "received.log");
  const manager = new McpManager({ toolCacheTtlMs: 0, shutdownGraceMs: 500 });
  const events = capture(manager);
  let pid: number | undefined;
  try {
    await manager.connect([fixtureConfig("slow", "faulty.ts", ["--hang-list-after", "1", "--log-received", log], { timeout: 5_000 })]);
    pid = manager.status()[0]!.pid;
    const lists = () => readFileSync(log, "utf8").split("\n").filter((l) => l === "tools/list").length;
    const refreshArrived = until(() => lists() === 2, "the second tools/list").then(() => "tools() was still waiting when the server got the refresh");
    const first = await Promise.race([manager.tools().then((tools) => tools.map((t) => t.name)), refreshArrived]);
    assert.deepEqual(first, ["mcp__slow__echo", "mcp__slow__big"]);
    await refreshArrived;
    // The refresh is in flight and unanswered; asking again shares it and still answers at once.
    assert.deepEqual((await manager.tools()).map((t) => t.name), ["mcp__slow__echo", "mcp__slow__big"]);
    assert.equal(lists(), 2, "one refresh in flight, not one per tools() call");

    await until(() => events.lines.some((l) => l.includes('"kind":"tools_refresh"')), "the refresh to time out", { timeoutMs: 15_000 });
    assert.match(events.text(), /re-reading the tool list failed, keeping the previous one: request \\"tools\/list\\" timed out after 5000 ms/);
    assert.equal(manager.status()[0]!.state, "ready");
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(alive(pid), false);
});
