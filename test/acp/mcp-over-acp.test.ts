/**
 * MCP over ACP, draft binding: the envelope codec, and McpClient <-> McpProvider(McpServer)
 * through the tunnel transport over an in-memory ACP connection.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { AcpTunnelRouter } from "../../src/acp/acp-tunnel-router.ts";
import { DRAFT_METHODS, draftBinding } from "../../src/acp/mcp-over-acp.ts";
import { McpProvider } from "../../src/acp/mcp-provider.ts";
import { BridgeError, RpcError } from "../../src/jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { JsonRpcPeer, type PeerOptions } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import type { McpServer } from "../../src/mcp/server.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { until } from "../helpers/wait.ts";

const ACP_PEER: PeerOptions = { cancelMethod: "$/cancel_request", cancelParams: (id) => ({ requestId: id }), progressMethod: null };

/** An agent (MCP client side) and a provider joined by one in-memory ACP connection. */
async function rig(server: McpServer = createEchoServer()) {
  const [agentEnd, providerEnd] = InMemoryTransport.createLinkedPair();
  const wire: { from: "agent" | "provider"; message: JsonRpcMessage }[] = [];
  for (const [end, from] of [[agentEnd, "agent"], [providerEnd, "provider"]] as const) {
    const send = end.send.bind(end);
    end.send = (m) => {
      if (!Array.isArray(m)) wire.push({ from, message: m });
      return send(m);
    };
  }
  const agentPeer = new JsonRpcPeer(agentEnd, ACP_PEER);
  const providerPeer = new JsonRpcPeer(providerEnd, ACP_PEER);
  const providerErrors: Error[] = [];
  providerPeer.onerror = (e) => providerErrors.push(e);
  const provider = new McpProvider({ name: "tools", server });
  provider.attach(providerPeer);
  provider.serve(providerPeer);
  const router = new AcpTunnelRouter({ link: agentPeer, side: "client" });
  router.serve(agentPeer);
  await agentPeer.start();
  await providerPeer.start();
  const { key, declaration } = await provider.declare();
  return {
    agentPeer,
    providerPeer,
    provider,
    router,
    server,
    key,
    declaration,
    wire,
    providerErrors,
    async close() {
      await router.close();
      await provider.close();
      await server.close();
      await agentPeer.close();
      await providerPeer.close();
    },
  };
}

describe("draft binding codec", { timeout: 60_000 }, () => {
  test("declarations, keys and the capability have the draft binding's shape", () => {
    const key = draftBinding.newServerKey();
    assert.match(key, /^acp:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(draftBinding.newServerKey(), key);
    assert.deepEqual(draftBinding.declaration("tools", key), { name: "tools", transport: "http", url: key, headers: {} });
    assert.deepEqual(draftBinding.agentCapabilities(), { _meta: { mcp_acp_transport: true } });
    assert.equal(draftBinding.agentSupports({ _meta: { mcp_acp_transport: true } }), true);
    assert.equal(draftBinding.agentSupports({ _meta: { mcp_acp_transport: "yes" } }), false);
    assert.equal(draftBinding.agentSupports({ mcpCapabilities: { http: true } }), false);
    assert.equal(draftBinding.agentSupports(undefined), false);
    assert.deepEqual(draftBinding.withCapability({ loadSession: true, _meta: { other: 1 } }), {
      loadSession: true,
      _meta: { other: 1, mcp_acp_transport: true },
    });
  });

  test("only http entries with an acp: url are MCP-over-ACP servers", () => {
    assert.equal(draftBinding.serverKey({ name: "a", transport: "http", url: "acp:x", headers: {} }), "acp:x");
    assert.equal(draftBinding.serverKey({ name: "a", type: "http", url: "acp:x", headers: [] }), "acp:x");
    assert.equal(draftBinding.isAcpServer({ name: "a", type: "http", url: "https://example.com/mcp", headers: [] }), false);
    assert.equal(draftBinding.isAcpServer({ name: "a", type: "sse", url: "acp:x", headers: [] }), false);
    assert.equal(draftBinding.isAcpServer({ name: "a", command: "acp:x", args: [], env: [] }), false);
    assert.equal(draftBinding.isAcpServer({ name: "a", transport: "http", url: "acp:" }), false);
    assert.equal(draftBinding.isAcpServer(null), false);
  });

  test("encode and decode are inverse, and name the direction and kind", () => {
    const request = { jsonrpc: "2.0" as const, id: 7, method: "tools/list", params: {} };
    const enc = draftBinding.encode("client_to_server", "acp:k", request);
    assert.deepEqual(enc, { method: DRAFT_METHODS.clientToServerRequest, params: { url: "acp:k", message: request }, expectsResult: true });
    const dec = draftBinding.decode(enc.method, enc.params, { isRequest: true, direction: "client_to_server" });
    assert.deepEqual(dec, { key: "acp:k", direction: "client_to_server", kind: "request", message: request });
    const note = { jsonrpc: "2.0" as const, method: "notifications/message", params: { level: "info", data: "x" } };
    const encNote = draftBinding.encode("server_to_client", "acp:k", note);
    assert.equal(encNote.method, DRAFT_METHODS.serverToClientNotification);
    assert.equal(encNote.expectsResult, false);
    const response = { jsonrpc: "2.0" as const, id: 7, result: { tools: [] } };
    assert.deepEqual(draftBinding.encodeResult(response), { message: response });
    assert.deepEqual(draftBinding.decodeResult(request, { message: response }), response);
  });

  test("malformed envelopes are -32602, a foreign direction -32601, a bad result -32603", () => {
    const expect = { isRequest: true, direction: "client_to_server" as const };
    const m = DRAFT_METHODS.clientToServerRequest;
    const code = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as RpcError).code;
      }
      return "no error";
    };
    assert.equal(code(() => draftBinding.decode(m, undefined, expect)), -32602);
    assert.equal(code(() => draftBinding.decode(m, { url: "http://x", message: { jsonrpc: "2.0", id: 1, method: "a" } }, expect)), -32602);
    assert.equal(code(() => draftBinding.decode(m, { url: "acp:k" }, expect)), -32602);
    assert.equal(code(() => draftBinding.decode(m, { url: "acp:k", message: { jsonrpc: "2.0", method: "a" } }, expect)), -32602);
    assert.equal(code(() => draftBinding.decode(m, { url: "acp:k", message: { jsonrpc: "2.0", id: 1, method: "a" } }, { ...expect, isRequest: false })), -32602);
    assert.equal(code(() => draftBinding.decode(DRAFT_METHODS.serverToClientRequest, {}, expect)), -32601);
    const req = { jsonrpc: "2.0" as const, id: 1, method: "ping" };
    assert.equal(code(() => draftBinding.decodeResult(req, {})), -32603);
    assert.equal(code(() => draftBinding.decodeResult(req, { message: { jsonrpc: "2.0", id: 2, result: {} } })), -32603);
  });
});

describe("McpClient over the tunnel to an McpProvider", { timeout: 60_000 }, () => {
  test("handshake, tools and a call flow as _mcp envelopes with {url, message}", async () => {
    const r = await rig();
    // The draft binding's handshake-era envelopes (initialize, notifications/initialized).
    const client = new McpClient({ era: "legacy" });
    const init = await client.connect(r.router.open(r.key));
    assert.equal(init.serverInfo.name, "echo");
    const tools = await client.listTools();
    assert.ok(tools.some((t) => t.name === "echo"));
    const result = await client.callTool("echo", { text: "through ACP" });
    assert.deepEqual(result.content, [{ type: "text", text: "through ACP" }]);

    const first = r.wire.find((w) => w.from === "agent")!.message as unknown as { id: number; method: string; params: { url: string; message: { method: string } } };
    assert.equal(first.method, "_mcp/client_to_server/request");
    assert.equal(first.params.url, r.key);
    assert.equal(first.params.message.method, "initialize");
    const answer = r.wire.find((w) => w.from === "provider" && (w.message as { id?: number }).id === first.id)!.message as {
      result: { message: { id: unknown; result: { serverInfo: { name: string } } } };
    };
    assert.equal(answer.result.message.result.serverInfo.name, "echo");
    const initialized = r.wire.find((w) => (w.message as { method?: string }).method === "_mcp/client_to_server/notification");
    assert.equal((initialized!.message as unknown as { params: { message: { method: string } } }).params.message.method, "notifications/initialized");
    await client.close();
    await r.close();
  });

  test("the server's progress, logging and sampling reach the client as server_to_client envelopes", async () => {
    const server = createEchoServer();
    server.tool({ name: "ask", inputSchema: { type: "object" } }, async (_args, ctx) => {
      const answer = await ctx.session.createMessage(
        { messages: [{ role: "user", content: { type: "text", text: "2+2?" } }], maxTokens: 10 },
        { relatedRequestId: ctx.requestId },
      );
      return { content: [{ type: "text", text: `model said ${(answer.content as { text: string }).text}` }] };
    });
    const r = await rig(server);
    // Sampling as a server_to_client request is the handshake era's (the stateless one asks by input_required).
    const client = new McpClient({
      era: "legacy",
      handlers: { sampling: () => ({ role: "assistant", content: { type: "text", text: "4" }, model: "scripted" }) },
    });
    const logs: unknown[] = [];
    client.on("log", (l) => logs.push(l.data));
    await client.connect(r.router.open(r.key));
    const progress: number[] = [];
    await client.callTool("slow_progress", { steps: 3, delayMs: 1 }, { onProgress: (p) => progress.push(p.progress) });
    assert.deepEqual(progress, [1, 2, 3]);
    await client.callTool("log", { level: "warning", message: "careful" });
    assert.deepEqual(logs, ["careful"]);
    const asked = await client.callTool("ask", {});
    assert.deepEqual(asked.content, [{ type: "text", text: "model said 4" }]);
    const methods = r.wire.filter((w) => w.from === "provider").map((w) => (w.message as { method?: string }).method);
    assert.ok(methods.includes("_mcp/server_to_client/request"), "sampling went out as a server_to_client request");
    assert.ok(methods.includes("_mcp/server_to_client/notification"), "progress and logs went out as server_to_client notifications");
    await client.close();
    await r.close();
  });

  test("cancelling a call stops the server's handler and settles the outer request", async () => {
    const server = createEchoServer();
    const stopped: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    server.tool({ name: "wait", inputSchema: { type: "object" } }, (_args, ctx) => {
      started();
      return new Promise((_, reject) => {
        ctx.signal.addEventListener("abort", () => {
          stopped.push("aborted");
          reject(new Error("stopped"));
        });
      });
    });
    const r = await rig(server);
    const client = new McpClient();
    await client.connect(r.router.open(r.key));
    // The stateless era keeps one request open for good (subscriptions/listen): count from here.
    const idle = r.agentPeer.pendingCount;
    const tunnelIdle = r.router.get(r.key)!.pendingCount;
    const controller = new AbortController();
    const call = client.callTool("wait", {}, { signal: controller.signal });
    await running;
    controller.abort();
    await assert.rejects(call, { name: "BridgeError", code: "CANCELLED" });
    await until(() => stopped.length > 0 && r.agentPeer.pendingCount === idle, "the handler to stop and the outer request to settle");
    assert.deepEqual(stopped, ["aborted"]);
    assert.equal(r.router.get(r.key)!.pendingCount, tunnelIdle);
    await client.close();
    await r.close();
  });

  test("a url nobody declared is refused with -32002 and data.url; bad envelopes with -32602", async () => {
    const r = await rig();
    const inner = { jsonrpc: "2.0", id: 1, method: "ping" };
    await assert.rejects(
      r.agentPeer.request(DRAFT_METHODS.clientToServerRequest, { url: "acp:nobody", message: inner }),
      (e: RpcError) => e.code === -32002 && (e.data as { url: string }).url === "acp:nobody" && /no MCP server is declared at acp:nobody/.test(e.message),
    );
    await assert.rejects(r.agentPeer.request(DRAFT_METHODS.clientToServerRequest, { url: r.key }), { name: "RpcError", code: -32602 });
    await assert.rejects(
      r.agentPeer.request(DRAFT_METHODS.clientToServerRequest, { url: r.key, message: { jsonrpc: "2.0", method: "x" } }),
      (e: RpcError) => e.code === -32602,
    );
    // The provider answers only client_to_server envelopes.
    await assert.rejects(r.agentPeer.request(DRAFT_METHODS.serverToClientRequest, { url: r.key, message: inner }), { name: "RpcError", code: -32601 });
    // The agent side refuses server_to_client envelopes for tunnels it never opened.
    await assert.rejects(
      r.providerPeer.request(DRAFT_METHODS.serverToClientRequest, { url: "acp:other", message: inner }),
      (e: RpcError) => e.code === -32002 && (e.data as { url: string }).url === "acp:other",
    );
    await r.agentPeer.notify(DRAFT_METHODS.clientToServerNotification, { url: "acp:nobody", message: { jsonrpc: "2.0", method: "n" } });
    await until(() => r.providerErrors.length > 0, "the provider to refuse the notification");
    assert.match(r.providerErrors[0]!.message, /no MCP server is declared at acp:nobody/);

    // McpClient through an undeclared key: the handshake fails with the same code.
    const client = new McpClient();
    await assert.rejects(client.connect(r.router.open("acp:nobody")), { name: "RpcError", code: -32002 });
    await r.close();
  });

  test("a second initialize on a key starts a fresh MCP session; release ends it", async () => {
    const r = await rig();
    const first = new McpClient();
    await first.connect(r.router.open(r.key));
    await first.close();
    const second = new McpClient();
    await second.connect(r.router.open(r.key));
    assert.equal((await second.callTool("add", { a: 2, b: 3 })).content[0]!.type, "text");
    assert.equal(r.server.sessions.size, 1, "the first MCP session was closed when the second began");
    await r.provider.release(r.key);
    assert.equal(r.server.sessions.size, 0);
    assert.equal(r.provider.owns(r.key), false);
    await assert.rejects(second.listTools(), { name: "RpcError", code: -32002 });
    await second.close();
    await r.close();
  });

  test("closing the router closes its tunnels with the reason, and the client sees the end", async () => {
    const r = await rig();
    const client = new McpClient();
    const ended: (Error | undefined)[] = [];
    client.on("close", (reason) => ended.push(reason));
    await client.connect(r.router.open(r.key));
    await r.router.close(new BridgeError("CLOSED", "ACP connection ended"));
    assert.equal(ended.length, 1);
    assert.match(String(ended[0]?.message), /ACP connection ended/);
    assert.throws(() => r.router.open(r.key), { name: "BridgeError", code: "CLOSED" });
    await r.close();
  });
});
