import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CONTENT_BLOCK_TYPES,
  LOGGING_LEVELS,
  McpMethod,
  McpNotification,
  isCallToolResult,
  isContentBlock,
  isInitializeResult,
  isTool,
  type CallToolRequestParams,
  type CallToolResult,
  type ContentBlock,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
  type InitializeResult,
  type Tool,
} from "../../src/mcp/types.ts";
import type { JsonRpcParams } from "../../src/jsonrpc/message.ts";

// Typed annotations on these literals are the compile-time half of the test: `tsc --noEmit`
// fails if a real-looking wire object stops fitting its type.
const tool: Tool = {
  name: "search_files",
  title: "Search files",
  description: "Find files whose content matches a pattern.",
  icons: [
    { src: "https://example.com/search.png", mimeType: "image/png", sizes: ["48x48"], theme: "light" },
    { src: "data:image/svg+xml;base64,PHN2Zy8+", sizes: ["any"] },
  ],
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { pattern: { type: "string" }, limit: { type: "integer", minimum: 1 } },
    required: ["pattern"],
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: { matches: { type: "array", items: { type: "string" } } },
    required: ["matches"],
  },
  annotations: { title: "Search", readOnlyHint: true, openWorldHint: false },
  execution: { taskSupport: "forbidden" },
  _meta: { "example.com/origin": "test" },
};

const blocks: ContentBlock[] = [
  { type: "text", text: "2 matches", annotations: { audience: ["user", "assistant"], priority: 0.5 } },
  { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
  { type: "audio", data: "UklGRg==", mimeType: "audio/wav", _meta: { note: 1 } },
  {
    type: "resource_link",
    uri: "file:///project/a.txt",
    name: "a.txt",
    mimeType: "text/plain",
    size: 12,
    annotations: { lastModified: "2025-01-12T15:00:58Z" },
  },
  { type: "resource", resource: { uri: "file:///project/b.txt", mimeType: "text/plain", text: "hello" } },
  { type: "resource", resource: { uri: "file:///project/c.bin", blob: "AAEC" } },
];

const result: CallToolResult = {
  content: blocks,
  structuredContent: { matches: ["a.txt", "b.txt"] },
  isError: false,
  _meta: { "io.modelcontextprotocol/related-task": { taskId: "t1" } },
};

const init: InitializeResult = {
  protocolVersion: "2025-11-25",
  capabilities: { tools: { listChanged: true }, logging: {}, resources: { subscribe: true } },
  serverInfo: { name: "files", version: "1.2.0", title: "Files", websiteUrl: "https://example.com" },
  instructions: "Use search_files before reading.",
};

test("a full tool satisfies isTool; a tool after a JSON round trip still does", () => {
  assert.equal(isTool(tool), true);
  assert.equal(isTool(JSON.parse(JSON.stringify(tool))), true);
  assert.equal(isTool({ name: "bare", inputSchema: { type: "object" } }), true);
});

test("isTool rejects missing or mistyped required and checked members", () => {
  assert.equal(isTool({ inputSchema: { type: "object" } }), false);
  assert.equal(isTool({ name: "x" }), false);
  assert.equal(isTool({ name: "x", inputSchema: null }), false);
  assert.equal(isTool({ name: "x", inputSchema: [] }), false);
  assert.equal(isTool({ name: 7, inputSchema: {} }), false);
  assert.equal(isTool({ name: "x", inputSchema: {}, outputSchema: "object" }), false);
  assert.equal(isTool({ name: "x", inputSchema: {}, annotations: true }), false);
  assert.equal(isTool({ name: "x", inputSchema: {}, description: 3 }), false);
  assert.equal(isTool({ name: "x", inputSchema: {}, icons: {} }), false);
  assert.equal(isTool(null), false);
});

test("every content block of a real result satisfies isContentBlock", () => {
  assert.deepEqual(
    [...new Set(blocks.map((b) => b.type))].sort(),
    [...CONTENT_BLOCK_TYPES].sort(),
  );
  for (const b of blocks) assert.equal(isContentBlock(b), true, b.type);
});

test("isContentBlock rejects unknown types and blocks missing required members", () => {
  const bad: unknown[] = [
    { type: "video", data: "x", mimeType: "video/mp4" },
    { type: "text" },
    { type: "text", text: 1 },
    { type: "image", data: "x" },
    { type: "audio", mimeType: "audio/wav" },
    { type: "resource_link", uri: "file:///a" },
    { type: "resource", resource: { uri: "file:///a" } },
    { type: "resource", resource: { text: "no uri" } },
    { type: "text", text: "x", annotations: "high" },
    { text: "no type" },
    "text",
  ];
  for (const b of bad) assert.equal(isContentBlock(b), false, JSON.stringify(b));
});

test("isCallToolResult accepts real results and tolerates blocks of unknown types", () => {
  assert.equal(isCallToolResult(result), true);
  assert.equal(isCallToolResult({ content: [] }), true);
  assert.equal(isCallToolResult({ content: [{ type: "from-the-future" }] }), true);
});

test("isCallToolResult rejects a missing content array or mistyped optional members", () => {
  assert.equal(isCallToolResult({}), false);
  assert.equal(isCallToolResult({ content: "text" }), false);
  assert.equal(isCallToolResult({ content: [], isError: "yes" }), false);
  assert.equal(isCallToolResult({ content: [], structuredContent: [1, 2] }), false);
  assert.equal(isCallToolResult([]), false);
});

test("isInitializeResult checks version, capabilities and serverInfo", () => {
  assert.equal(isInitializeResult(init), true);
  assert.equal(isInitializeResult({ ...init, protocolVersion: undefined }), false);
  assert.equal(isInitializeResult({ ...init, capabilities: undefined }), false);
  assert.equal(isInitializeResult({ ...init, serverInfo: { name: "files" } }), false);
  assert.equal(isInitializeResult({ ...init, serverInfo: "files" }), false);
  assert.equal(isInitializeResult({ ...init, instructions: 42 }), false);
});

test("params types are assignable to JSON-RPC params without a cast", () => {
  const call: CallToolRequestParams = { name: "search_files", arguments: { pattern: "x" }, _meta: { progressToken: 1 } };
  const elicit: ElicitRequestParams = {
    message: "Pick one",
    requestedSchema: {
      type: "object",
      properties: {
        colour: { type: "string", oneOf: [{ const: "r", title: "Red" }] },
        tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, default: ["a"] },
        email: { type: "string", format: "email" },
        age: { type: "integer", minimum: 0 },
      },
      required: ["colour"],
    },
  };
  const sample: CreateMessageRequestParams = {
    maxTokens: 100,
    messages: [
      { role: "assistant", content: [{ type: "tool_use", id: "u1", name: "search_files", input: {} }] },
      { role: "user", content: { type: "tool_result", toolUseId: "u1", content: [blocks[0]!] } },
    ],
    tools: [tool],
    toolChoice: { mode: "auto" },
  };
  const asParams: JsonRpcParams[] = [call, elicit, sample];
  assert.equal(asParams.length, 3);
});

test("method tables and logging levels hold the wire strings", () => {
  assert.equal(McpMethod.ToolsList, "tools/list");
  assert.equal(McpMethod.ToolsCall, "tools/call");
  assert.equal(McpNotification.ToolsListChanged, "notifications/tools/list_changed");
  assert.equal(McpNotification.Cancelled, "notifications/cancelled");
  for (const m of Object.values(McpNotification)) assert.match(m, /^notifications\//);
  assert.deepEqual(
    [...LOGGING_LEVELS],
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"],
  );
  assert.ok(LOGGING_LEVELS.indexOf("error") > LOGGING_LEVELS.indexOf("warning"));
});
