/** The CLI reaching remote servers with --url: Streamable HTTP, legacy SSE, auto, and auth errors. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "./helpers.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { SseServer } from "../../src/transport/sse-server.ts";
import { createEchoServer } from "../../fixtures/servers/echo.ts";

const echo = createEchoServer();
const streamable = new StreamableHttpServer({ onSession: (t) => echo.connect(t) });
const guarded = new StreamableHttpServer({ onSession: (t) => echo.connect(t), bearerToken: "s3cret-token-value" });
const legacy = new SseServer({ onSession: (t) => echo.connect(t) });
let httpUrl = "";
let guardedUrl = "";
let sseUrl = "";

before(async () => {
  httpUrl = (await streamable.listen(0)).url.href;
  guardedUrl = (await guarded.listen(0)).url.href;
  sseUrl = (await legacy.listen(0)).url.href;
});

after(async () => {
  await Promise.all([streamable.close(), guarded.close(), legacy.close()]);
  await echo.close();
});

test("inspect --url over Streamable HTTP (explicit and auto)", async () => {
  for (const transport of ["http", "auto"]) {
    const r = await run(["inspect", "--json", "--url", httpUrl, "--transport", transport]);
    assert.equal(r.code, 0, r.err);
    const info = JSON.parse(r.out) as { serverInfo: { name: string }; tools: Array<{ name: string }>; target: string };
    assert.equal(info.serverInfo.name, "echo");
    assert.ok(info.tools.some((t) => t.name === "add"));
    if (transport === "auto") assert.match(info.target, /auto: streamable-http/);
  }
});

test("call --url over legacy SSE, explicitly and through auto's fallback", async () => {
  for (const transport of ["sse", "auto"]) {
    const r = await run(["call", "add", '{"a":20,"b":22}', "--url", sseUrl, "--transport", transport]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^42$/m);
  }
});

test("headers are sent: a bearer token opens a guarded server", async () => {
  const r = await run(["call", "echo", '{"text":"in"}', "--url", guardedUrl, "--transport", "http", "--header", "Authorization: Bearer s3cret-token-value"]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^in$/m);
});

test("a 401 prints the status and the challenge, exits 3 (cannot connect), and never echoes the token", async () => {
  const r = await run(["inspect", "--url", guardedUrl, "--header", "Authorization: Bearer wrong-token-xyz"]);
  assert.equal(r.code, 3);
  assert.match(r.err, /HTTP 401/);
  assert.match(r.err, /WWW-Authenticate: scheme Bearer/);
  assert.match(r.err, /AUTH_FAILED/);
  assert.doesNotMatch(r.err, /wrong-token-xyz/);
});

test("--url usage errors", async () => {
  assert.equal((await run(["inspect", "--url", httpUrl, "--transport", "ws"])).code, 2);
  assert.equal((await run(["inspect", "--url", httpUrl, "--", "node"])).code, 2);
  assert.equal((await run(["inspect", "--header", "A: b", "--", "node"])).code, 2);
  const unreachable = await run(["inspect", "--url", "http://127.0.0.1:9/mcp", "--transport", "http"]);
  assert.equal(unreachable.code, 3);
  assert.match(unreachable.err, /ECONNREFUSED|connect/);
});

test("--config picks a remote entry: its url, type and headers (a secret:// bearer token) are used", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-cli-remote-"));
  try {
    process.env.MCP_BRIDGE_CLI_REMOTE_TOKEN = "s3cret-token-value";
    const config = join(dir, "mcp.json");
    writeFileSync(config, JSON.stringify({
      mcpServers: {
        guarded: { type: "http", url: guardedUrl, headers: { Authorization: "Bearer secret://env/MCP_BRIDGE_CLI_REMOTE_TOKEN" } },
      },
    }));
    const r = await run(["call", "echo", '{"text":"via config"}', "--config", config, "--server", "guarded"]);
    assert.deepEqual(r, { code: 0, out: "via config", err: "" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
