/**
 * `mcp-bridge serve`: the CLI as a real child serving the upstreams of a config file over
 * stdio, spoken to by our own client; and `serve --check`, in process.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { descendants, reap, ROOT, waitGone } from "../e2e/helpers.ts";
import { run } from "./helpers.ts";
import { spawnServe } from "./serve-helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-serve-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a config file into the test's directory and returns its path. */
function configFile(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** A trusted config entry that runs a fixture server with this Node. */
function fixtureEntry(file: string): Record<string, unknown> {
  const { command, args } = nodeModuleCommand(join(ROOT, "fixtures", "servers", file));
  return { command, args, cwd: ROOT, trust: "trusted" };
}

/**
 * fixtures/gateway/demo.json as the tests run it: the same servers, names and environment,
 * each started the way this Node runs a fixture (tsx on Node 20, type stripping on 22+, where
 * a copy without node_modules has no tsx to `--import`). `--check` and the README use the
 * file itself.
 */
function demoConfig(): string {
  const demo = JSON.parse(readFileSync(join(ROOT, "fixtures", "gateway", "demo.json"), "utf8")) as { mcpServers: Record<string, { args: string[]; env?: object }> };
  const servers = Object.fromEntries(
    Object.entries(demo.mcpServers).map(([name, entry]) => [name, { ...fixtureEntry(basename(entry.args.at(-1)!)), ...(entry.env ? { env: entry.env } : {}) }]),
  );
  return configFile("demo-as-run.json", { mcpServers: servers });
}

/** `serve --stdio` as a child with our client connected; `stderr` collects its log lines. */
async function startServe(config: string): Promise<{ client: McpClient; transport: StdioClientTransport; stderr: string[] }> {
  const stderr: string[] = [];
  const cli = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["serve", "--config", config, "--stdio"]);
  const transport = new StdioClientTransport({ ...cli, cwd: ROOT, shutdownGraceMs: 5_000, onStderr: (line) => stderr.push(line) });
  // serve starts this session's upstreams before it reads stdin; on a loaded machine that can
  // outlast the client's 5 s server/discover probe, whose late answer would then fix the
  // connection's era under the client's fallback initialize (docs/decisions.md 111).
  const client = new McpClient({ discoverTimeoutMs: 60_000 });
  try {
    await client.connect(transport);
  } catch (err) {
    reap(transport.pid);
    throw new Error(`serve did not start: ${stderr.join("\n")}`, { cause: err });
  }
  return { client, transport, stderr };
}

/** Closes the client (stdin ends) and checks that serve and everything it started are gone. */
async function closeAndCheckGone(client: McpClient, serve: number, below: number[]): Promise<void> {
  await client.close();
  try {
    for (const pid of [serve, ...below]) assert.equal(await waitGone(pid), true, `process ${pid} outlived serve`);
  } finally {
    for (const pid of [serve, ...below]) reap(pid);
  }
}

function text(result: { content: { type: string }[] }): string {
  return result.content.map((c) => (c.type === "text" ? (c as unknown as { text: string }).text : `[${c.type}]`)).join("");
}

test("serve --stdio serves the demo config's two upstreams under namespaced names, and stops both at stdin's end", { timeout: 120_000 }, async () => {
  const { client, transport, stderr } = await startServe(demoConfig());
  const serve = transport.pid!;
  const below = descendants(serve);
  try {
    const names = (await client.listTools()).map((t) => t.name);
    assert.ok(names.includes("mcp__echo__echo"), names.join(", "));
    assert.ok(names.includes("mcp__mirror__mirror"), names.join(", "));
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "through the gateway" })), "through the gateway");
    const mirrored = await client.callTool("mcp__mirror__mirror", {});
    assert.match(text(mirrored), /hello from the mirror/);
    // The upstream's resource link, under the gateway's URI, which reads back.
    const link = mirrored.content.find((c) => c.type === "resource_link") as { uri: string } | undefined;
    assert.equal(link?.uri, "mcp-bridge://mirror/mirror://text");
    assert.match(JSON.stringify((await client.readResource(link!.uri)).contents), /hello from the mirror/);
    assert.ok(below.length >= 2, `expected both upstreams below serve, found ${below.length}`);
  } finally {
    await closeAndCheckGone(client, serve, below);
  }
  assert.ok(stderr.some((l) => /upstream "echo" ready/.test(l)), stderr.join("\n"));
});

test("serve reports an upstream that cannot start and serves the other", { timeout: 120_000 }, async () => {
  const config = configFile("one-broken.json", {
    mcpServers: {
      broken: { command: "mcp-bridge-no-such-server", trust: "trusted", restartOnCrash: false },
      echo: fixtureEntry("echo.ts"),
    },
  });
  const { client, transport, stderr } = await startServe(config);
  const serve = transport.pid!;
  const below = descendants(serve);
  try {
    const names = (await client.listTools()).map((t) => t.name);
    assert.ok(names.includes("mcp__echo__add"), names.join(", "));
    assert.ok(!names.some((n) => n.startsWith("mcp__broken__")), names.join(", "));
    assert.equal(text(await client.callTool("mcp__echo__add", { a: 2, b: 3 })), "5");
    assert.ok(stderr.some((l) => /upstream "broken" failed: .*mcp-bridge-no-such-server/.test(l)), stderr.join("\n"));
  } finally {
    await closeAndCheckGone(client, serve, below);
  }
});

test("serve ends on SIGTERM with exit 0 and every upstream stopped", { timeout: 120_000 }, async () => {
  const serve = await spawnServe(["--config", demoConfig(), "--stdio"], /serving 2 upstream\(s\) on stdio/);
  const below = serve.below();
  assert.ok(below.length >= 2, `expected both upstreams below serve, found ${below.length}`);
  assert.deepEqual(await serve.stop(below), [0, null]);
});

test("serve --http 127.0.0.1:0 serves the same upstreams over Streamable HTTP on a loopback port", { timeout: 120_000 }, async () => {
  const serve = await spawnServe(["--config", demoConfig(), "--http", "127.0.0.1:0"], /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  const client = new McpClient();
  let below: number[] = [];
  try {
    const url = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(serve.stderr())![1]!;
    await client.connect(new StreamableHttpClientTransport({ url }));
    const names = (await client.listTools()).map((t) => t.name);
    assert.ok(names.includes("mcp__echo__echo") && names.includes("mcp__mirror__mirror"), names.join(", "));
    assert.equal(text(await client.callTool("mcp__echo__echo", { text: "over http" })), "over http");
    below = serve.below();
    assert.ok(below.length >= 2, `expected this session's two upstreams below serve, found ${below.length}`);
  } finally {
    await client.close();
    assert.deepEqual(await serve.stop(below), [0, null]);
  }
});

test("serve --check prints every problem of a broken config at once and exits 2", async () => {
  const config = configFile("broken.json", {
    mcpServers: {
      nocommand: {},
      badtype: { type: "carrier-pigeon", url: "https://example.com/mcp" },
      untrusted: { command: "node", args: ["x.js"] },
    },
  });
  const r = await run(["serve", "--check", "--config", config]);
  assert.equal(r.code, 2, r.out);
  const errors = r.out.split("\n").filter((l) => l.startsWith("[error]"));
  assert.ok(errors.some((l) => l.includes("/mcpServers/nocommand")), r.out);
  assert.ok(errors.some((l) => l.includes("/mcpServers/badtype")), r.out);
  assert.match(r.out, /\[warning\] .*#\/mcpServers\/untrusted: server "untrusted" is untrusted/);
  assert.match(r.out, /error\(s\), 1 warning\(s\); nothing would be served$/);
});

test("serve --check accepts the demo config, and an unreadable file is a problem too", async () => {
  const ok = await run(["serve", "--check", "--config", join(ROOT, "fixtures", "gateway", "demo.json")]);
  assert.equal(ok.code, 0, ok.out);
  assert.match(ok.out, /ok, 2 upstream\(s\): echo, mirror$/);
  const missing = await run(["serve", "--check", "--config", join(dir, "missing.json")]);
  assert.equal(missing.code, 2);
  assert.match(missing.out, /cannot read the file: ENOENT/);
});

test("serve --check reads VS Code's servers and the native list as well", async () => {
  const entry = fixtureEntry("echo.ts");
  const vscode = configFile("vscode.json", { servers: { echo: { type: "stdio", ...entry } } });
  const native = configFile("native.json", { servers: [{ name: "echo", transport: "stdio", ...entry }] });
  for (const config of [vscode, native]) {
    const r = await run(["serve", "--check", "--config", config]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /ok, 1 upstream\(s\): echo$/);
  }
});

test("serve refuses a bad command line before starting anything", async () => {
  const demo = join(ROOT, "fixtures", "gateway", "demo.json");
  for (const [argv, message] of [
    [["serve", "--stdio"], /serve needs --config/],
    [["serve", "--config", demo], /one of --stdio or --http/],
    [["serve", "--config", demo, "--stdio", "--http", "127.0.0.1:0"], /one of --stdio or --http/],
    [["serve", "--config", demo, "--http", "0.0.0.0:8080"], /not a loopback address/],
    [["serve", "--config", demo, "--http", "0.0.0.0:0", "--allow-remote"], /--allow-remote needs bearer tokens/],
    [["serve", "--config", demo, "--stdio", "--sse"], /--sse is for --http only/],
    [["serve", "--config", demo, "--stdio", "--max-sessions", "0"], /--max-sessions must be a positive integer/],
    [["serve", "--check", "--config", demo, "--audit", "-"], /--check starts nothing: drop --audit/],
    [["serve", "--config", demo, "--http", "127.0.0.1:http"], /not a TCP port/],
  ] as const) {
    const r = await run([...argv]);
    assert.equal(r.code, 2, `${argv.join(" ")}: ${r.err}`);
    assert.match(r.err, message);
  }
});

test("--help describes serve", async () => {
  const r = await run(["--help"]);
  assert.match(r.out, /serve --config <file> \(--stdio \| --http 127\.0\.0\.1:PORT \[--sse\] \[--allow-remote\]\)/);
  assert.match(r.out, /serve --check --config <file>/);
});
