/**
 * The conductor in one process: the editor and a fake agent are JsonRpcPeers on in-memory
 * transports; the provider is the echo server. Covers the session/new rewrite for agents with
 * and without the capability, routing of `_mcp/*` envelopes, teardown, and plain forwarding
 * (errors, cancellation) of everything else.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { AcpTunnelRouter } from "../../src/acp/acp-tunnel-router.ts";
import { Conductor, type ConductorEvent } from "../../src/acp/conductor.ts";
import { McpProvider } from "../../src/acp/mcp-provider.ts";
import { SHIM_TOKEN_ENV } from "../../src/acp/shim.ts";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { JsonRpcPeer, type PeerOptions } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { TcpClientTransport } from "../../src/transport/tcp.ts";
import { until } from "../helpers/wait.ts";

const ACP_PEER: PeerOptions = { cancelMethod: "$/cancel_request", cancelParams: (id) => ({ requestId: id }), progressMethod: null };

type Server = Record<string, unknown>;

async function rig(options: { capable: boolean; failNewSession?: boolean }) {
  const [editorEnd, conductorEditorEnd] = InMemoryTransport.createLinkedPair();
  const [conductorAgentEnd, agentEnd] = InMemoryTransport.createLinkedPair();
  const editor = new JsonRpcPeer(editorEnd, ACP_PEER);
  const agent = new JsonRpcPeer(agentEnd, ACP_PEER);
  const seen: { newSession: Server[][]; notifications: string[]; cancelled: string[] } = { newSession: [], notifications: [], cancelled: [] };
  agent.setRequestHandler("initialize", () => ({
    protocolVersion: 1,
    agentCapabilities: options.capable ? { _meta: { mcp_acp_transport: true } } : { loadSession: true },
  }));
  agent.setRequestHandler("session/new", (p) => {
    seen.newSession.push((p as { mcpServers: Server[] }).mcpServers);
    if (options.failNewSession) throw new RpcError(-32602, "Invalid params: bad cwd", { field: "cwd" });
    return { sessionId: `s${seen.newSession.length}` };
  });
  agent.setRequestHandler("session/close", () => ({}));
  agent.setRequestHandler("session/load", (p) => {
    seen.newSession.push((p as { mcpServers: Server[] }).mcpServers);
    return {};
  });
  let markSlow!: () => void;
  const slowStarted = new Promise<void>((resolve) => (markSlow = resolve));
  agent.setRequestHandler("slow", (_p, ctx) => {
    markSlow();
    return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => {
      seen.cancelled.push("slow");
      reject(new Error("cancelled"));
    }));
  });
  agent.setRequestHandler("fails", () => {
    throw new RpcError(-32002, "Resource not found: session", { sessionId: "zz" });
  });
  agent.fallbackNotificationHandler = (method) => void seen.notifications.push(method);
  const router = new AcpTunnelRouter({ link: agent, side: "client" });
  router.serve(agent);

  const server = createEchoServer();
  const provider = new McpProvider({ name: "tools", server });
  const events: ConductorEvent[] = [];
  const conductor = new Conductor({
    agent: conductorAgentEnd,
    providers: [provider],
    shimCommand: (port) => ({ command: "/opt/shim", args: ["shim", String(port)] }),
    onEvent: (e) => events.push(e),
  });
  await agent.start();
  await conductor.start(conductorEditorEnd);
  await editor.start();
  const initialized = await editor.request<{ agentCapabilities: Record<string, unknown> }>("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return {
    initialized,
    editor,
    agent,
    router,
    provider,
    server,
    conductor,
    events,
    seen,
    slowStarted,
    async close() {
      await conductor.close();
      await server.close();
    },
  };
}

describe("conductor, agent with the capability", { timeout: 60_000 }, () => {
  test("providers are declared in the draft binding's shape and reached through _mcp envelopes", async () => {
    const r = await rig({ capable: true });
    assert.equal(r.conductor.agentSupportsMcpOverAcp, true);
    assert.deepEqual(r.initialized.agentCapabilities, { _meta: { mcp_acp_transport: true } });
    const fs = { name: "fs", command: "x", args: [], env: [] };
    const { sessionId } = await r.editor.request<{ sessionId: string }>("session/new", { cwd: "/", mcpServers: [fs] });
    assert.equal(sessionId, "s1");
    const [given] = r.seen.newSession;
    assert.deepEqual(given![0], fs, "the editor's own servers pass untouched");
    const decl = given![1] as { name: string; transport: string; url: string; headers: object };
    assert.deepEqual({ ...decl, url: "" }, { name: "tools", transport: "http", url: "", headers: {} });
    assert.match(decl.url, /^acp:/);

    const client = new McpClient();
    await client.connect(r.router.open(decl.url));
    assert.deepEqual((await client.callTool("echo", { text: "via conductor" })).content, [{ type: "text", text: "via conductor" }]);
    await assert.rejects(
      r.agent.request("_mcp/client_to_server/request", { url: "acp:unknown", message: { jsonrpc: "2.0", id: 9, method: "ping" } }),
      (e: RpcError) => e.code === -32002 && (e.data as { url: string }).url === "acp:unknown",
    );

    await r.editor.request("session/close", { sessionId });
    assert.deepEqual(r.provider.keys(), [], "the session's declaration was released");
    assert.ok(r.events.some((e) => e.type === "session-ended" && e.sessionId === "s1"));
    await assert.rejects(client.listTools(), { name: "RpcError", code: -32002 });
    await client.close();
    await r.close();
  });

  test("an acp: server the editor declares is routed to the editor", async () => {
    const r = await rig({ capable: true });
    r.editor.setRequestHandler("_mcp/client_to_server/request", (p) => {
      const { url, message } = p as { url: string; message: { id: number } };
      return { message: { jsonrpc: "2.0", id: message.id, result: { answeredBy: "editor", url } } };
    });
    const mine = { name: "ed", transport: "http", url: "acp:editor-1", headers: {} };
    await r.editor.request("session/new", { cwd: "/", mcpServers: [mine] });
    assert.deepEqual(r.seen.newSession[0]![0], mine);
    const ping = { url: "acp:editor-1", message: { jsonrpc: "2.0", id: 3, method: "ping" } };
    const expected = { message: { jsonrpc: "2.0", id: 3, result: { answeredBy: "editor", url: "acp:editor-1" } } };
    assert.deepEqual(await r.agent.request("_mcp/client_to_server/request", ping), expected);
    // Loading the session again with the same url replaces the old session's parts, not the route.
    await r.editor.request("session/load", { sessionId: "s1", cwd: "/", mcpServers: [mine] });
    assert.equal(r.provider.keys().length, 1, "the first declaration was released, the new one is live");
    assert.deepEqual(await r.agent.request("_mcp/client_to_server/request", ping), expected);
    await r.editor.request("session/close", { sessionId: "s1" });
    await assert.rejects(r.agent.request("_mcp/client_to_server/request", ping), { name: "RpcError", code: -32002 });
    await r.close();
  });

  test("a $/cancel_request for an MCP-over-ACP request is answered -32800 and reaches the server's side", async () => {
    const r = await rig({ capable: true });
    let editorSignal: AbortSignal | undefined;
    r.editor.setRequestHandler("_mcp/client_to_server/request", (_p, ctx) => ((editorSignal = ctx.signal), new Promise(() => {})));
    await r.editor.request("session/new", { cwd: "/", mcpServers: [{ name: "ed", transport: "http", url: "acp:editor-1", headers: {} }] });
    // The agent's first request of its own, so id 1; sent by hand, the agent waits for an answer.
    const call = r.agent.request("_mcp/client_to_server/request", { url: "acp:editor-1", message: { jsonrpc: "2.0", id: 3, method: "ping" } });
    const answered = assert.rejects(call, { code: -32800, message: "Request cancelled", data: { requestId: 1 } });
    await until(() => editorSignal !== undefined, "the editor's handler to start");
    await r.agent.notify("$/cancel_request", { requestId: 1 });
    await until(() => editorSignal?.aborted === true, "the editor's handler to be cancelled through its own $/cancel_request");
    await answered;
    await r.close();
  });
});

describe("conductor, agent without the capability", { timeout: 60_000 }, () => {
  test("acp: declarations become shim stdio entries with a one-time token; session/close closes it all", async () => {
    const r = await rig({ capable: false });
    assert.equal(r.conductor.agentSupportsMcpOverAcp, false);
    assert.deepEqual(r.initialized.agentCapabilities, { loadSession: true, _meta: { mcp_acp_transport: true } }, "the conductor announces what its bridge adds");
    const { sessionId } = await r.editor.request<{ sessionId: string }>("session/new", {
      cwd: "/",
      mcpServers: [{ name: "ed", transport: "http", url: "acp:editor-1", headers: {} }],
    });
    const [edEntry, toolsEntry] = r.seen.newSession[0] as { name: string; command: string; args: string[]; env: { name: string; value: string }[] }[];
    for (const [entry, name] of [[edEntry!, "ed"], [toolsEntry!, "tools"]] as const) {
      assert.equal(entry.name, name);
      assert.equal(entry.command, "/opt/shim");
      assert.equal(entry.args[0], "shim");
      assert.equal(entry.env.length, 1);
      assert.equal(entry.env[0]!.name, SHIM_TOKEN_ENV);
      assert.match(entry.env[0]!.value, /^[0-9a-f]{64}$/);
    }
    assert.notEqual(edEntry!.env[0]!.value, toolsEntry!.env[0]!.value, "each listener has its own token");

    // Play the shim: connect with the token and speak MCP.
    const port = Number(toolsEntry!.args[1]);
    const tcp = new TcpClientTransport({ port, greeting: { token: toolsEntry!.env[0]!.value } });
    const client = new McpClient();
    const ended = new Promise<unknown>((resolve) => client.on("close", resolve));
    await client.connect(tcp);
    assert.deepEqual((await client.callTool("add", { a: 1, b: 2 })).content, [{ type: "text", text: "3" }]);
    assert.ok(r.events.some((e) => e.type === "shim-connected" && e.server === "tools"));

    await r.editor.request("session/close", { sessionId });
    await ended;
    assert.deepEqual(r.provider.keys(), []);
    for (const p of [port, Number(edEntry!.args[1])]) {
      const refused = await new Promise<string | undefined>((resolve) => {
        const s = connect({ port: p, host: "127.0.0.1" });
        s.on("connect", () => {
          s.destroy();
          resolve(undefined);
        });
        s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code));
      });
      assert.equal(refused, "ECONNREFUSED", `port ${p} is closed after the session`);
    }
    await client.close();
    await r.close();
  });

  test("a failed session/new passes the agent's error through and releases what was prepared", async () => {
    const r = await rig({ capable: false, failNewSession: true });
    await assert.rejects(
      r.editor.request("session/new", { cwd: "relative", mcpServers: [] }),
      (e: RpcError) => e.code === -32602 && (e.data as { field: string }).field === "cwd",
    );
    assert.deepEqual(r.provider.keys(), []);
    const port = Number((r.seen.newSession[0]![0] as { args: string[] }).args[1]);
    const code = await new Promise<string | undefined>((resolve) => {
      const s = connect({ port, host: "127.0.0.1" });
      s.on("connect", () => {
        s.destroy();
        resolve(undefined);
      });
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code));
    });
    assert.equal(code, "ECONNREFUSED");
    await r.close();
  });
});

describe("conductor forwarding", { timeout: 60_000 }, () => {
  test("other requests and notifications pass both ways; errors keep code and data; cancels are translated", async () => {
    const r = await rig({ capable: false });
    r.editor.setRequestHandler("session/request_permission", () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }));
    const answer = await r.agent.request("session/request_permission", { sessionId: "s", toolCall: { toolCallId: "t" }, options: [] });
    assert.deepEqual(answer, { outcome: { outcome: "selected", optionId: "allow_once" } });
    await assert.rejects(r.editor.request("fails", {}), { name: "RpcError", code: -32002, data: { sessionId: "zz" } });
    await assert.rejects(r.editor.request("no/such/method", {}), { name: "RpcError", code: -32601 });

    await r.editor.notify("session/cancel", { sessionId: "s1" });
    const controller = new AbortController();
    const slow = r.editor.request("slow", {}, { signal: controller.signal });
    await r.slowStarted;
    controller.abort();
    await assert.rejects(slow);
    await until(() => r.seen.cancelled.length > 0, "the agent's handler to be cancelled");
    assert.deepEqual(r.seen.cancelled, ["slow"], "the agent's handler was cancelled through $/cancel_request");
    assert.ok(r.seen.notifications.includes("session/cancel"));
    await r.close();
  });

  test("a $/cancel_request from the editor is answered -32800 by the conductor's peer and cancels the forwarded request", async () => {
    const r = await rig({ capable: false });
    // Sent by hand, as the ACP SDK does: the editor waits for an answer. Its requests so far:
    // 1 (initialize), so this one is 2.
    const slow = r.editor.request("slow", {});
    await r.slowStarted;
    await r.editor.notify("$/cancel_request", { requestId: 2 });
    await assert.rejects(slow, { code: -32800, message: "Request cancelled", data: { requestId: 2 } });
    await until(() => r.seen.cancelled.length > 0, "the agent's handler to be cancelled");
    assert.deepEqual(r.seen.cancelled, ["slow"], "the agent's handler was cancelled through its own $/cancel_request");
    await r.close();
  });
});
