/**
 * The built-in middleware, each alone (its hooks called as the pipeline calls them), then in
 * the recommended order behind a real McpServer and McpClient.
 */
import assert from "node:assert/strict";
import { describe, it, test } from "node:test";
import { approval, rateLimit, toolPolicy } from "../../src/gateway/middleware-access.ts";
import { audit, type CallAuditEvent } from "../../src/gateway/middleware-audit.ts";
import { redaction, resultLimits, untrustedMarking } from "../../src/gateway/middleware-results.ts";
import { SpilledResults } from "../../src/gateway/spilled-results.ts";
import { UntrustedWrapper } from "../../src/bridge/untrusted.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer, type ClientIdentity, type Listing, type ServingContext, type ToolCall } from "../../src/mcp/server.ts";
import type { CallToolResult, Tool } from "../../src/mcp/types.ts";
import { Redactor } from "../../src/security/redact.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";

const OBJECT = { type: "object" } as const;

function ctxOf(client: ClientIdentity = { name: "agent" }): ServingContext {
  return { client, era: "handshake" } as ServingContext;
}
function call(name: string, args: Record<string, unknown> = {}): ToolCall {
  return { name, arguments: args, startedAt: 1000 };
}
function tools(...names: string[]): Listing {
  return { kind: "tools", items: names.map((name): Tool => ({ name, inputSchema: OBJECT })) };
}
function text(t: string): CallToolResult {
  return { content: [{ type: "text", text: t }] };
}

describe("toolPolicy", () => {
  const policy = toolPolicy({
    deny: ["*__delete*"],
    forClient: (c) => (c.principal === "ci" ? CI : undefined),
    server: "gw",
  });
  const CI = { allow: ["tests__*"] };

  it("hides what it refuses, and narrows further for one client", async () => {
    assert.deepEqual((await policy.filter!(tools("fs__read", "fs__delete", "tests__run"), ctxOf())).items.map((t) => t.name), ["fs__read", "tests__run"]);
    assert.deepEqual((await policy.filter!(tools("fs__read", "tests__run"), ctxOf({ principal: "ci" }))).items.map((t) => t.name), ["tests__run"]);
    const prompts: Listing = { kind: "prompts", items: [{ name: "fs__delete" }] };
    assert.equal(await policy.filter!(prompts, ctxOf()), prompts, "only tools are its business");
  });

  it("refuses a call it would hide, saying which pattern and what to change", async () => {
    assert.equal(await policy.before!(call("fs__read"), ctxOf()), undefined);
    assert.deepEqual(await policy.before!(call("fs__delete"), ctxOf()), {
      refuse: 'server "gw": tool "fs__delete" is refused by deny pattern "*__delete*"; remove that pattern from "deny" to use it',
    });
    assert.deepEqual(await policy.before!(call("fs__read"), ctxOf({ principal: "ci" })), {
      refuse: 'server "gw": tool "fs__read" is refused: it matches no pattern in "allow"; add a matching pattern to "allow" to use it',
    });
  });
});

describe("approval", () => {
  it("asks, remembers allow_always, and refuses a denial", async () => {
    const asked: string[] = [];
    const mw = approval({ approve: ({ tool }) => (asked.push(tool), tool === "ok" ? "allow_always" : "deny"), needsApproval: (c) => c.name !== "free" });
    assert.equal(await mw.before!(call("ok"), ctxOf()), undefined);
    assert.equal(await mw.before!(call("ok"), ctxOf()), undefined);
    assert.equal(await mw.before!(call("free"), ctxOf()), undefined);
    const denied = await mw.before!(call("no"), ctxOf());
    assert.match((denied as { refuse: string }).refuse, /"no" \(no\) was denied by the approver/);
    assert.deepEqual(asked, ["ok", "no"]);
  });
});

describe("rateLimit", () => {
  it("keeps one bucket per client and refuses with the wait", async () => {
    let now = 0;
    const mw = rateLimit({ callsPerMinute: 1, now: () => now });
    assert.equal(await mw.before!(call("t"), ctxOf({ name: "a" })), undefined);
    assert.equal(await mw.before!(call("t"), ctxOf({ name: "b" })), undefined, "another client has its own bucket");
    assert.deepEqual(await mw.before!(call("t"), ctxOf({ name: "a" })), {
      refuse: 'Rate limit of 1 calls per minute reached, so tool "t" did not run; retry in 60000 ms.',
    });
    now = 60_000;
    assert.equal(await mw.before!(call("t"), ctxOf({ name: "a" })), undefined);
  });
});

describe("resultLimits", () => {
  it("cuts text beyond the limit with the bridge's marker, leaving other parts", async () => {
    const mw = resultLimits({ maxTextChars: 5 });
    const result: CallToolResult = { content: [{ type: "text", text: "abc" }, { type: "image", data: "AA==", mimeType: "image/png" }, { type: "text", text: "defgh" }] };
    assert.deepEqual((await mw.after!(result, call("t"), ctxOf())).content, [
      { type: "text", text: "abc" },
      { type: "image", data: "AA==", mimeType: "image/png" },
      { type: "text", text: "de" },
      { type: "text", text: "[… 3 more characters cut by mcp-bridge]" },
    ]);
    const small = text("ok");
    assert.equal(await mw.after!(small, call("t"), ctxOf()), small);
  });

  it("spills the whole text into a resource the result links to", async () => {
    const spill = new SpilledResults();
    const mw = resultLimits({ maxTextChars: 4, spill });
    const out = await mw.after!(text("0123456789"), call("big"), ctxOf());
    assert.deepEqual(out.content[0], { type: "text", text: "0123" });
    const link = out.content[1] as { type: string; uri: string };
    assert.equal(link.type, "resource_link");
    assert.match(link.uri, /^mcp-bridge:\/\/result-[0-9a-f-]{36}$/);
    assert.deepEqual(spill.readResource(link.uri).contents, [{ uri: link.uri, mimeType: "text/plain", text: "0123456789" }]);
    assert.throws(() => spill.readResource("mcp-bridge://result-x"), { code: -32002 });
  });
});

describe("redaction and untrustedMarking", () => {
  it("redaction replaces known secrets in results and listings", async () => {
    const redactor = new Redactor();
    redactor.addSecret("sk-very-secret-1234");
    const mw = redaction(redactor);
    const out = await mw.after!({ content: [{ type: "text", text: "key sk-very-secret-1234" }], structuredContent: { k: "sk-very-secret-1234" } }, call("t"), ctxOf());
    assert.deepEqual(out, { content: [{ type: "text", text: "key [REDACTED]" }], structuredContent: { k: "[REDACTED]" } });
    const listed = await mw.filter!({ kind: "tools", items: [{ name: "t", description: "uses sk-very-secret-1234", inputSchema: OBJECT }] }, ctxOf());
    assert.equal((listed.items[0] as Tool).description, "uses [REDACTED]");
  });

  it("untrustedMarking puts each text part between markers naming the tool", async () => {
    const mw = untrustedMarking({ wrapper: new UntrustedWrapper({ nonce: "n0nce123" }) });
    const out = await mw.after!(text("hello"), call("fs__read"), ctxOf());
    const marked = (out.content[0] as { text: string }).text;
    assert.match(marked, /n0nce123/);
    assert.match(marked, /mcp:fs__read/);
    assert.match(marked, /\nhello\n/);
  });
});

describe("audit", () => {
  it("records each call with its outcome, redacted arguments and sizes", async () => {
    const events: CallAuditEvent[] = [];
    const mw = audit({ sink: (e) => events.push(e), now: () => 1250 });
    await mw.after!(text("four"), call("t", { password: "hunter2", q: "x" }), ctxOf());
    assert.deepEqual(events, [
      { client: { name: "agent" }, era: "handshake", name: "t", at: 1000, durationMs: 250, outcome: "ok", bytes: { args: 30, result: 4 }, args: { password: "[REDACTED]", q: "x" } },
    ]);
  });
});

test("in the recommended order behind McpServer: audit sees the refusals of the layers inside it", async () => {
  const events: CallAuditEvent[] = [];
  const server = new McpServer(
    { name: "gw", version: "1" },
    { middleware: [audit({ sink: (e) => events.push(e), args: "omit" }), toolPolicy({ deny: ["secret*"] }), resultLimits({ maxTextChars: 3 })] },
  );
  server.tool({ name: "secret_tool", inputSchema: OBJECT }, () => text("never"));
  server.tool({ name: "long", inputSchema: OBJECT }, () => text("abcdef"));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new McpClient({ clientInfo: { name: "downstream", version: "9" } });
  await client.connect(b);
  assert.deepEqual((await client.listTools()).map((t) => t.name), ["long"]);
  assert.equal((await client.callTool("secret_tool")).isError, true);
  assert.deepEqual((await client.callTool("long")).content, [{ type: "text", text: "abc" }, { type: "text", text: "[… 3 more characters cut by mcp-bridge]" }]);
  assert.deepEqual(
    events.map((e) => [e.client.name, e.name, e.outcome, e.stoppedBy]),
    [["downstream", "secret_tool", "refused", "toolPolicy"], ["downstream", "long", "ok", undefined]],
  );
  await client.close();
  await server.close();
});
