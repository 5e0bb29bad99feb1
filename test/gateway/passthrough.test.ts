/**
 * `mcp-bridge serve --no-namespace`: one upstream served under its own names (tools, prompts,
 * resource URIs), as a proxy; and an upstream's log messages during a call reaching the client
 * of that call. Real processes: serve over HTTP in front of the echo fixture.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { LoggingMessageNotificationParams } from "../../src/mcp/types.ts";
import { run } from "../cli/helpers.ts";
import { fixtureEntry, startServeHttp, textOf } from "./serve-helpers.ts";

test("--no-namespace serves the one upstream's tools, prompts and resources under their own names", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({ echo: fixtureEntry("echo.ts") }, ["--no-namespace"]);
  try {
    const client = await serve.connect({ era: "legacy" });
    const tools = (await client.listTools()).map((t) => t.name);
    assert.ok(tools.includes("echo") && tools.includes("add") && !tools.some((n) => n.startsWith("mcp__")), tools.join(", "));
    assert.equal(textOf(await client.callTool("echo", { text: "as it is" })), "as it is");
    assert.ok((await client.listPrompts()).some((p) => p.name === "greet"));
    assert.deepEqual((await client.getPrompt("greet", { name: "Ada" })).messages[0]!.content, { type: "text", text: "Hi Ada!" });
    assert.ok((await client.listResources()).some((r) => r.uri === "echo://greeting"));
    const read = await client.readResource("echo://greeting");
    assert.deepEqual([read.contents[0]!.uri, (read.contents[0] as { text: string }).text], ["echo://greeting", "Hello from echo"]);
    const completed = await client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "" } });
    assert.ok(Array.isArray(completed.completion.values));
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("--no-namespace with more than one upstream is a usage error (exit 2)", async () => {
  const r = await run(["serve", "--config", "fixtures/gateway/demo.json", "--stdio", "--no-namespace"]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /--no-namespace serves one upstream under its own names; .* has 2/);
});

test("an upstream's log message during a call reaches the client of that call, at its log level", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({ echo: fixtureEntry("echo.ts") });
  try {
    const client = await serve.connect({ era: "legacy" });
    const other = await serve.connect({ era: "legacy" });
    const seen: LoggingMessageNotificationParams[] = [];
    const seenByOther: LoggingMessageNotificationParams[] = [];
    client.on("log", (m) => seen.push(m));
    other.on("log", (m) => seenByOther.push(m));
    await client.setLoggingLevel("info");
    await client.callTool("mcp__echo__log", { level: "debug", message: "below the level" });
    await client.callTool("mcp__echo__log", { level: "warning", message: "from the upstream" });
    assert.deepEqual(
      seen.map((m) => [m.level, m.data, m.logger]),
      [["warning", "from the upstream", "echo"]],
    );
    assert.deepEqual(seenByOther, []);
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});
