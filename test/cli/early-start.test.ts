/**
 * The CLI starts a stdio server before it loads its MCP client (src/cli/early-start.ts): what
 * the server says in the meantime waits for the client, a failed spawn is reported by the
 * client's start, and a client connects over the wrapper as over the transport itself.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EarlyStartedTransport } from "../../src/cli/early-start.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { alive, fixture } from "../e2e/helpers.ts";
import { until, within } from "../helpers/wait.ts";

/** A server that speaks first: two notifications, then it exits. */
const SPEAKS_FIRST = [
  'process.stdout.write(\'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\\n\');',
  'process.stdout.write(\'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":2}}\\n\');',
].join("");

describe("EarlyStartedTransport", () => {
  test("what the server sends before start() is handed on at start(), in order, and its end after it", async () => {
    const inner = new StdioClientTransport({ command: process.execPath, args: ["-e", SPEAKS_FIRST], name: "early", shutdownGraceMs: 200 });
    const early = new EarlyStartedTransport(inner);
    try {
      await early.settled;
      const pid = inner.pid;
      await until(() => !alive(pid), "the server to exit");
      const seen: unknown[] = [];
      const ended = new Promise<void>((resolve) => (early.onclose = () => (seen.push("closed"), resolve())));
      early.onmessage = (m) => seen.push((m as { params: { data: number } }).params.data);
      // Nothing reached the handlers before start(): the client had not wired them yet.
      assert.deepEqual(seen, []);
      await early.start();
      await within(ended, "the end of the transport");
      assert.deepEqual(seen, [1, 2, "closed"]);
    } finally {
      await early.close();
    }
  });

  test("a second start() is INVALID_STATE", async () => {
    const early = new EarlyStartedTransport(new StdioClientTransport(fixture("echo.ts")));
    try {
      await early.start();
      await assert.rejects(early.start(), { code: "INVALID_STATE" });
    } finally {
      await early.close();
    }
  });

  test("a spawn that fails settles `settled` and rejects start() with SPAWN_FAILED", async () => {
    const early = new EarlyStartedTransport(new StdioClientTransport({ command: "mcp-bridge-no-such-command", name: "missing" }));
    await early.settled;
    await assert.rejects(early.start(), { code: "SPAWN_FAILED" });
    await early.close();
  });

  test("McpClient connects over it, lists, and closing the client stops the server", async () => {
    const inner = new StdioClientTransport(fixture("echo.ts"));
    const early = new EarlyStartedTransport(inner);
    const client = new McpClient({ era: "legacy" });
    try {
      await early.settled;
      const init = await client.connect(early);
      assert.equal(init.serverInfo.name, "echo");
      assert.ok((await client.listTools()).some((t) => t.name === "echo"));
    } finally {
      await client.close();
    }
    assert.equal(alive(inner.pid), false);
  });
});
