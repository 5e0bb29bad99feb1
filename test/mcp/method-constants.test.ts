/**
 * MCP call sites name methods through `McpMethod` / `McpNotification`, not string literals:
 * a misspelt literal is a method nobody answers, a misspelt constant does not compile.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { McpMethod, McpNotification } from "../../src/mcp/types.ts";

const CALL_SITES = [
  "src/mcp/client.ts",
  "src/mcp/server-session.ts",
  "src/manager/resources.ts",
  "src/cli/render.ts",
  "src/acp/acp-tunnel-transport.ts",
  "src/acp/mcp-provider.ts",
  "src/acp/mcp-over-acp.ts",
];

test("the MCP call sites hold no quoted method name outside comments", () => {
  const names = new Set<string>([...Object.values(McpMethod), ...Object.values(McpNotification)]);
  const literals: string[] = [];
  for (const file of CALL_SITES) {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
    text.split("\n").forEach((line, i) => {
      if (/^\s*(\*|\/\/|\/\*)/.test(line)) return;
      for (const m of line.matchAll(/"([^"\\]*)"/g)) {
        if (names.has(m[1]!) && line.slice(0, m.index).split("`").length % 2 === 1) literals.push(`${file}:${i + 1}: ${m[0]}`);
      }
    });
  }
  assert.deepEqual(literals, []);
});
