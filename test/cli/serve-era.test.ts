/**
 * `mcp-bridge serve --era`: the era the gateway speaks to its upstreams. By default the 2025
 * handshake era (one session per upstream connection, no per-request `_meta`), `--era auto`
 * the upstream's newest (the dual-era echo fixture then speaks 2026-07-28), and any other
 * value is a usage error. Also here: without `--audit`, the status still counts calls by
 * outcome (serve counts them without building audit events nobody reads).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { run } from "./helpers.ts";
import { configDir, fixtureEntry, httpClient, httpServe, status, text } from "./serve-helpers.ts";

const dir = configDir();
after(() => dir.remove());

const config = dir.write("echo.json", { mcpServers: { echo: fixtureEntry("echo.ts") } });

/** The echo upstream's protocol version as the status reports it, after one call and one tool error. */
async function upstreamVersion(extra: string[]): Promise<{ version: unknown; calls: Awaited<ReturnType<typeof status>>["calls"] }> {
  const { serve, base } = await httpServe(config, extra);
  const client = await httpClient(base);
  try {
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "hi" })), "hi");
    assert.equal((await client.callTool("mcp__echo__fail", {})).isError, true);
    const doc = await status(client);
    const echo = doc.upstreams.find((u) => u.name === "echo") as { protocolVersion?: string } | undefined;
    return { version: echo?.protocolVersion, calls: doc.calls };
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(), [0, null]);
  }
}

test("serve speaks the 2025 handshake era to its upstreams by default; without --audit the status still counts calls by outcome", { timeout: 120_000 }, async () => {
  const { version, calls } = await upstreamVersion([]);
  assert.equal(version, "2025-11-25");
  assert.deepEqual(calls, { total: 2, ok: 1, toolErrors: 1, refused: 0, failed: 0 });
});

test("serve --era auto speaks the upstream's newest era (2026-07-28 to the dual-era fixture)", { timeout: 120_000 }, async () => {
  const { version } = await upstreamVersion(["--era", "auto"]);
  assert.equal(version, "2026-07-28");
});

test("serve --era takes auto, legacy or modern, and says so", async () => {
  const r = await run(["serve", "--config", config, "--stdio", "--era", "2025"]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /--era must be one of auto, legacy, modern; got "2025"/);
});
