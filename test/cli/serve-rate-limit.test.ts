/**
 * `mcp-bridge serve --rate-limit`: the per-upstream token bucket of the gateway's manager, set
 * from the command line (a real serve child in front of the echo fixture), and its usage errors.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { run } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-serve-rate-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const config = join(dir, "echo.json");
writeFileSync(config, JSON.stringify({ mcpServers: { echo: { ...nodeModuleCommand(join(ROOT, "fixtures", "servers", "echo.ts")), cwd: ROOT, trust: "trusted" } } }));

/** Echoes `calls` times through `serve --stdio <flags>`; the texts of the results, in order. */
async function echoThroughServe(flags: string[], calls: number): Promise<{ texts: string[]; errors: boolean[] }> {
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["serve", "--config", config, "--stdio", ...flags]);
  const transport = new StdioClientTransport({ ...cli, cwd: ROOT, shutdownGraceMs: 5_000 });
  const client = new McpClient();
  try {
    await client.connect(transport);
    const texts: string[] = [];
    const errors: boolean[] = [];
    for (let i = 0; i < calls; i++) {
      const result = await client.callTool("mcp__echo__echo", { text: `call ${i}` });
      texts.push(result.content.map((c) => (c.type === "text" ? c.text : "")).join(""));
      errors.push(result.isError === true);
    }
    return { texts, errors };
  } finally {
    const pid = transport.pid;
    await client.close();
    if (pid !== undefined) assert.equal(await waitGone(pid), true, "serve outlived its client");
    reap(pid);
  }
}

test("serve --rate-limit 2 refuses the third call of a minute with a tool error; off lets every call through", { timeout: 120_000 }, async () => {
  const limited = await echoThroughServe(["--rate-limit", "2"], 3);
  assert.deepEqual(limited.errors, [false, false, true]);
  assert.deepEqual(limited.texts.slice(0, 2), ["call 0", "call 1"]);
  assert.match(limited.texts[2]!, /rate limit/i);

  const unlimited = await echoThroughServe(["--rate-limit", "off"], 120);
  assert.equal(unlimited.errors.filter(Boolean).length, 0);
  assert.equal(unlimited.texts[119], "call 119");
});

test("serve --rate-limit takes a positive whole number or off, and says so", async () => {
  for (const value of ["0", "-3", "fast", "1.5"]) {
    const r = await run(["serve", "--config", config, "--stdio", "--rate-limit", value]);
    assert.equal(r.code, 2, `--rate-limit ${value}: ${r.err}`);
    assert.match(r.err, /--rate-limit: .* is neither a number of calls a minute \(1 or more\) nor "off"/);
  }
});
