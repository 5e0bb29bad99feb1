/**
 * The conformance client fixture (fixtures/clients/conformance.ts) as the suite runs it: a
 * real child process, told its scenario by environment and its server by its last argument,
 * against a real McpServer over Streamable HTTP on 127.0.0.1. Its parsing of what the suite
 * passes is tested directly.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { ROOT } from "../../scripts/conformance-setup.ts";
import { parseContext, requestFromEnvironment, versionToOffer } from "../../fixtures/clients/conformance.ts";
import { AUTH_SCENARIOS, planFor, sampleArguments, toolCallsOf } from "../../fixtures/clients/conformance-scenarios.ts";

const FIXTURE = join(ROOT, "fixtures", "clients", "conformance.ts");

/** A schema with the 2020-12 keywords the preservation scenario looks for. */
const RICH_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object" as const,
  $defs: { address: { $anchor: "addr", type: "object", properties: { street: { type: "string" } } } },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  allOf: [{ anyOf: [{ required: ["name"] }, { required: ["address"] }] }],
  if: { required: ["name"] },
  then: { properties: { name: { minLength: 1 } } },
  else: { properties: { address: { type: "object" } } },
  additionalProperties: false,
};

const calls: { name: string; args: Record<string, unknown> }[] = [];
const mcp = new McpServer({ name: "conformance-client-test", version: "1.0.0" });
const record = (name: string) => (args: Record<string, unknown>) => {
  calls.push({ name, args });
  return { content: [{ type: "text" as const, text: "ok" }] };
};
const open = { type: "object" as const, properties: {} };
const numbers = { type: "object" as const, properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };
mcp.tool({ name: "add_numbers", inputSchema: numbers }, record("add_numbers"));
mcp.tool({ name: "json_schema_2020_12_tool", inputSchema: RICH_SCHEMA }, record("json_schema_2020_12_tool"));
const echo = { type: "object" as const, properties: { schema: { type: "object" } }, required: ["schema"] };
mcp.tool({ name: "json_schema_echo", inputSchema: echo }, record("json_schema_echo"));
mcp.tool({ name: "test_custom_headers", inputSchema: open }, record("test_custom_headers"));
const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t) });
let url = "";

before(async () => {
  url = String((await http.listen(0)).url);
});
after(async () => {
  await http.close();
  await mcp.close();
});

/** Runs the fixture as the suite does (its URL last; tsx only where Node cannot strip types) and waits for it to exit. */
function runFixture(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const { command, args } = nodeModuleCommand(FIXTURE, [url]);
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stderr }));
  });
}

function callsTo(name: string): Record<string, unknown>[] {
  return calls.filter((c) => c.name === name).map((c) => c.args);
}

test("tools_call: lists the tools and calls add_numbers with two numbers", async () => {
  const r = await runFixture({ MCP_CONFORMANCE_SCENARIO: "tools_call", MCP_CONFORMANCE_PROTOCOL_VERSION: "2025-11-25" });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(callsTo("add_numbers").at(-1), { a: 5, b: 3 });
});

test("json-schema-2020-12-preservation: the schema goes back exactly as the server gave it", async () => {
  const r = await runFixture({ MCP_CONFORMANCE_SCENARIO: "json-schema-2020-12-preservation" });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(callsTo("json_schema_echo").at(-1), { schema: RICH_SCHEMA });
});

test("http-custom-headers: makes exactly the calls the context gives, with their values", async () => {
  const args = { region: "us-west1", priority: 42, verbose: false, non_ascii_val: "Hello, 世界", tab_val: "\tindented" };
  const context = JSON.stringify({ name: "http-custom-headers", toolCalls: [{ name: "test_custom_headers", arguments: args }] });
  const r = await runFixture({ MCP_CONFORMANCE_SCENARIO: "http-custom-headers", MCP_CONFORMANCE_CONTEXT: context });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(callsTo("test_custom_headers").at(-1), args);
});

test("an unknown scenario and a context for another scenario exit 1 with the reason", async () => {
  const unknown = await runFixture({ MCP_CONFORMANCE_SCENARIO: "no-such-scenario" });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown conformance scenario "no-such-scenario"/);
  const wrong = await runFixture({ MCP_CONFORMANCE_SCENARIO: "tools_call", MCP_CONFORMANCE_CONTEXT: JSON.stringify({ name: "auth/dpop" }) });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /MCP_CONFORMANCE_CONTEXT is for scenario "auth\/dpop", not "tools_call"/);
});

function isCode(code: string): (err: unknown) => boolean {
  return (err) => err instanceof BridgeError && err.code === code;
}

test("the context: absent is undefined; it must be a JSON object naming the scenario", () => {
  assert.equal(parseContext(undefined, "s"), undefined);
  assert.deepEqual(parseContext(JSON.stringify({ name: "s", client_id: "c" }), "s"), { name: "s", client_id: "c" });
  assert.throws(() => parseContext("{", "s"), isCode("PARSE_ERROR"));
  assert.throws(() => parseContext("[]", "s"), isCode("INVALID_PARAMS"));
  assert.throws(() => parseContext(JSON.stringify({ client_id: "c" }), "s"), isCode("INVALID_PARAMS"));
});

test("the protocol version: offered when McpClient speaks it, not when it does not, an error when malformed", () => {
  assert.equal(versionToOffer("2025-06-18"), "2025-06-18");
  assert.equal(versionToOffer("2099-01-01"), undefined);
  assert.equal(versionToOffer(undefined), undefined);
  assert.throws(() => versionToOffer("latest"), isCode("INVALID_PARAMS"));
});

test("the URL must come last and the scenario must be set", () => {
  assert.throws(() => requestFromEnvironment({}, ["http://127.0.0.1:1/mcp"]), /MCP_CONFORMANCE_SCENARIO is not set/);
  assert.throws(() => requestFromEnvironment({ MCP_CONFORMANCE_SCENARIO: "tools_call" }, ["http://127.0.0.1:1/mcp", "--verbose"]), isCode("INVALID_PARAMS"));
});

test("plans: no auth scenario is 'not yet' (conformance-auth.ts runs them); names from Object.prototype are not scenarios", () => {
  for (const s of AUTH_SCENARIOS) assert.ok(!("notYet" in planFor(s)), s);
  assert.ok(!("notYet" in planFor("tools_call")));
  assert.throws(() => planFor("constructor"), isCode("INVALID_PARAMS"));
});

test("http-custom-headers' context must carry its tool calls", () => {
  assert.deepEqual(toolCallsOf({ name: "x", toolCalls: [{ name: "t", arguments: { a: 1 } }] }), [{ name: "t", arguments: { a: 1 } }]);
  assert.throws(() => toolCallsOf(undefined), isCode("INVALID_PARAMS"));
  assert.throws(() => toolCallsOf({ toolCalls: [{ name: "t", arguments: [] }] }), isCode("INVALID_PARAMS"));
});

test("sample arguments fill each required property by its type", () => {
  const tool = {
    name: "t",
    inputSchema: {
      type: "object" as const,
      properties: { s: { type: "string" }, n: { type: "number" }, o: { type: "object" }, a: { type: "array" }, z: { type: "null" }, u: {} },
      required: ["s", "n", "o", "a", "z", "u"],
    },
  };
  assert.deepEqual(sampleArguments(tool), { s: "x", n: 1, o: {}, a: [], z: null, u: "x" });
});
