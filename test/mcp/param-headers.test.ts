/** Mirrored header values (SEP-2243): the Base64 sentinel, and `Mcp-Param-*` checked against the arguments. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeHeaderValue, paramHeaderMismatch, xMcpHeaderProblem } from "../../src/mcp/param-headers.ts";
import { McpServer } from "../../src/mcp/server.ts";

const b64 = (s: string) => `=?base64?${Buffer.from(s, "utf8").toString("base64")}?=`;

test("decodeHeaderValue: the sentinel is decoded strictly; anything else is literal; bad characters are refused", () => {
  assert.equal(decodeHeaderValue(b64("Hello, 世界")), "Hello, 世界");
  assert.equal(decodeHeaderValue("us-west1"), "us-west1");
  assert.equal(decodeHeaderValue("=?base64?SGVsbG8="), "=?base64?SGVsbG8=", "no suffix: literal");
  assert.equal(decodeHeaderValue("SGVsbG8=?="), "SGVsbG8=?=", "no prefix: literal");
  assert.equal(decodeHeaderValue("=?base64?SGVsbG8?="), undefined, "missing padding");
  assert.equal(decodeHeaderValue("=?base64?SGVs!!!bG8=?="), undefined, "outside the alphabet");
  assert.equal(decodeHeaderValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString("base64")}?=`), undefined, "not UTF-8");
  assert.equal(decodeHeaderValue("a\u0001b"), undefined);
});

const schema = {
  type: "object",
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    priority: { type: "integer", "x-mcp-header": "Priority" },
    nested: { type: "object", properties: { flag: { type: "boolean", "x-mcp-header": "Flag" } } },
    listed: { type: "array", items: { type: "string", "x-mcp-header": "Ignored" } },
  },
};

test("paramHeaderMismatch: each present value needs its header, equal after decoding", () => {
  const args = { region: "eu", priority: 42, nested: { flag: true }, listed: ["x"] };
  const all = { "mcp-param-region": "eu", "mcp-param-priority": "42.0", "mcp-param-flag": "true" };
  assert.equal(paramHeaderMismatch(schema, args, all), undefined);
  assert.equal(paramHeaderMismatch(schema, { ...args, region: "é" }, { ...all, "mcp-param-region": b64("é") }), undefined);
  assert.match(paramHeaderMismatch(schema, args, { ...all, "mcp-param-region": "us" })!, /Region.*does not match/);
  assert.match(paramHeaderMismatch(schema, args, { "mcp-param-priority": "42", "mcp-param-flag": "true" })!, /Mcp-Param-Region header is required/);
  assert.match(paramHeaderMismatch(schema, args, { ...all, "mcp-param-flag": "TRUE" })!, /Flag/);
  assert.match(paramHeaderMismatch(schema, args, { ...all, "mcp-param-priority": "" })!, /Priority/);
  assert.match(paramHeaderMismatch(schema, { region: "eu" }, { "mcp-param-region": "eu", "mcp-param-priority": "1" })!, /sent but arguments.priority is absent/);
  assert.equal(paramHeaderMismatch(schema, { region: "eu", priority: null }, { "mcp-param-region": "eu" }), undefined, "null is absent");
  assert.equal(paramHeaderMismatch({ type: "object" }, { anything: 1 }, {}), undefined);
});

test("xMcpHeaderProblem: the definition rules; McpServer refuses such a tool with INVALID_STATE", () => {
  const tool = (properties: object) => ({ type: "object", properties });
  assert.equal(xMcpHeaderProblem(schema), "x-mcp-header at /properties/listed/items is not on a property reached through \"properties\" alone");
  assert.equal(xMcpHeaderProblem(tool({ a: { type: "string", "x-mcp-header": "A" }, b: { type: "object", properties: { c: { type: "boolean", "x-mcp-header": "C" } } } })), undefined);
  assert.match(xMcpHeaderProblem(tool({ a: { type: "number", "x-mcp-header": "A" } }))!, /type "number"/);
  assert.match(xMcpHeaderProblem(tool({ a: { type: "string", "x-mcp-header": "" } }))!, /non-empty header token/);
  assert.match(xMcpHeaderProblem(tool({ a: { type: "string", "x-mcp-header": "Bad Name" } }))!, /header token/);
  assert.match(xMcpHeaderProblem(tool({ a: { type: "string", "x-mcp-header": "X" }, b: { type: "string", "x-mcp-header": "x" } }))!, /used twice/);
  assert.match(xMcpHeaderProblem({ type: "object", "x-mcp-header": "Root" })!, /not on a property/);
  assert.match(xMcpHeaderProblem({ type: "object", anyOf: [tool({ a: { type: "string", "x-mcp-header": "A" } })] })!, /anyOf/);
  const server = new McpServer({ name: "s", version: "1" });
  assert.throws(() => server.tool({ name: "bad", inputSchema: tool({ n: { type: "number", "x-mcp-header": "N" } }) }, () => ({ content: [] })), {
    name: "BridgeError",
    code: "INVALID_STATE",
    message: /tool "bad": x-mcp-header at \/properties\/n/,
  });
});
