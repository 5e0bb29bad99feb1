/** `inspect` lists each tool's arguments and fits the terminal's width. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { toolArguments, toolListing } from "../../src/cli/inspect.ts";
import { echoCommand, fixtureCommand, run, runProcess } from "./helpers.ts";

function toolsSection(out: string): string[] {
  const lines = out.split("\n");
  const start = lines.findIndex((l) => /^tools \(\d+\)$/.test(l));
  const end = lines.findIndex((l, i) => i > start && l === "");
  return lines.slice(start + 1, end);
}

test("inspect shows each tool's arguments: name, type, required or optional, description", async () => {
  const r = await run(["inspect", "--", ...echoCommand], { columns: 100 });
  assert.equal(r.code, 0, r.err);
  const tools = toolsSection(r.out);
  assert.deepEqual(tools.slice(0, 5), [
    "echo           Returns the text it was given.",
    "  text         string                required  Text to echo back",
    "add            Adds two numbers.",
    "  a            number                required",
    "  b            number                required",
  ]);
});

test("inspect fits its output to the terminal's width, wrapping tool descriptions", async () => {
  const r = await run(["inspect", "--", ...echoCommand], { columns: 60 });
  assert.equal(r.code, 0, r.err);
  const long = r.out.split("\n").filter((l) => l.length > 60);
  assert.deepEqual(long, []);
  const tools = toolsSection(r.out);
  const at = tools.findIndex((l) => l.startsWith("slow_progress  "));
  assert.deepEqual(tools.slice(at, at + 2), [
    "slow_progress  Waits delayMs per step, reporting progress",
    "               after each; stops when cancelled.",
  ]);
});

test("inspect run as a process, stdout not a terminal, fits 80 columns", () => {
  const r = runProcess(["inspect", "--", ...echoCommand]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.out.split("\n").filter((l) => l.length > 80), []);
  assert.match(r.out, /^structured {5}Returns nested structured content described by an outputSchema\n {15}with \$defs\.$/m);
});

test("inspect --json run as a process writes all of a long listing to a pipe before it exits", () => {
  // The CLI exits at once after a server command (docs/decisions.md 175): only once its output has left.
  const r = runProcess(["inspect", "--json", "--", ...fixtureCommand("many.ts")]);
  assert.equal(r.code, 0, r.err);
  const listing = JSON.parse(r.out) as { tools: { name: string }[] };
  assert.equal(listing.tools.length, 150);
  assert.equal(listing.tools.at(-1)!.name, "tool-150");
});

test("argument types are read from the schema: arrays, unions, enums, refs; untrusted text is escaped", () => {
  assert.deepEqual(
    toolArguments({
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string" } },
        maybe: { type: ["string", "null"] },
        mode: { enum: ["a", "b"] },
        either: { anyOf: [{ type: "integer" }, { $ref: "#/$defs/point" }] },
        free: {},
      },
      required: ["mode"],
    }).map((a) => [a.name, a.type, a.required]),
    [["tags", "string[]", false], ["maybe", "string|null", false], ["mode", '"a"|"b"', true], ["either", "integer|point", false], ["free", "any", false]],
  );
  const listing = toolListing([{ name: "evil\u001b[2J", description: "clears\u001b[2Jthe screen", inputSchema: { type: "object" } }], 80);
  assert.equal(listing, "evil\\u001b[2J  clears\\u001b[2Jthe screen");
});
