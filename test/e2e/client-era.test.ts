/**
 * McpClient's era discovery over stdio, against real child processes: our dual-era echo
 * server, and the faulty fixture (written without mcp-bridge) as a handshake-era server that
 * refuses, ignores or garbles `server/discover` (docs/decisions.md 129).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpClient } from "../../src/mcp/client.ts";
import { LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { until } from "../helpers/wait.ts";
import { alive, connectFixture, fixture, reap } from "./helpers.ts";

/** Connects to the faulty fixture with `flags`, logging what it received; the client and the received methods. */
async function faulty(flags: string[], options: ConstructorParameters<typeof McpClient>[0] = {}) {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-era-"));
  const log = join(dir, "received.log");
  const transport = new StdioClientTransport(fixture("faulty.ts", [...flags, "--log-received", log]));
  const client = new McpClient(options);
  const stop = async (): Promise<void> => {
    const pid = transport.pid;
    await client.close();
    assert.equal(alive(pid), false);
    reap(pid);
    rmSync(dir, { recursive: true, force: true });
  };
  const received = (): string[] => readFileSync(log, "utf8").trim().split("\n");
  return { client, transport, stop, received };
}

test("auto against our dual-era server speaks the stateless era; legacy pins the handshake", async () => {
  for (const era of ["auto", "legacy"] as const) {
    // A generous probe: a loaded machine may start the fixture slower than the default 5 s.
    const { client, transport } = await connectFixture("echo.ts", [], { era, discoverTimeoutMs: 30_000 });
    try {
      assert.equal(client.era, era === "auto" ? "modern" : "legacy");
      assert.equal(client.protocolVersion, era === "auto" ? MODERN_PROTOCOL_VERSIONS[0] : LATEST_PROTOCOL_VERSION);
      assert.equal(client.serverInfo?.name, "echo");
      assert.equal(client.instructions, "A test server: every tool answers deterministically.");
      const result = await client.callTool("echo", { text: "same shape" });
      // One shape in both eras: no resultType, no serverInfo in _meta (docs/decisions.md 130).
      assert.deepEqual(result, { content: [{ type: "text", text: "same shape" }] });
      const read = await client.readResource("echo://greeting");
      assert.deepEqual(Object.keys(read), ["contents"]);
    } finally {
      const pid = transport.pid;
      await client.close();
      reap(pid);
    }
  }
});

test("a handshake-era server answering -32601 to server/discover gets initialize", async () => {
  const f = await faulty([]);
  try {
    await f.client.connect(f.transport);
    assert.equal(f.client.era, "legacy");
    assert.equal(f.client.protocolVersion, LATEST_PROTOCOL_VERSION);
    assert.notEqual((await f.client.callTool("echo", { text: "x" })).isError, true);
    await until(() => f.received().includes("tools/call echo"), "the call to reach the server");
    assert.deepEqual(f.received().slice(0, 3), ["server/discover", "initialize", "notifications/initialized"]);
  } finally {
    await f.stop();
  }
});

test("a server that never answers server/discover is taken for the handshake era after discoverTimeoutMs", async () => {
  const f = await faulty(["--discover-hang"], { discoverTimeoutMs: 300 });
  try {
    const started = Date.now();
    await f.client.connect(f.transport);
    assert.equal(f.client.era, "legacy");
    assert.ok(Date.now() - started >= 300);
    // The abandoned probe is cancelled (stdio has no stream to close).
    await until(() => f.received().includes("notifications/initialized"), "the handshake to reach the server");
    assert.deepEqual(f.received().slice(0, 4), ["server/discover", "notifications/cancelled 1", "initialize", "notifications/initialized"]);
  } finally {
    await f.stop();
  }
});

test("junk in answer to server/discover is a typed error, and era modern refuses a handshake-era server", async () => {
  const junk = await faulty(["--discover-junk"]);
  try {
    await assert.rejects(junk.client.connect(junk.transport), { name: "BridgeError", code: "INVALID_RESULT" });
    assert.deepEqual(junk.received(), ["server/discover"]);
  } finally {
    await junk.stop();
  }
  const legacy = await faulty([], { era: "modern" });
  try {
    await assert.rejects(legacy.client.connect(legacy.transport), { name: "BridgeError", code: "UNSUPPORTED_VERSION" });
  } finally {
    await legacy.stop();
  }
});

test("discoverTimeoutMs never exceeds connectTimeoutMs", async () => {
  // The connect limit also bounds initialize: it leaves room for a slow machine.
  const f = await faulty(["--discover-hang"], { discoverTimeoutMs: 600_000, connectTimeoutMs: 3_000 });
  try {
    const started = Date.now();
    await f.client.connect(f.transport);
    assert.equal(f.client.era, "legacy");
    assert.ok(Date.now() - started < 30_000, "the probe gave up after the connect limit, not the discover option");
  } finally {
    await f.stop();
  }
});
