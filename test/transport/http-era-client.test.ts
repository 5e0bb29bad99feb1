/**
 * McpClient's stateless era (2026-07-28) over loopback HTTP: against our own dual-era server
 * (which checks every SEP-2243 header, so a call that succeeds proves them), against scripted
 * servers that record what the client sends, and the fall back to the handshake era
 * (docs/decisions.md 129, 130, 131, 134, 135).
 */
import assert from "node:assert/strict";
import type * as http from "node:http";
import { after, describe, it } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { EraMeta } from "../../src/mcp/era-meta.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { until } from "../helpers/wait.ts";
import { accepted, closedAfterAll, initializeResult, result, sendJson, type Handler, type SeenRequest } from "./http-client-helpers.ts";

const { serve, keep } = closedAfterAll<AutoHttpClientTransport>();
const clients: McpClient[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

function client(options: ConstructorParameters<typeof McpClient>[0] = {}): McpClient {
  const c = new McpClient(options);
  clients.push(c);
  return c;
}

function auto(url: string): AutoHttpClientTransport {
  return keep(new AutoHttpClientTransport({ url }));
}

const SERVER_INFO = { name: "scripted", version: "1" };

/** A stateless-era result as a 2026-07-28 server sends it. */
function complete(id: unknown, value: Record<string, unknown>): unknown {
  return result(id, { resultType: "complete", ...value, _meta: { [EraMeta.ServerInfo]: SERVER_INFO, ...(value._meta as object | undefined) } });
}

const DISCOVERED = { supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, ttlMs: 0, cacheScope: "private" };

/** A scripted stateless server: `server/discover` answered, every other request by `answer`. */
function statelessServer(answer: (msg: { id: unknown; method: string; params: Record<string, unknown> }, req: SeenRequest, res: http.ServerResponse) => void): Handler {
  return (req, res) => {
    const msg = req.json as { id?: unknown; method: string; params?: Record<string, unknown> };
    if (msg.id === undefined) return accepted(res);
    if (msg.method === "server/discover") return sendJson(res, complete(msg.id, DISCOVERED));
    answer({ id: msg.id, method: msg.method, params: msg.params ?? {} }, req, res);
  };
}

describe("McpClient, stateless era over HTTP", () => {
  it("speaks 2026-07-28 to our dual-era server: headers, input rounds, errors, listen", async () => {
    const server = new McpServer({ name: "era", version: "1" });
    server.tool(
      {
        name: "météo",
        inputSchema: {
          type: "object",
          properties: { city: { type: "string", "x-mcp-header": "City" }, days: { type: "integer", "x-mcp-header": "Days" }, note: { type: "string" } },
        },
      },
      (args) => ({ content: [{ type: "text", text: `${String(args.city)} ${String(args.days)}` }] }),
    );
    server.tool({ name: "ask", inputSchema: { type: "object" } }, async (_args, ctx) => {
      const answer = await ctx.session.elicit({ message: "Who?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } }, { signal: ctx.signal });
      return { content: [{ type: "text", text: JSON.stringify(answer.content) }] };
    });
    server.resource({ uri: "era://here", name: "here" }, (uri) => ({ contents: [{ uri, text: "here" }] }));
    const httpServer = new StreamableHttpServer({ onSession: (t) => server.connect(t) });
    const url = (await httpServer.listen(0)).url.href;
    try {
      const c = client({ handlers: { elicitation: () => ({ action: "accept", content: { name: "Ada" } }) } });
      const t = auto(url);
      const init = await c.connect(t);
      assert.equal(c.era, "modern");
      assert.equal(init.serverInfo.name, "era");
      // The listen stream, a second stateless request, chose Streamable HTTP.
      assert.equal(t.selected, "streamable-http");
      // Mcp-Name and Mcp-Param-City need Base64 here; the server refuses a wrong header (-32020).
      const called = await c.callTool("météo", { city: "Zürich ", days: 3, note: "no header" });
      assert.deepEqual(called, { content: [{ type: "text", text: "Zürich  3" }] });
      assert.equal(t.sessionId, undefined);
      assert.deepEqual(await c.callTool("ask"), { content: [{ type: "text", text: '{"name":"Ada"}' }] });
      await assert.rejects(c.readResource("era://missing"), (e: { name: string; code: number; data: unknown }) => {
        assert.deepEqual([e.name, e.code, e.data], ["RpcError", -32602, { uri: "era://missing" }]);
        return true;
      });
      // subscriptions/listen brings list changes and resource updates to the usual events.
      const events: string[] = [];
      c.on("toolsListChanged", () => events.push("tools"));
      c.on("resourceUpdated", (e) => events.push(`updated ${e.uri}`));
      server.tool({ name: "late", inputSchema: { type: "object" } }, () => ({ content: [] }));
      await until(() => events.includes("tools"), "tools/list_changed on the listen stream");
      await c.subscribe("era://here");
      await server.notifyResourceUpdated("era://here");
      await until(() => events.includes("updated era://here"), "the resource update");
      await c.close();
    } finally {
      await httpServer.close();
      await server.close();
    }
  });

  it("a result keeps its own fields as sent: a __proto__ key stays a field, only the era's fields and serverInfo go", async () => {
    // JSON.parse makes "__proto__" an own field; a copy that assigned it would set a prototype.
    const hostile = JSON.parse('{"content":[{"type":"text","text":"x"}],"__proto__":{"polluted":true},"isError":false}') as Record<string, unknown>;
    const results = [
      complete(0, hostile),
      result(0, { resultType: "complete", content: [], _meta: { [EraMeta.ServerInfo]: SERVER_INFO } }),
      result(0, { resultType: "complete", content: [], _meta: "not an object" }),
    ];
    let next = 0;
    const s = await serve(statelessServer((msg, _req, res) => sendJson(res, { ...(results[next++] as object), id: msg.id })));
    const c = client();
    await c.connect(auto(`${s.origin}/mcp`));
    const first = (await c.callTool("t")) as unknown as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(first), Object.prototype);
    assert.equal((first as { polluted?: unknown }).polluted, undefined);
    assert.deepEqual(Object.getOwnPropertyDescriptor(first, "__proto__")?.value, { polluted: true });
    assert.deepEqual(Object.keys(first).sort(), ["__proto__", "content", "isError"]);
    assert.deepEqual(await c.callTool("t"), { content: [] }, "a _meta holding only serverInfo goes");
    assert.deepEqual(await c.callTool("t"), { content: [], _meta: "not an object" }, "a _meta that is not an object is passed on");
  });

  it("sends _meta and the SEP-2243 headers, retries -32022 once, drops invalid tools, returns one shape", async () => {
    let refusedOnce = false;
    const s = await serve(
      statelessServer((msg, _req, res) => {
        if (msg.method === "tools/list" && !refusedOnce) {
          refusedOnce = true;
          return sendJson(res, { jsonrpc: "2.0", id: msg.id, error: { code: -32022, message: "Unsupported protocol version", data: { supported: ["2026-07-28"], requested: "x" } } }, {}, 400);
        }
        if (msg.method === "tools/list") {
          return sendJson(res, complete(msg.id, {
            ttlMs: 60_000,
            cacheScope: "private",
            tools: [
              { name: "good", inputSchema: { type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" }, verbose: { type: "boolean", "x-mcp-header": "Verbose" }, n: { type: "integer", "x-mcp-header": "N" } } } },
              { name: "bad", inputSchema: { type: "object", properties: { score: { type: "number", "x-mcp-header": "Score" } } } },
            ],
          }));
        }
        sendJson(res, complete(msg.id, { content: [{ type: "text", text: "ok" }], ttlMs: 5, cacheScope: "public", _meta: { "example.com/keep": 1 } }));
      }),
    );
    const c = client({ clientInfo: { name: "era-test", version: "2" } });
    const rejected: string[] = [];
    c.on("toolRejected", (e) => rejected.push(`${e.name}: ${e.reason}`));
    await c.connect(auto(`${s.origin}/mcp`));
    const tools = await c.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), ["good"]);
    assert.match(rejected.join("\n"), /^bad: x-mcp-header .*"number"/);
    assert.deepEqual(c.toolsCacheHints, { ttlMs: 60_000, cacheScope: "private" });
    const called = await c.callTool("good", { region: " us-west ", verbose: null, n: -7 });
    // One shape: resultType, the serverInfo _meta key, ttlMs and cacheScope go; the rest stays.
    assert.deepEqual(called, { content: [{ type: "text", text: "ok" }], _meta: { "example.com/keep": 1 } });

    const [discover, refused, listed, call] = s.requests;
    assert.equal(s.requests.length, 4);
    for (const r of [discover!, refused!, listed!, call!]) {
      const meta = (r.json as { params: { _meta: Record<string, unknown> } }).params._meta;
      assert.equal(r.headers["mcp-protocol-version"], "2026-07-28");
      assert.equal(r.headers["mcp-method"], (r.json as { method: string }).method);
      assert.equal(r.headers["mcp-session-id"], undefined);
      assert.deepEqual(meta[EraMeta.ClientInfo], { name: "era-test", version: "2" });
      assert.equal(meta[EraMeta.ProtocolVersion], "2026-07-28");
      assert.deepEqual(meta[EraMeta.ClientCapabilities], {});
    }
    assert.notEqual((refused!.json as { id: unknown }).id, (listed!.json as { id: unknown }).id, "the retry is a new request");
    assert.equal(call!.headers["mcp-name"], "good");
    assert.equal(call!.headers["mcp-param-region"], `=?base64?${Buffer.from(" us-west ").toString("base64")}?=`);
    assert.equal(call!.headers["mcp-param-n"], "-7");
    assert.equal(call!.headers["mcp-param-verbose"], undefined, "a null argument sends no header");
    assert.equal(s.requests.filter((r) => r.method === "GET").length, 0, "no GET stream in this era");
  });

  it("input rounds: new ids, requestState echoed verbatim, bounded; malformed input_required is a typed error", async () => {
    const s = await serve(
      statelessServer((msg, _req, res) => {
        const name = msg.params.name;
        if (name === "forever") {
          return sendJson(res, result(msg.id, {
            resultType: "input_required",
            requestState: "opaque+state/==",
            inputRequests: { who: { method: "elicitation/create", params: { message: "Who?", requestedSchema: { type: "object", properties: {} } } } },
          }));
        }
        if (name === "neither") return sendJson(res, result(msg.id, { resultType: "input_required" }));
        if (name === "junk") return sendJson(res, result(msg.id, { resultType: "input_required", inputRequests: "please" }));
        if (name === "undeclared") return sendJson(res, result(msg.id, { resultType: "input_required", inputRequests: { r: { method: "roots/list" } } }));
        // No resultType at all: complete.
        sendJson(res, result(msg.id, { content: [] }));
      }),
    );
    const asked: string[] = [];
    const c = client({ maxInputRounds: 2, handlers: { elicitation: (p) => (asked.push(p.message), { action: "decline" }) } });
    await c.connect(auto(`${s.origin}/mcp`));
    await assert.rejects(c.callTool("forever"), { name: "BridgeError", code: "LIMIT_EXCEEDED" });
    const rounds = s.requests.filter((r) => (r.json as { params?: { name?: string } }).params?.name === "forever").map((r) => r.json as { id: unknown; params: Record<string, unknown> });
    assert.equal(rounds.length, 3, "the first request and two retries");
    assert.equal(new Set(rounds.map((r) => r.id)).size, 3, "each retry has a new id");
    assert.equal(rounds[0]!.params.requestState, undefined);
    for (const retry of rounds.slice(1)) {
      assert.equal(retry.params.requestState, "opaque+state/==");
      assert.deepEqual(retry.params.inputResponses, { who: { action: "decline" } });
    }
    assert.deepEqual(asked, ["Who?", "Who?"]);
    await assert.rejects(c.callTool("neither"), { name: "BridgeError", code: "INVALID_RESULT" });
    await assert.rejects(c.callTool("junk"), { name: "BridgeError", code: "INVALID_RESULT" });
    await assert.rejects(c.callTool("undeclared"), { name: "BridgeError", code: "INVALID_RESULT" });
    assert.deepEqual(await c.callTool("plain"), { content: [] });
  });

  it("a handshake-era Streamable HTTP server: the probe's 400 leads to initialize on the same URL", async () => {
    const s = await serve((req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const msg = req.json as { id?: unknown; method: string };
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s1" });
      if (req.headers["mcp-session-id"] !== "s1") {
        return sendJson(res, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: Mcp-Session-Id header is required" } }, {}, 400);
      }
      if (msg.id === undefined) return accepted(res);
      sendJson(res, result(msg.id, { tools: [] }));
    });
    const c = client();
    const t = auto(`${s.origin}/mcp`);
    await c.connect(t);
    assert.equal(c.era, "legacy");
    assert.equal(t.selected, "streamable-http");
    assert.equal(t.sessionId, "s1");
    assert.deepEqual(await c.listTools(), []);
    const methods = s.requests.filter((r) => r.method === "POST").map((r) => (r.json as { method: string }).method);
    assert.deepEqual(methods, ["server/discover", "initialize", "notifications/initialized", "tools/list"]);
    assert.equal(s.requests[1]!.headers["mcp-method"], undefined, "the handshake era sends no stateless headers");
  });

  it("a server that never answers server/discover: the probe's stream is closed (no cancel POST), then initialize", async () => {
    const held: http.ServerResponse[] = [];
    const s = await serve((req, res) => {
      const msg = req.json as { id?: unknown; method: string };
      if (msg.method === "server/discover") return void held.push(res);
      if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id));
      if (msg.id === undefined) return accepted(res);
      sendJson(res, result(msg.id, { tools: [] }));
    });
    const c = client({ discoverTimeoutMs: 200 });
    await c.connect(auto(`${s.origin}/mcp`));
    assert.equal(c.era, "legacy");
    await until(() => held[0]?.destroyed === true || held[0]?.writableEnded === true || held[0]?.socket?.destroyed === true, "the probe's connection to close");
    const methods = s.requests.map((r) => (r.json as { method: string }).method);
    assert.deepEqual(methods, ["server/discover", "initialize", "notifications/initialized"]);
  });
});
