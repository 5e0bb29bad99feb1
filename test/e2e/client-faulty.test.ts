/** McpClient against the misbehaving fixture: every fault gives a clear, typed outcome. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { assertBridgeError } from "../helpers/errors.ts";
import { alive, connectFixture, fixture, reap } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

const text = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

test("a crash mid-call rejects the call with PROCESS_EXITED, the exit code and stderr", async () => {
  const { client, transport } = await connectFixture("faulty.ts", ["--crash-after", "2"]);
  try {
    assert.equal(text(await client.callTool("echo", { text: "one" })), "one");
    const crash: unknown = await client.callTool("echo", { text: "two" }).then(() => "the call succeeded", (e: unknown) => e);
    assertBridgeError(crash, "PROCESS_EXITED", /exited with code 1/);
    assert.equal((crash as BridgeError).details.code, 1);
    await assert.rejects(client.callTool("echo", { text: "three" }), { name: "BridgeError", code: "PROCESS_EXITED" });
  } finally {
    await client.close();
    assert.equal(alive(transport.pid), false);
  }
});

test("a server that exits at start fails connect with its exit code and stderr lines", async () => {
  const transport = new StdioClientTransport(fixture("faulty.ts", ["--exit-at-start"]));
  const client = new McpClient();
  await assert.rejects(client.connect(transport), {
    name: "BridgeError",
    code: "PROCESS_EXITED",
    message: /exited with code 3; last stderr:\n./, // not "it wrote nothing to stderr"
  });
  assert.equal(alive(transport.pid), false);
});

test("a server that never replies times out the handshake and is stopped", async () => {
  const transport = new StdioClientTransport(fixture("faulty.ts", ["--never-reply"]));
  const client = new McpClient({ connectTimeoutMs: 300 });
  await assert.rejects(client.connect(transport), { name: "BridgeError", code: "TIMEOUT" });
  assert.equal(alive(transport.pid), false, "a timed-out server is not left running");
  reap(transport.pid);
});

test("malformed lines and junk on stdout are skipped and counted; the session keeps working", async () => {
  const { client, transport } = await connectFixture("faulty.ts", ["--malformed", "--junk"]);
  try {
    for (let i = 0; i < 5; i++) assert.equal(text(await client.callTool("echo", { text: `m${i}` })), `m${i}`);
    assert.ok(transport.stats.junkLines >= 5, `junk lines counted: ${transport.stats.junkLines}`);
  } finally {
    await client.close();
  }
});

test("added latency is waited for, within the timeout", async () => {
  // The latency is far above the short timeout: were the process stalled past both (a loaded
  // machine), the response would be read before the timer ran and the call would succeed.
  const { client } = await connectFixture("faulty.ts", ["--latency", "500"]);
  try {
    assert.equal(text(await client.callTool("echo", { text: "late" })), "late");
    await assert.rejects(client.callTool("echo", { text: "too late" }, { timeoutMs: 5 }), { name: "BridgeError", code: "TIMEOUT" });
  } finally {
    await client.close();
  }
});

test("a stderr flood neither blocks the protocol nor grows memory past the ring buffer", async () => {
  let stderrLines = 0;
  const { client, transport } = await connectFixture("faulty.ts", ["--stderr-flood", "8"], {}, { onStderr: () => stderrLines++ });
  try {
    assert.equal(text(await client.callTool("echo", { text: "ok" })), "ok");
    assert.ok(transport.stderrTail().length <= 64 * 1024);
    assert.ok(stderrLines > 0);
  } finally {
    await client.close();
  }
});

test("a 20 MiB result arrives intact", async () => {
  const { client } = await connectFixture("faulty.ts", ["--big-result", "20"]);
  try {
    const r = await client.callTool("big", {});
    assert.equal(text(r).length, 20 * 1024 * 1024);
  } finally {
    await client.close();
  }
});

test("notifications before the initialize response are tolerated", async () => {
  const transport = new StdioClientTransport(fixture("faulty.ts", ["--notify-before-init"]));
  const client = new McpClient();
  let listChanged = 0;
  client.on("toolsListChanged", () => listChanged++);
  await client.connect(transport);
  try {
    assert.equal(listChanged, 1);
  } finally {
    await client.close();
  }
});

test("1000 tools are listed across pages", async () => {
  const { client } = await connectFixture("faulty.ts", ["--tools", "1000"]);
  try {
    const tools = await client.listTools();
    assert.equal(tools.length, 1002);
    assert.equal(new Set(tools.map((t) => t.name)).size, 1002);
  } finally {
    await client.close();
  }
});

test("a server ignoring stdin EOF and SIGTERM is killed, with its grandchild", async () => {
  let grandchild: number | undefined;
  const { client, transport } = await connectFixture("faulty.ts", ["--ignore-stdin-eof", "--spawn-grandchild"], {}, {
    shutdownGraceMs: 200,
    onStderr: (line) => {
      const m = /grandchild-pid=(\d+)/.exec(line);
      if (m) grandchild = Number(m[1]);
    },
  });
  await client.ping();
  await until(() => grandchild !== undefined, "the fixture to report its grandchild's pid");
  assert.ok(alive(grandchild));
  await client.close();
  assert.equal(alive(transport.pid), false);
  await until(() => !alive(grandchild), "the grandchild to die with the process group");
  reap(grandchild);
});
