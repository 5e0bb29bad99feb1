import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ToolNamer } from "../../src/bridge/naming.ts";
import { bridgeTools, displayTitle } from "../../src/bridge/types.ts";
import type { Tool } from "../../src/mcp/types.ts";

describe("bridgeTools", () => {
  const input = { type: "object", properties: { path: { type: "string" } }, required: ["path"], $defs: { x: {} } };
  const output = { type: "object", properties: { size: { type: "integer" } } };
  const listed: Tool[] = [
    {
      name: "stat.file",
      title: "Stat a file",
      description: "Returns metadata",
      inputSchema: input,
      outputSchema: output,
      annotations: { title: "ignored", readOnlyHint: true },
    },
    { name: "plain", inputSchema: { type: "object" } },
    { name: "annotated", inputSchema: { type: "object" }, annotations: { title: "From annotations" } },
    { name: "plain", description: "a second listing of the same name", inputSchema: { type: "object" } },
  ];

  it("carries names, server, title, description, annotations and the very schema objects", () => {
    const namer = new ToolNamer();
    const names = namer.assign("fs", listed);
    const { tools, duplicates } = bridgeTools("fs", listed, names);
    assert.deepEqual(
      tools.map((t) => [t.name, t.originalName, t.server, t.title]),
      [
        [names.get("stat.file"), "stat.file", "fs", "Stat a file"],
        ["mcp__fs__plain", "plain", "fs", "plain"],
        ["mcp__fs__annotated", "annotated", "fs", "From annotations"],
      ],
    );
    const stat = tools[0]!;
    assert.equal(stat.inputSchema, input, "same object, not a copy");
    assert.equal(stat.outputSchema, output, "same object, not a copy");
    assert.equal(stat.annotations, listed[0]!.annotations);
    assert.equal(stat.description, "Returns metadata");
    assert.equal(tools[1]!.description, undefined, "the first listing of a repeated name wins");
    assert.equal("outputSchema" in tools[1]!, false);
    assert.deepEqual(duplicates, ["plain"]);
    assert.deepEqual(input, { type: "object", properties: { path: { type: "string" } }, required: ["path"], $defs: { x: {} } });
  });

  it("skips tools the names map does not cover", () => {
    const { tools } = bridgeTools("fs", listed, new Map([["plain", "mcp__fs__plain"]]));
    assert.deepEqual(tools.map((t) => t.originalName), ["plain"]);
  });
});

describe("displayTitle", () => {
  it("prefers title, then annotations.title, then name, skipping empty strings", () => {
    const schema = { type: "object" };
    assert.equal(displayTitle({ name: "n", title: "T", annotations: { title: "A" }, inputSchema: schema }), "T");
    assert.equal(displayTitle({ name: "n", title: "", annotations: { title: "A" }, inputSchema: schema }), "A");
    assert.equal(displayTitle({ name: "n", annotations: { title: "" }, inputSchema: schema }), "n");
  });
});
