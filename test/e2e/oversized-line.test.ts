/**
 * A response line over the client's `maxLineBytes`, from a real child process: the request it
 * answers fails at once with LIMIT_EXCEEDED when the line's id can be read, and the timeout
 * says that a line was discarded when it cannot; through the manager, the server's status and
 * `lastError` carry the same reason. A small limit keeps the lines small and the tests fast.
 */
import { mock, test } from "node:test";
import assert from "node:assert/strict";
import { McpManager } from "../../src/manager/manager.ts";
import type { TransportFactory } from "../../src/manager/transport-factory.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { alive, connectFixture, waitGone } from "./helpers.ts";
import { fixtureConfig } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

const LIMIT = 4096;
/** What the client says about a discarded line (the line is at least this long; the limit). */
const LINE = /a line of at least \d+ bytes, over the 4096-byte limit \(maxLineBytes\),/;
const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

/** A manager whose stdio transports have the small line limit; `transports` are the ones it made. */
function limitedManager(): { manager: McpManager; transports: StdioClientTransport[] } {
  const transports: StdioClientTransport[] = [];
  const transportFactory: TransportFactory = (prepared, hooks) => {
    const t = new StdioClientTransport({
      command: prepared.command!,
      args: prepared.config.args,
      cwd: prepared.config.cwd,
      env: prepared.env ?? {},
      name: prepared.config.name,
      maxLineBytes: LIMIT,
      shutdownGraceMs: hooks.shutdownGraceMs,
    });
    transports.push(t);
    return t;
  };
  return { manager: new McpManager({ transportFactory, shutdownGraceMs: 500 }), transports };
}

test("a response line over the limit whose id is readable fails its call at once with LIMIT_EXCEEDED; the next call works", async () => {
  const { client, transport } = await connectFixture("faulty.ts", [], {}, { maxLineBytes: LIMIT });
  try {
    // Without the fix this call waits for its whole timeout and rejects with TIMEOUT.
    await assert.rejects(client.callTool("big", { bytes: 100_000 }, { timeoutMs: 60_000 }), {
      name: "BridgeError",
      code: "LIMIT_EXCEEDED",
      message: new RegExp(`^request "tools/call": the response was ${LINE.source} and was discarded; raise maxLineBytes`),
    });
    assert.equal(transport.stats.tooLongLines, 1);
    assert.equal(text(await client.callTool("echo", { text: "after" })), "after");
  } finally {
    await client.close();
  }
  assert.equal(alive(transport.pid), false);
});

test("a response line over the limit whose id comes last: the call's TIMEOUT says a line was discarded meanwhile", async () => {
  const { client, transport } = await connectFixture("faulty.ts", ["--id-last"], {}, { maxLineBytes: LIMIT });
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const call = client.callTool("big", { bytes: 100_000 }, { timeoutMs: 60_000 });
    await until(() => transport.stats.tooLongLines === 1, "the long line to be discarded", { spin: true });
    mock.timers.tick(60_000);
    await assert.rejects(call, {
      code: "TIMEOUT",
      message: new RegExp(`^request "tools/call" timed out after 60000 ms; meanwhile ${LINE.source} was discarded without a readable id`),
    });
  } finally {
    mock.timers.reset();
  }
  try {
    assert.equal(text(await client.callTool("echo", { text: "after" })), "after");
  } finally {
    await client.close();
  }
});

test("manager: tools/list over the limit fails the server at once; status and lastError name the limit", async () => {
  const { manager, transports } = limitedManager();
  try {
    await manager.connect([fixtureConfig("big", "faulty.ts", ["--tools", "100"], { restartOnCrash: false, timeout: 60_000 })]);
    const status = manager.status()[0]!;
    assert.equal(status.state, "failed");
    assert.match(status.lastError ?? "", new RegExp(`^request "tools/list": the response was ${LINE.source} and was discarded`));
  } finally {
    await manager.close();
  }
  for (const t of transports) assert.ok(await waitGone(t.pid!), `pid ${t.pid} is gone`);
});

test("manager: a tools/list over the limit is not retried by restarting the server (it would be as long again)", async () => {
  const { manager, transports } = limitedManager();
  try {
    await manager.connect([fixtureConfig("big", "faulty.ts", ["--tools", "100"], { restartOnCrash: true, maxRestarts: 3, timeout: 60_000 })]);
    assert.equal(manager.status()[0]!.state, "failed");
    assert.equal(transports.length, 1, "one process started, none restarted");
  } finally {
    await manager.close();
  }
  for (const t of transports) assert.ok(await waitGone(t.pid!), `pid ${t.pid} is gone`);
});

test("manager: tools/list over the limit without a readable id: the not-ready timeout says a line was discarded", async () => {
  const { manager, transports } = limitedManager();
  const timeout = 30_000;
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const connecting = manager.connect([fixtureConfig("big", "faulty.ts", ["--tools", "100", "--id-last"], { restartOnCrash: false, timeout })]);
    await until(() => transports[0]?.stats.tooLongLines === 1, "the long tools/list line to be discarded", { spin: true });
    mock.timers.tick(timeout);
    await connecting;
  } finally {
    mock.timers.reset();
  }
  try {
    const status = manager.status()[0]!;
    assert.equal(status.state, "failed");
    assert.match(status.lastError ?? "", new RegExp(`did not become ready within ${timeout} ms \\(start, handshake and tools/list\\); meanwhile ${LINE.source} was discarded without a readable id`));
  } finally {
    await manager.close();
  }
  for (const t of transports) assert.ok(await waitGone(t.pid!), `pid ${t.pid} is gone`);
});
