/** AcpAgentConnection over the in-memory pair: negotiation, params, cancellation, extensions. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { AcpAgentConnection, negotiateAcpVersion, sessionNotFound, type Agent, type AcpRequestContext } from "../../src/acp/connection.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import type { CancelNotification, PromptRequest } from "../../src/acp/types.ts";
import { pair, rpcError } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

/** A small agent that records what reached it. */
function recorder(overrides: Partial<Agent> = {}) {
  const seen: { method: string; params: unknown }[] = [];
  const agent: Agent = {
    initialize: (p) => (seen.push({ method: "initialize", params: p }), { agentCapabilities: { loadSession: false } }),
    newSession: (p) => (seen.push({ method: "session/new", params: p }), { sessionId: "s1" }),
    prompt: (p: PromptRequest) => (seen.push({ method: "session/prompt", params: p }), { stopReason: "end_turn" }),
    cancel: (p: CancelNotification) => void seen.push({ method: "session/cancel", params: p }),
    ...overrides,
  };
  return { agent, seen };
}

const init = { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } }, clientInfo: { name: "ed", version: "1" } };

test("initialize echoes a supported version, answers 1 to any other, and refuses a non-integer", async () => {
  const { agent, seen } = recorder();
  const p = await pair(agent);
  try {
    const first = await p.editor.request<{ protocolVersion: number; agentCapabilities: unknown }>("initialize", init);
    assert.deepEqual(first, { agentCapabilities: { loadSession: false }, protocolVersion: 1 });
    assert.equal(p.connection.protocolVersion, 1);
    assert.deepEqual(p.connection.clientCapabilities, { fs: { readTextFile: true } });
    assert.deepEqual(p.connection.clientInfo, { name: "ed", version: "1" });
    assert.equal((await p.editor.request<{ protocolVersion: number }>("initialize", { protocolVersion: 99 })).protocolVersion, 1);
    assert.equal((await p.editor.request<{ protocolVersion: number }>("initialize", { protocolVersion: 0 })).protocolVersion, 1);
    for (const bad of ["1", 1.5, -1, 70000, null]) {
      assert.equal((await rpcError(p.editor.request("initialize", { protocolVersion: bad }))).code, -32602, `version ${String(bad)}`);
    }
    assert.equal((await rpcError(p.editor.request("initialize", {}))).code, -32602);
    assert.equal(seen.filter((s) => s.method === "initialize").length, 3);
    assert.equal(negotiateAcpVersion(1), 1);
    assert.equal(negotiateAcpVersion(2), 1);
  } finally {
    await p.close();
  }
});

test("session methods before initialize get -32600; session/cancel before it is ignored", async () => {
  const { agent, seen } = recorder();
  const p = await pair(agent);
  try {
    const err = await rpcError(p.editor.request("session/new", { cwd: "/tmp", mcpServers: [] }));
    assert.equal(err.code, -32600);
    assert.match(err.message, /initialize/);
    await p.editor.notify("session/cancel", { sessionId: "s1" });
    // Pipelined behind initialize, without waiting for its answer: accepted.
    const [, created] = await Promise.all([p.editor.request("initialize", init), p.editor.request("session/new", { cwd: "/tmp", mcpServers: [] })]);
    assert.deepEqual(created, { sessionId: "s1" });
    assert.deepEqual(seen.map((s) => s.method), ["initialize", "session/new"]);
  } finally {
    await p.close();
  }
});

test("malformed params get -32602 naming the field; absent optional methods and unknown ones -32601", async () => {
  const { agent, seen } = recorder();
  const p = await pair(agent);
  try {
    await p.editor.request("initialize", init);
    const cases: [string, unknown, RegExp][] = [
      ["session/new", { mcpServers: [] }, /cwd/],
      ["session/new", { cwd: "relative/dir", mcpServers: [] }, /absolute/],
      ["session/new", { cwd: "/tmp" }, /mcpServers must be an array \(it is required\)/],
      ["session/new", { cwd: "/tmp", mcpServers: {} }, /mcpServers/],
      ["session/prompt", { sessionId: "s1" }, /prompt/],
      ["session/prompt", { sessionId: "s1", prompt: ["hi"] }, /prompt\[0\]/],
      ["session/prompt", { prompt: [] }, /sessionId/],
      ["session/new", [1, 2], /params must be an object/],
    ];
    for (const [method, params, message] of cases) {
      const err = await rpcError(p.editor.request(method, params as Record<string, unknown>));
      assert.equal(err.code, -32602, `${method} ${JSON.stringify(params)}`);
      assert.match(err.message, message);
    }
    // null mcpServers means none (the schema's default-on-null).
    assert.deepEqual(await p.editor.request("session/new", { cwd: "C:\\work", mcpServers: null }), { sessionId: "s1" });
    assert.deepEqual((seen.at(-1)!.params as { mcpServers: unknown }).mcpServers, []);
    for (const method of ["session/load", "session/resume", "session/close", "session/fly", "_unknown/ext"]) {
      const err = await rpcError(p.editor.request(method, { sessionId: "s1", cwd: "/tmp", mcpServers: [] }));
      assert.equal(err.code, -32601, method);
      assert.deepEqual(err.data, { method });
    }
  } finally {
    await p.close();
  }
});

test("$/cancel_request answers the request at once with -32800 and aborts its handler's signal", async () => {
  let signal: AbortSignal | undefined;
  const { agent } = recorder({
    prompt: (_p, ctx: AcpRequestContext) => {
      signal = ctx.signal;
      return new Promise(() => {}); // never answers by itself
    },
  });
  const p = await pair(agent);
  try {
    await p.editor.request("initialize", init);
    const controller = new AbortController();
    const pending = p.editor.request("session/prompt", { sessionId: "s1", prompt: [] }, { signal: controller.signal });
    await until(() => signal !== undefined, "the handler to start");
    // The editor peer gives up locally and sends $/cancel_request; the answer that comes back
    // is -32800 (counted as a late response by the editor peer).
    controller.abort();
    await assert.rejects(pending, { code: "CANCELLED" });
    await until(() => signal!.aborted, "the handler's signal to abort");
    await until(() => p.editor.stats.lateResponses === 1, "the -32800 answer");
  } finally {
    await p.close();
  }
});

test("a cancelled request is answered -32800 even when the requester keeps waiting", async () => {
  let started = false;
  const { agent } = recorder({
    newSession: () => {
      started = true;
      return new Promise(() => {});
    },
  });
  const p = await pair(agent);
  try {
    await p.editor.request("initialize", init);
    // Sent by hand, as the ACP SDK does: the id is known, and the requester waits for an answer.
    const answer = p.editor.request("session/new", { cwd: "/tmp", mcpServers: [] });
    await until(() => started, "the handler to start");
    // The editor peer numbered its requests 1 (initialize) and 2 (session/new).
    await p.editor.notify("$/cancel_request", { requestId: 2 });
    const err = await rpcError(answer);
    assert.equal(err.code, -32800);
    assert.deepEqual(err.data, { requestId: 2 });
    // Cancelling an id that is not running changes nothing.
    await p.editor.notify("$/cancel_request", { requestId: 77 });
    assert.deepEqual(await p.editor.request("initialize", init), { agentCapabilities: { loadSession: false }, protocolVersion: 1 });
  } finally {
    await p.close();
  }
});

test("$/cancel_request is answered by the peer (cancelledReply): exactly -32800, before what follows it, signal unread", async () => {
  const [agentSide, raw] = InMemoryTransport.createLinkedPair();
  const connection = new AcpAgentConnection(recorder().agent, { transport: agentSide });
  connection.setRequestHandler("_x/wait", () => new Promise(() => {})); // never reads ctx.signal
  connection.setRequestHandler("_x/ping", () => ({ pong: true }));
  const got: unknown[] = [];
  const waiters: (() => void)[] = [];
  raw.onmessage = (m) => (got.push(m), waiters.splice(0).forEach((w) => w()));
  const replyTo = async (id: number) => {
    while (!got.some((m) => (m as { id?: unknown }).id === id)) await new Promise<void>((r) => waiters.push(r));
  };
  await connection.start();
  try {
    const send = (m: unknown) => raw.send(m as JsonRpcMessage);
    await send({ jsonrpc: "2.0", id: 1, method: "initialize", params: init });
    await replyTo(1);
    got.length = 0;
    await send({ jsonrpc: "2.0", id: 2, method: "_x/wait", params: {} });
    await send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } });
    await send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } });
    // The cancelled id is free again at once: the answer ended that request.
    await send({ jsonrpc: "2.0", id: 2, method: "_x/ping", params: {} });
    await send({ jsonrpc: "2.0", id: 3, method: "_x/ping", params: {} });
    await replyTo(3);
    assert.deepEqual(got, [
      { jsonrpc: "2.0", id: 2, error: { code: -32800, message: "Request cancelled", data: { requestId: 2 } } },
      { jsonrpc: "2.0", id: 2, result: { pong: true } },
      { jsonrpc: "2.0", id: 3, result: { pong: true } },
    ]);
  } finally {
    await connection.close();
  }
});

test("session/cancel reaches the agent; a malformed one is dropped; errors thrown by the agent go back as-is", async () => {
  const { agent, seen } = recorder({
    closeSession: (params) => {
      throw sessionNotFound(params.sessionId);
    },
    loadSession: () => {
      throw new Error("disk on fire");
    },
  });
  const p = await pair(agent);
  try {
    await p.editor.request("initialize", init);
    await p.editor.notify("session/cancel", { sessionId: "s1" });
    await p.editor.notify("session/cancel", {});
    await until(() => seen.some((s) => s.method === "session/cancel"), "session/cancel to reach the agent");
    await p.editor.request("initialize", init); // a round trip: the malformed cancel was handled by now
    assert.deepEqual(seen.filter((s) => s.method === "session/cancel").map((s) => s.params), [{ sessionId: "s1" }]);
    const notFound = await rpcError(p.editor.request("session/close", { sessionId: "gone" }));
    assert.equal(notFound.code, -32002);
    assert.deepEqual(notFound.data, { sessionId: "gone" });
    const internal = await rpcError(p.editor.request("session/load", { sessionId: "s1", cwd: "/tmp", mcpServers: [] }));
    assert.equal(internal.code, -32603);
    assert.equal(internal.message, "disk on fire");
  } finally {
    await p.close();
  }
});

test("extension methods: own handlers first, then onExtMethod / onExtNotification; and requests to the editor", async () => {
  const ext: unknown[] = [];
  const { agent } = recorder({
    onExtMethod: (method, params) => ({ via: "agent", method, params }),
    onExtNotification: (method, params) => void ext.push({ method, params }),
  });
  const p = await pair(agent);
  const forwarded: unknown[] = [];
  try {
    p.connection.setRequestHandler("_mcp/client_to_server/request", (params) => ({ message: { echoed: params } }));
    p.connection.setNotificationHandler("_mcp/client_to_server/notification", (params) => void forwarded.push(params));
    await p.editor.request("initialize", init);
    assert.deepEqual(await p.editor.request("_mcp/client_to_server/request", { url: "acp:1", message: { id: 1 } }), {
      message: { echoed: { url: "acp:1", message: { id: 1 } } },
    });
    assert.deepEqual(await p.editor.request("_vendor/thing", { a: 1 }), { via: "agent", method: "_vendor/thing", params: { a: 1 } });
    p.connection.removeRequestHandler("_mcp/client_to_server/request");
    assert.equal((await p.editor.request<{ via: string }>("_mcp/client_to_server/request", {})).via, "agent");
    await p.editor.notify("_mcp/client_to_server/notification", { url: "acp:1" });
    await p.editor.notify("_vendor/ping", { b: 2 });
    await until(() => forwarded.length === 1 && ext.length === 1, "the notification to be forwarded and the extension one to arrive");
    assert.deepEqual(ext, [{ method: "_vendor/ping", params: { b: 2 } }]);

    // The other direction: the agent's requests and notifications reach the editor.
    p.editor.setRequestHandler("_mcp/server_to_client/request", (params) => ({ message: params }));
    assert.deepEqual(await p.connection.request("_mcp/server_to_client/request", { url: "acp:1" }), { message: { url: "acp:1" } });
    await p.connection.notify("_mcp/server_to_client/notification", { url: "acp:1" });
    await until(() => p.notes.some((n) => n.method === "_mcp/server_to_client/notification"), "the _mcp/server_to_client/notification");
  } finally {
    await p.close();
  }
});

test("sessionUpdate and requestPermission reach the editor; an aborted question sends $/cancel_request", async () => {
  const { agent } = recorder();
  const p = await pair(agent);
  try {
    await p.editor.request("initialize", init);
    await p.connection.sessionUpdate("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } });
    await until(() => p.updates.length === 1, "the session update");
    assert.deepEqual(p.updates[0], { sessionId: "s1", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } } });

    const asked: unknown[] = [];
    const answers: unknown[] = [{ outcome: { outcome: "selected", optionId: "allow_once" } }, { outcome: "bogus" }];
    p.editor.setRequestHandler("session/request_permission", (params) => (asked.push(params), answers.shift()));
    const question = {
      sessionId: "s1",
      toolCall: { toolCallId: "call_1", title: "t" },
      options: [{ optionId: "allow_once", name: "Allow", kind: "allow_once" as const }],
    };
    assert.deepEqual(await p.connection.requestPermission(question), { outcome: { outcome: "selected", optionId: "allow_once" } });
    assert.deepEqual(asked[0], question);
    assert.deepEqual(await p.connection.requestPermission(question), { outcome: { outcome: "cancelled" } });

    p.editor.setRequestHandler("session/request_permission", () => new Promise(() => {}));
    const controller = new AbortController();
    const waiting = p.connection.requestPermission(question, { signal: controller.signal });
    controller.abort();
    await assert.rejects(waiting, { code: "CANCELLED" });
    await until(() => p.notes.some((n) => n.method === "$/cancel_request"), "$/cancel_request to reach the editor");
    assert.equal(typeof (p.notes.find((n) => n.method === "$/cancel_request")!.params as { requestId: unknown }).requestId, "number");
  } finally {
    await p.close();
  }
});

test("the end of the connection aborts running handlers, resolves `closed` and calls onclose; later updates are dropped", async () => {
  let signal: AbortSignal | undefined;
  const { agent } = recorder({ prompt: (_p, ctx) => ((signal = ctx.signal), new Promise(() => {})) });
  const logs: string[] = [];
  const p = await pair(agent, (line) => logs.push(line));
  let closedWith: unknown = "not called";
  p.connection.onclose = (reason) => (closedWith = reason);
  await p.editor.request("initialize", init);
  void p.editor.request("session/prompt", { sessionId: "s1", prompt: [] }).catch(() => undefined);
  await until(() => signal !== undefined, "the handler to start");
  await p.editor.close();
  await p.connection.closed;
  assert.equal(signal!.aborted, true);
  assert.equal(closedWith, undefined);
  await p.connection.sessionUpdate("s1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "late" } });
  assert.ok(logs.some((l) => l.includes("not sent")));
});
