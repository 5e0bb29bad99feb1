// The benchmark's baseline server: MCP over stdio written with nothing but JSON.parse,
// JSON.stringify and a line splitter. It imports no part of mcp-bridge, so the benchmark can
// tell the library's cost apart from what any Node stdio server pays anyway.
//
//   node scripts/bench/raw-echo-server.mjs [--tools N]
//
// Answers initialize, ping, tools/list (100 per page, cursor = offset) and tools/call `echo`;
// ignores notifications; exits when stdin ends. Its tool list mirrors the echo fixture's
// (same names and schemas) so both servers send lists of the same size. `--tools N` appends
// tool_0..tool_{N-1}, as the benchmark's McpServer does.
"use strict";

const PAGE_SIZE = 100;
const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const obj = (properties, required, extra = {}) => ({ type: "object", properties, required, ...extra });
const BASE_TOOLS = [
  {
    name: "echo",
    description: "Returns the text it was given.",
    inputSchema: obj({ text: { type: "string", description: "Text to echo back" } }, ["text"], { additionalProperties: false }),
  },
  {
    name: "add",
    description: "Adds two numbers.",
    inputSchema: obj({ a: { type: "number" }, b: { type: "number" } }, ["a", "b"]),
    outputSchema: obj({ sum: { type: "number" } }, ["sum"]),
  },
  { name: "tiny_image", description: "Returns a 1x1 PNG.", inputSchema: { type: "object", additionalProperties: false } },
  {
    name: "slow_progress",
    description: "Waits delayMs per step, reporting progress after each; stops when cancelled.",
    inputSchema: obj(
      { steps: { type: "integer", minimum: 1, maximum: 1000 }, delayMs: { type: "integer", minimum: 0, maximum: 60000 } },
      ["steps", "delayMs"],
    ),
  },
  {
    name: "log",
    description: "Sends a log message to the client at the given level.",
    inputSchema: obj(
      {
        level: { type: "string", enum: ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] },
        message: { type: "string" },
      },
      ["level", "message"],
    ),
  },
  { name: "fail", description: "Always fails.", inputSchema: { type: "object" } },
  {
    name: "structured",
    description: "Returns nested structured content described by an outputSchema with $defs.",
    inputSchema: obj({ label: { type: "string", minLength: 1 } }, ["label"], {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      additionalProperties: false,
    }),
    outputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        point: obj({ x: { type: "number" }, y: { type: "number" } }, ["x", "y"], { additionalProperties: false }),
      },
      properties: {
        origin: { $ref: "#/$defs/point" },
        meta: obj({ label: { type: "string" }, tags: { type: "array", items: { type: "string" } } }, ["label", "tags"], {
          additionalProperties: false,
        }),
      },
      required: ["origin", "meta"],
      additionalProperties: false,
    },
  },
  {
    name: "whoami",
    title: "Who am I",
    description: "Tells the client its name and the negotiated protocol version.",
    inputSchema: { type: "object", additionalProperties: false },
    annotations: { title: "Who am I", readOnlyHint: true, openWorldHint: false },
  },
];

const toolsFlag = process.argv.indexOf("--tools");
const extra = toolsFlag === -1 ? 0 : Number(process.argv[toolsFlag + 1]);
const tools = [...BASE_TOOLS];
for (let i = 0; i < extra; i++) tools.push({ name: `tool_${i}`, description: `Extra tool ${i}.`, inputSchema: { type: "object" } });

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function answer(id, method, params) {
  switch (method) {
    case "initialize": {
      const asked = params && params.protocolVersion;
      return {
        protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[0],
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "raw-echo", version: "1.0.0" },
      };
    }
    case "ping":
      return {};
    case "tools/list": {
      const start = params && typeof params.cursor === "string" ? Number(params.cursor) : 0;
      const end = start + PAGE_SIZE;
      return end < tools.length ? { tools: tools.slice(start, end), nextCursor: String(end) } : { tools: tools.slice(start) };
    }
    case "tools/call":
      if (params && params.name === "echo") return { content: [{ type: "text", text: String(params.arguments.text) }] };
      return { content: [{ type: "text", text: "unknown tool" }], isError: true };
    default:
      send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
      return undefined;
  }
}

function onLine(line) {
  if (line.length === 0) return;
  const message = JSON.parse(line);
  if (message.id === undefined || typeof message.method !== "string") return;
  const result = answer(message.id, message.method, message.params);
  if (result !== undefined) send({ jsonrpc: "2.0", id: message.id, result });
}

// Pieces of the current line are kept apart and joined once its newline arrives, so a 16 MiB
// line costs one copy rather than one per chunk.
let pieces = [];
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  let start = 0;
  let nl;
  while ((nl = chunk.indexOf("\n", start)) !== -1) {
    pieces.push(chunk.slice(start, nl));
    const line = pieces.length === 1 ? pieces[0] : pieces.join("");
    pieces = [];
    onLine(line);
    start = nl + 1;
  }
  if (start < chunk.length) pieces.push(chunk.slice(start));
});
process.stdin.on("end", () => {
  // Nothing else holds the event loop: the process exits once stdout is flushed.
  if (pieces.length > 0) onLine(pieces.join(""));
});
