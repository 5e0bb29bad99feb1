/** `--config FILE --server NAME`: a server picked from a config file of any supported format. */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { echoCommand, fixtureCommand, run } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-cli-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const [echoExe, ...echoArgs] = echoCommand;
const [faultyExe, ...faultyArgs] = fixtureCommand("faulty.ts", ["--print-env"]);
const TOKEN = "tok-4f1c9e2a7b";
process.env.MCP_BRIDGE_CLI_TEST_TOKEN = TOKEN;

function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const claude = file("claude.json", JSON.stringify({
  mcpServers: {
    echo: { command: echoExe, args: echoArgs },
    faulty: { command: faultyExe, args: faultyArgs, env: { API_TOKEN: "secret://env/MCP_BRIDGE_CLI_TEST_TOKEN" } },
    unset: { command: faultyExe, args: faultyArgs, env: { API_TOKEN: "secret://env/MCP_BRIDGE_CLI_TEST_UNSET" } },
  },
  globalShortcut: "unrelated settings are ignored",
}));

test("a Claude Desktop / Cursor mcpServers entry is started by name", async () => {
  const r = await run(["call", "add", '{"a":1,"b":2}', "--config", claude, "--server", "echo"]);
  assert.deepEqual(r, { code: 0, out: "3\nstructured: {\"sum\":3}", err: "" });
});

test("a VS Code servers entry (with comments) and a native entry work the same way", async () => {
  const vscode = file("vscode.json", `{
    // VS Code's mcp.json
    "servers": { "echo": { "type": "stdio", "command": ${JSON.stringify(echoExe)}, "args": ${JSON.stringify(echoArgs)} } },
  }`);
  const native = file("native.json", JSON.stringify({ servers: [{ name: "echo", transport: "stdio", command: echoExe, args: echoArgs }] }));
  for (const config of [vscode, native]) {
    const r = await run(["read", "echo://greeting", "--config", config, "--server", "echo"]);
    assert.deepEqual(r, { code: 0, out: "Hello from echo", err: "" }, config);
  }
});

test("a missing or unknown --server NAME is a usage error listing the names the file defines", async () => {
  const missing = await run(["inspect", "--config", claude]);
  assert.equal(missing.code, 2);
  assert.equal(missing.err, "mcp-bridge: --config needs --server NAME; available: echo, faulty, unset [CONFIG]");
  const wrong = await run(["inspect", "--config", claude, "--server", "ecko"]);
  assert.equal(wrong.code, 2);
  assert.equal(wrong.err, `mcp-bridge: no server "ecko" in ${claude}; available: echo, faulty, unset [CONFIG]`);
});

test("config file problems are usage errors naming the file: unreadable, not JSON, invalid entries", async () => {
  const absent = await run(["inspect", "--config", join(dir, "absent.json"), "--server", "x"]);
  assert.equal(absent.code, 2);
  assert.match(absent.err, /cannot read config file .*absent\.json: ENOENT/);
  const broken = await run(["inspect", "--config", file("broken.json", '{"mcpServers": {'), "--server", "x"]);
  assert.equal(broken.code, 2);
  assert.match(broken.err, /broken\.json#\/: invalid JSON/);
  const invalid = await run(["inspect", "--config", file("invalid.json", '{"mcpServers": {"bad": {"args": []}}}'), "--server", "bad"]);
  assert.equal(invalid.code, 2);
  assert.match(invalid.err, /no server "bad" in .*invalid\.json; it defines no usable server\n {2}\[error\] .*invalid\.json#\/mcpServers\/bad/);
});

test("--server and --config need each other and exclude another server on the line", async () => {
  const alone = await run(["inspect", "--server", "echo"]);
  assert.equal(alone.code, 2);
  assert.match(alone.err, /--server NAME needs --config FILE/);
  const both = await run(["inspect", "--config", claude, "--server", "echo", "--", ...echoCommand]);
  assert.equal(both.code, 2);
  assert.match(both.err, /give one of --config FILE --server NAME, --url <url>, or -- <command>/);
});

test("secret:// references in the entry are resolved for the server and redacted from everything printed", async () => {
  const r = await run(["call", "env", "{}", "--config", claude, "--server", "faulty"]);
  assert.equal(r.code, 0, r.err);
  const env = JSON.parse(r.out) as Record<string, string>;
  assert.equal(env.API_TOKEN, "[REDACTED]");
  assert.doesNotMatch(r.out + r.err, new RegExp(TOKEN));
});

test("a secret that cannot be resolved exits 3 and names the reference, not a value", async () => {
  const r = await run(["inspect", "--config", claude, "--server", "unset"]);
  assert.equal(r.code, 3);
  assert.match(r.err, /secret:\/\/env\/MCP_BRIDGE_CLI_TEST_UNSET/);
  assert.match(r.err, /\[SECRET_UNRESOLVED\]$/);
});
