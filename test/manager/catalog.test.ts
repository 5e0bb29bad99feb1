/** ToolCatalog: naming, policy before limits, deterministic drops, change reports, refusals, warnings. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { ToolNamer } from "../../src/bridge/naming.ts";
import { withDefaults } from "../../src/config/parse-common.ts";
import type { McpServerConfig } from "../../src/config/types.ts";
import { catalogWarnings, ToolCatalog } from "../../src/manager/catalog.ts";
import type { Tool } from "../../src/mcp/types.ts";

const tool = (name: string, description?: string): Tool => ({ name, description, inputSchema: { type: "object" } });
const cfg = (name: string, extra: Partial<McpServerConfig> = {}) => withDefaults({ name, transport: "stdio", command: "/bin/true", ...extra });

test("config order, then tool order, decides what the limit keeps; the drop is reported once", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 3 });
  const a = [tool("z"), tool("y")];
  const b = [tool("x"), tool("w")];
  const first = catalog.update([{ config: cfg("a"), tools: a }, { config: cfg("b"), tools: b }]);
  assert.deepEqual(catalog.list().map((t) => t.name), ["mcp__a__z", "mcp__a__y", "mcp__b__x"]);
  assert.deepEqual(first.dropped, ["mcp__b__w"]);
  assert.deepEqual(first.change.added, ["mcp__a__z", "mcp__a__y", "mcp__b__x"]);
  const again = catalog.update([{ config: cfg("a"), tools: a }, { config: cfg("b"), tools: b }]);
  assert.equal(again.dropped, undefined, "an unchanged drop is not reported again");
  assert.deepEqual(again.change, { added: [], removed: [], changed: [], count: 3 });
  assert.equal(catalog.refusal("mcp__b__w").kind, "limit");
  assert.equal(catalog.refusal("mcp__c__v").kind, "unknown_tool");
});

test("denied tools take no place under the limit; the refusal explains the pattern", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 2, policy: { deny: ["*secret*"] } });
  const config = cfg("s", { deny: ["mcp__s__rm"] });
  catalog.update([{ config, tools: [tool("rm"), tool("secret_read"), tool("ls"), tool("cat")] }]);
  assert.deepEqual(catalog.list().map((t) => t.name), ["mcp__s__ls", "mcp__s__cat"]);
  const rm = catalog.refusal("mcp__s__rm");
  assert.equal(rm.kind, "policy");
  assert.match(rm.message, /deny pattern "mcp__s__rm"/);
  assert.equal(catalog.refusal("mcp__s__secret_read").kind, "policy");
});

test("changes: added, removed and changed definitions; an empty list releases a server's tools", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 10 });
  catalog.update([{ config: cfg("a"), tools: [tool("one", "1"), tool("two")] }]);
  const next = catalog.update([{ config: cfg("a"), tools: [tool("one", "uno"), tool("three")] }]);
  assert.deepEqual(next.change, { added: ["mcp__a__three"], removed: ["mcp__a__two"], changed: ["mcp__a__one"], count: 2 });
  const same = catalog.update([{ config: cfg("a"), tools: [tool("one", "uno"), tool("three")] }]);
  assert.deepEqual(same.change.changed, [], "equal definitions in new objects are not a change");
  const gone = catalog.update([{ config: cfg("a"), tools: [] }]);
  assert.deepEqual(gone.change.removed.sort(), ["mcp__a__one", "mcp__a__three"]);
  assert.equal(catalog.get("mcp__a__one"), undefined);
});

test("duplicates within a server are reported; entries lead back to the server's tool", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 10 });
  const t = tool("dup");
  const update = catalog.update([{ config: cfg("a", { toolPrefix: "p" }), tools: [t, tool("dup")] }]);
  assert.deepEqual(update.duplicates, [{ server: "a", names: ["dup"] }]);
  const entry = catalog.get("mcp__p__dup");
  assert.equal(entry?.tool, t);
  assert.equal(entry?.config.name, "a");
  assert.equal(entry?.bridged.originalName, "dup");
});

test("catalogWarnings: one duplicate_tool per server, one tool_limit naming at most 20 drops", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 2 });
  const many = Array.from({ length: 25 }, (_, i) => tool(`t${i}`));
  const update = catalog.update([
    { config: cfg("a"), tools: [tool("same"), tool("same")] },
    { config: cfg("b"), tools: many },
  ]);
  const warnings = catalogWarnings(update, catalog.size, 1234);
  assert.deepEqual(
    warnings.map((w) => [w.kind, w.server, w.at]),
    [
      ["duplicate_tool", "a", 1234],
      ["tool_limit", undefined, 1234],
    ],
  );
  assert.deepEqual(warnings[0]!.dropped, ["same"]);
  const limit = warnings[1]!;
  assert.equal(limit.dropped!.length, 24);
  assert.match(limit.message, /^the limit of 2 tools per session was reached; 24 tools were left out: /);
  assert.match(limit.message, /, and 4 more$/);
  // The same lists again: nothing new to say.
  assert.deepEqual(catalogWarnings(catalog.update([{ config: cfg("a"), tools: [tool("same")] }, { config: cfg("b"), tools: many }]), catalog.size), []);
});

test("names gone with their server's tools are remembered (bounded), back when listed again, forgotten with the server", () => {
  const catalog = new ToolCatalog({ namer: new ToolNamer(), maxTools: 2_000 });
  const many = Array.from({ length: 1_200 }, (_, i) => tool(`t${i}`));
  catalog.update([{ config: cfg("a"), tools: many }, { config: cfg("b"), tools: [tool("x")] }]);
  // "a" fails: its tools leave the list, and its names are remembered as its.
  catalog.update([{ config: cfg("a"), tools: [] }, { config: cfg("b"), tools: [tool("x")] }]);
  assert.deepEqual(catalog.formerly("mcp__a__t1199"), { server: "a", tool: "t1199" });
  assert.equal(catalog.formerly("mcp__a__t0"), undefined, "at most 1 000 are kept, the newest");
  // Back: no longer a former name.
  catalog.update([{ config: cfg("a"), tools: many.slice(1_199) }, { config: cfg("b"), tools: [tool("x")] }]);
  assert.equal(catalog.formerly("mcp__a__t1199"), undefined);
  // Removed: its names are forgotten, and so is a name that leaves with a removed server.
  catalog.update([{ config: cfg("a"), tools: [] }, { config: cfg("b"), tools: [tool("x")] }]);
  catalog.removeServer("a");
  assert.equal(catalog.formerly("mcp__a__t1199"), undefined);
  catalog.removeServer("b");
  catalog.update([]);
  assert.equal(catalog.formerly("mcp__b__x"), undefined);
});
