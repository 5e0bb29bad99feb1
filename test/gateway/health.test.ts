/**
 * Health behind `mcp-bridge serve`, with real processes: an upstream that crashes mid-call is
 * restarted, one that will not be restarted answers at once with a clear tool error, and one
 * that stops answering mid-call is found by its pings (real MCP round trips) and restarted;
 * the other upstreams keep working throughout.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { McpClient } from "../../src/mcp/client.ts";
import { until } from "../helpers/wait.ts";
import { fixtureEntry, startServeHttp, textOf } from "./serve-helpers.ts";

/** Calls until the tool answers without error (the upstream is back), at most `tries` times. */
async function callUntilAnswered(client: McpClient, name: string, tries: number): Promise<string> {
  let last = "";
  for (let i = 0; i < tries; i++) {
    const result = await client.callTool(name, { text: "back" });
    if (result.isError !== true) return textOf(result);
    last = textOf(result);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${name} did not answer after ${tries} tries; last: ${last}`);
}

test("an upstream that crashes mid-call fails that call, is restarted, and the others keep working", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({
    echo: fixtureEntry("echo.ts"),
    crashy: fixtureEntry("faulty.ts", ["--crash-after", "2"]),
    gone: fixtureEntry("faulty.ts", ["--crash-after", "1"], { restartOnCrash: false }),
  });
  try {
    const client = await serve.connect({ era: "legacy" });
    assert.equal(textOf(await client.callTool("mcp__crashy__echo", { text: "one" })), "one");
    const crashed = await client.callTool("mcp__crashy__echo", { text: "two" });
    assert.equal(crashed.isError, true);
    assert.match(textOf(crashed), /crashed|exited|closed/i);
    // Meanwhile, the others answer.
    assert.equal(textOf(await client.callTool("mcp__echo__echo", { text: "still here" })), "still here");
    // Restarted by the manager (with backoff): it answers again.
    assert.equal(await callUntilAnswered(client, "mcp__crashy__echo", 200), "back");

    // One that is not restarted: its crash fails the call, and every later call is refused at once, saying why.
    assert.equal((await client.callTool("mcp__gone__echo", { text: "x" })).isError, true);
    await until(() => /upstream "gone"(?: \(session \d+\))? is failed/.test(serve.stderr()), "gone to be reported failed");
    const refused = await client.callTool("mcp__gone__echo", { text: "y" });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /MCP server "gone" has failed and will not be restarted/);
    assert.equal(textOf(await client.callTool("mcp__echo__echo", { text: "and here" })), "and here");
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("an upstream that stops answering mid-call fails its pings, is restarted, and its call ends with an error while the others answer", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp(
    { echo: fixtureEntry("echo.ts"), silent: fixtureEntry("faulty.ts", ["--silent-after-calls", "1"]) },
    ["--health-interval", "300"],
  );
  try {
    const client = await serve.connect({ era: "legacy" });
    const hung = client.callTool("mcp__silent__echo", { text: "never answered" });
    hung.catch(() => undefined); // awaited below
    // The others answer while it hangs.
    assert.equal(textOf(await client.callTool("mcp__echo__echo", { text: "meanwhile" })), "meanwhile");
    const result = await hung;
    assert.equal(result.isError, true);
    assert.match(textOf(result), /The connection to MCP server "silent" closed before tool "echo" answered, so it may or may not have run/);
    assert.match(serve.stderr(), /upstream "silent"(?: \(session \d+\))? is restarting/);
    assert.equal(textOf(await client.callTool("mcp__echo__echo", { text: "after" })), "after");
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});
