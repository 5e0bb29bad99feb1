/**
 * How the CLI fails: one exit code per kind of failure (usage 2, cannot connect 3, timeout 4,
 * protocol 5; a tool's own error is 1, see main.test.ts), the server's stderr on failure and
 * with --verbose, and --json failures as one JSON line on stderr.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertServerStopped, echoCommand, fixtureCommand, run } from "./helpers.ts";
import { resourceNotFoundCode } from "../helpers/era.ts";

/** A stdio "server" that writes two stderr lines and never answers. */
const stuck = [process.execPath, "-e", "console.error('loading model'); console.error('still loading'); setInterval(() => {}, 1000)"];

/** A server that answers initialize with a protocol version nobody speaks. */
const ancient = [
  process.execPath,
  "-e",
  `let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  for (let nl = buf.indexOf("\\n"); nl !== -1; nl = buf.indexOf("\\n")) {
    const msg = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (msg.method === "initialize") {
      const result = { protocolVersion: "1999-01-01", capabilities: {}, serverInfo: { name: "ancient", version: "1" } };
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\\n");
    }
  }
});
process.stdin.on("end", () => process.exit(0));`,
];

test("timeout exits 4; the message names the server and the request and shows the server's last stderr lines", async () => {
  const r = await run(["inspect", "--timeout", "300", "--", ...stuck]);
  assert.equal(r.code, 4);
  assert.equal(r.out, "");
  const [first, ...rest] = r.err.split("\n");
  assert.match(first!, /^mcp-bridge: server "node" \(pid \d+\): request "initialize" timed out after 300 ms \[TIMEOUT\]$/);
  assert.deepEqual(rest, [
    "last stderr of the server:",
    "  loading model",
    "  still loading",
    "hint: raise --timeout; --verbose shows what a stdio server writes to stderr meanwhile",
  ]);
  await assertServerStopped(r.err);
});

test("a tool call that times out after the handshake exits 4 too (the config's toolTimeout)", async () => {
  // Through a config entry, so that the start-up keeps its own 30 s (a loaded machine may need
  // more than the call's 300 ms to start the fixture under tsx).
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-cli-failures-"));
  try {
    const [command, ...args] = fixtureCommand("faulty.ts", ["--hang-calls"]);
    const config = join(dir, "mcp.json");
    writeFileSync(config, JSON.stringify({ mcpServers: { hangs: { command, args, timeout: 30_000, toolTimeout: 300 } } }));
    const r = await run(["call", "echo", '{"text":"x"}', "--config", config, "--server", "hangs"]);
    assert.equal(r.code, 4);
    assert.match(r.err, /^mcp-bridge: server "hangs" \(pid \d+\): request "tools\/call" timed out after 300 ms \[TIMEOUT\]/);
    await assertServerStopped(r.err);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--json: a failure is one JSON line on stderr, with the server's stderr; stdout stays empty", async () => {
  const r = await run(["inspect", "--json", "--timeout", "300", "--", ...stuck]);
  assert.equal(r.code, 4);
  assert.equal(r.out, "");
  const { error } = JSON.parse(r.err) as { error: Record<string, unknown> };
  assert.match(String(error.message), /^server "node" \(pid \d+\): request "initialize" timed out after 300 ms$/);
  assert.deepEqual({ ...error, message: "" }, {
    exitCode: 4,
    kind: "timeout",
    code: "TIMEOUT",
    message: "",
    serverStderr: "loading model\nstill loading",
  });
});

test("--json: usage errors are JSON too, without the usage text", async () => {
  const r = await run(["call", "--json", "add", "{nope", "--", ...echoCommand]);
  assert.equal(r.code, 2);
  const { error } = JSON.parse(r.err) as { error: { kind: string; code: string; message: string } };
  assert.deepEqual([error.kind, error.code], ["usage", "USAGE"]);
  assert.match(error.message, /tool arguments are not valid JSON/);
  const unknown = await run(["--json", "--frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.deepEqual(JSON.parse(unknown.err), { error: { exitCode: 2, kind: "usage", code: "USAGE", message: "unknown option --frobnicate" } });
});

test("--verbose streams the server's stderr as it comes, labelled with the server", async () => {
  const faulty = fixtureCommand("faulty.ts", ["--stderr-echo"]);
  const quiet = await run(["call", "echo", '{"text":"hi"}', "--", ...faulty]);
  assert.deepEqual(quiet, { code: 0, out: "hi", err: "" });
  const verbose = await run(["call", "--verbose", "echo", '{"text":"hi"}', "--", ...faulty]);
  assert.deepEqual(verbose, { code: 0, out: "hi", err: "[node] echo: hi" });
});

test("--verbose: a timeout then does not repeat the stderr lines already shown", async () => {
  const r = await run(["inspect", "--verbose", "--timeout", "300", "--", ...stuck]);
  assert.equal(r.code, 4);
  const lines = r.err.split("\n");
  assert.deepEqual(lines.filter((l) => !l.startsWith("mcp-bridge: ")), ["[node] loading model", "[node] still loading"]);
  await assertServerStopped(r.err);
});

test("a JSON-RPC error from the server exits 5 and shows its code; --json adds rpcCode and data", async () => {
  // The CLI speaks the server's newest era; the dual-era echo fixture's is the stateless one,
  // where "resource not found" is -32602 with data.uri (it was -32002).
  const r = await run(["read", "echo://missing", "--", ...echoCommand]);
  assert.equal(r.code, 5);
  assert.match(r.err, /^mcp-bridge: server "node" \(pid \d+\): Resource not found: echo:\/\/missing \[JSON-RPC -32602\]$/);
  const json = await run(["read", "--json", "echo://missing", "--", ...echoCommand]);
  assert.equal(json.code, 5);
  const { error } = JSON.parse(json.err) as { error: Record<string, unknown> };
  assert.deepEqual([error.kind, error.code, error.rpcCode, error.data], ["protocol", "RPC_ERROR", resourceNotFoundCode("modern"), { uri: "echo://missing" }]);
});

test("a server that breaks the protocol (a version nobody speaks) exits 5", async () => {
  const r = await run(["inspect", "--", ...ancient]);
  assert.equal(r.code, 5);
  assert.match(r.err, /1999-01-01/);
  assert.match(r.err, /\[UNSUPPORTED_VERSION\]$/);
  await assertServerStopped(r.err);
});
