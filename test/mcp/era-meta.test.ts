/** Per-request `_meta` of the stateless era: what is refused with which code, and how results look. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { EraMeta, eraResult, missingCapability, readRequestMeta } from "../../src/mcp/era-meta.ts";
import { McpServer } from "../../src/mcp/server.ts";

const SUPPORTED = ["2026-07-28"];
const meta = (m: Record<string, unknown>) => ({ _meta: m });
const good = { [EraMeta.ProtocolVersion]: "2026-07-28", [EraMeta.ClientCapabilities]: { sampling: {} } };

function codeOf(fn: () => unknown): { code: number; data: unknown } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof RpcError);
    return { code: err.code, data: err.data };
  }
  assert.fail("expected a throw");
}

test("missing or malformed _meta, version or capabilities are -32602; clientInfo may be absent", () => {
  for (const params of [undefined, {}, meta({}), { _meta: [] }, meta({ [EraMeta.ClientCapabilities]: {} }), meta({ [EraMeta.ProtocolVersion]: "2026-07-28" })]) {
    assert.equal(codeOf(() => readRequestMeta(params, "server/discover", SUPPORTED)).code, -32602, JSON.stringify(params));
  }
  assert.equal(codeOf(() => readRequestMeta(meta({ ...good, [EraMeta.ClientCapabilities]: [] }), "m", SUPPORTED)).code, -32602);
  assert.equal(codeOf(() => readRequestMeta(meta({ ...good, [EraMeta.ClientInfo]: "me" }), "m", SUPPORTED)).code, -32602);
  assert.equal(codeOf(() => readRequestMeta(meta({ ...good, [EraMeta.LogLevel]: "loud" }), "m", SUPPORTED)).code, -32602);
  const read = readRequestMeta(meta(good), "m", SUPPORTED);
  assert.deepEqual(read, { protocolVersion: "2026-07-28", clientCapabilities: { sampling: {} }, clientInfo: undefined, logLevel: undefined });
});

test("an unsupported version is -32022 naming the supported ones and echoing the requested one", () => {
  const e = codeOf(() => readRequestMeta(meta({ ...good, [EraMeta.ProtocolVersion]: "v999.0.0" }), "m", SUPPORTED));
  assert.deepEqual(e, { code: -32022, data: { supported: ["2026-07-28"], requested: "v999.0.0" } });
});

test("results carry resultType, serverInfo beside their own _meta, and cache hints when given", () => {
  const info = { name: "s", version: "1" };
  assert.deepEqual(eraResult({ tools: [], _meta: { k: 1 } }, info, { ttlMs: 5, cacheScope: "public" }), {
    tools: [],
    resultType: "complete",
    _meta: { k: 1, [EraMeta.ServerInfo]: info },
    ttlMs: 5,
    cacheScope: "public",
  });
  assert.equal(eraResult({ resultType: "input_required" }, info).resultType, "input_required");
  assert.deepEqual(missingCapability("sampling/createMessage", "sampling").data, { requiredCapabilities: { sampling: {} } });
});

test("McpServer refuses cache hints outside the schema", () => {
  assert.throws(() => new McpServer({ name: "s", version: "1" }, { cache: { ttlMs: -1 } }), /cache.ttlMs must be a non-negative integer/);
  assert.throws(() => new McpServer({ name: "s", version: "1" }, { cache: { ttlMs: 1.5 } }), RangeError);
  assert.throws(() => new McpServer({ name: "s", version: "1" }, { cache: { cacheScope: "shared" as "public" } }), /cacheScope must be "public" or "private"/);
});
