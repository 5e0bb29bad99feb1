/**
 * UpstreamPool and GatewaySessions in one process: real echo fixture servers as upstreams
 * (stdio children), downstream clients over in-memory pairs. The caps are reserved before
 * anything starts, a session's upstreams stop with it, and the status holds no secret.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { GatewaySessions } from "../../src/gateway/serve-sessions.ts";
import { readServeSettings } from "../../src/gateway/serve-config.ts";
import { UpstreamPool } from "../../src/gateway/upstream-pool.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { waitGone } from "../e2e/helpers.ts";
import { fixtureConfig } from "../e2e/manager-helpers.ts";

function pool(maxSessions: number, maxUpstreamConnections = 100): UpstreamPool {
  return new UpstreamPool({
    upstreams: [fixtureConfig("own", "echo.ts"), fixtureConfig("common", "echo.ts")],
    isolation: (name) => (name === "common" ? "shared" : "per-client"),
    maxSessions,
    maxUpstreamConnections,
  });
}

test("two sessions opened at once against a cap of one: one is refused before it starts anything", async () => {
  const p = pool(1);
  try {
    await p.start();
    const outcomes = await Promise.allSettled([p.openSession(), p.openSession()]);
    const opened = outcomes.filter((o) => o.status === "fulfilled");
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    assert.equal(opened.length, 1);
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.reason.code, "LIMIT_EXCEEDED");
    assert.deepEqual(p.counters, { sessionsOpened: 1, sessionsRefused: 1 });
    assert.equal(p.upstreamConnections, 2);
    const session = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<UpstreamPool["openSession"]>>>).value;
    const pid = session.manager.status()[0]!.pid!;
    await session.close();
    assert.equal(await waitGone(pid), true);
    assert.equal(p.sessionCount, 0);
    await (await p.openSession()).close();
  } finally {
    await p.close();
  }
  await assert.rejects(p.openSession(), { code: "CLOSED" });
});

test("a session ending on its transport closes its upstreams; the status shows its own and the shared ones, and no secret", async () => {
  const p = pool(4);
  const logs: string[] = [];
  const sessions = new GatewaySessions(p, { info: { name: "gw", version: "1" }, log: (l) => logs.push(l) });
  p.redactor.addSecret("hunter2-gateway-secret");
  const client = new McpClient({ era: "legacy" });
  try {
    await p.start();
    const [down, up] = InMemoryTransport.createLinkedPair();
    await sessions.connect(down);
    await client.connect(up);
    await client.callTool("mcp__own__echo", { text: "hunter2-gateway-secret" });
    const read = await client.readResource("mcp-bridge://status");
    const text = (read.contents[0] as { text: string }).text;
    const doc = JSON.parse(text) as { session: number; upstreams: { name: string; isolation: string; pid: number }[]; calls: { total: number } };
    assert.deepEqual(doc.upstreams.map((u) => [u.name, u.isolation]), [["own", "per-client"], ["common", "shared"]]);
    assert.equal(doc.session, 1);
    assert.equal(doc.calls.total, 1);
    assert.ok(!text.includes("hunter2"), text);
    const own = doc.upstreams[0]!.pid;
    await client.close();
    assert.equal(await waitGone(own), true, "the session's upstream outlived it");
    for (let i = 0; i < 200 && p.sessionCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(p.sessionCount, 0);
    assert.ok(logs.some((l) => /session 1 ended/.test(l)), logs.join("\n"));
  } finally {
    await client.close();
    await sessions.close();
    await p.close();
  }
});

test("GatewaySessions.close ends sessions still open, and their upstreams", async () => {
  const p = pool(4);
  const sessions = new GatewaySessions(p, { info: { name: "gw", version: "1" }, log: () => {} });
  const client = new McpClient({ era: "legacy" });
  try {
    await p.start();
    const [down, up] = InMemoryTransport.createLinkedPair();
    await sessions.connect(down);
    await client.connect(up);
    const doc = JSON.parse(((await client.readResource("mcp-bridge://status")).contents[0] as { text: string }).text) as { upstreams: { pid: number }[] };
    await sessions.close();
    assert.equal(await waitGone(doc.upstreams[0]!.pid), true);
  } finally {
    await client.close();
    await p.close();
  }
});

test("readServeSettings: a serve section of the wrong shape is reported, not thrown", () => {
  const cases: [unknown, RegExp][] = [
    [{ serve: "yes" }, /\/serve: must be an object \(got string\)/],
    [{ serve: { isolation: ["shared"] } }, /\/serve\/isolation: must be an object mapping upstream names/],
    [{ serve: { allowedHosts: "example.com" } }, /\/serve\/allowedHosts: /],
    [{ serve: { sessionIdleMs: -1 } }, /\/serve\/sessionIdleMs: must be a positive number/],
  ];
  for (const [file, expected] of cases) {
    const { problems } = readServeSettings(file, ["a"], "f.json");
    assert.ok(problems.some((p) => p.severity === "error" && expected.test(`${p.path}: ${p.message}`)), JSON.stringify(problems));
  }
  assert.deepEqual(readServeSettings({ mcpServers: {} }, [], "f.json"), { settings: { isolation: {}, bearerTokens: [] }, problems: [] });
});
