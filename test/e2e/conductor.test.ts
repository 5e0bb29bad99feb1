/**
 * The conductor bridge with real processes: this test is the editor; the conductor is a child
 * (fixtures/acp/conductor-main.ts) hosting the provider "tools" (the echo server); the agent is
 * the reference agent (`mcp-bridge acp-agent`, which speaks MCP over ACP) or the same agent
 * playing one without that support (`--no-mcp-over-acp`). Every process started here is
 * checked gone.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { RpcError } from "../../src/jsonrpc/errors.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { alive, reap, ROOT } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

const agent = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["acp-agent"]);
const CAPABLE_AGENT = [agent.command, ...agent.args];
const INCAPABLE_AGENT = [...CAPABLE_AGENT, "--no-mcp-over-acp"];

type Event = { type: string; [key: string]: unknown };
type Update = { sessionUpdate: string; [key: string]: unknown };

/** Live (non-zombie) processes whose command line has `shim <port>`. */
function shimPids(port: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const at = args.indexOf("shim");
    if (at !== -1 && args[at + 1] === String(port) && alive(Number(entry))) out.push(Number(entry));
  }
  return out;
}

/** Connects to a port, sends `text`, resolves with what came back once closed (or the connect error). */
function knock(port: number, text: string): Promise<{ received: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let received = "";
    let error: string | undefined;
    socket.on("connect", () => socket.write(text));
    socket.on("data", (d: Buffer) => (received += d.toString()));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code));
    socket.on("close", () => resolve(error === undefined ? { received } : { received, error }));
  });
}

async function startConductor(agent: string[]) {
  const events: Event[] = [];
  const stderr: string[] = [];
  const updates: { sessionId: string; update: Update }[] = [];
  const transport = new StdioClientTransport({
    ...nodeModuleCommand(join(ROOT, "fixtures", "acp", "conductor-main.ts"), ["--", ...agent]),
    cwd: ROOT,
    inheritEnv: true,
    shutdownGraceMs: 3000,
    onStderr: (line) => {
      stderr.push(line);
      if (line.startsWith("conductor-event ")) events.push(JSON.parse(line.slice("conductor-event ".length)) as Event);
    },
  });
  const peer = new JsonRpcPeer(transport, {
    cancelMethod: "$/cancel_request",
    cancelParams: (id) => ({ requestId: id }),
    progressMethod: null,
    requestTimeoutMs: 30_000,
  });
  peer.setNotificationHandler("session/update", (p) => void updates.push(p as { sessionId: string; update: Update }));
  await peer.start();
  const c = {
    peer,
    transport,
    events,
    stderr,
    updates,
    event: (type: string) => events.find((e) => e.type === type),
    /**
     * The first event of `type` that `match` accepts, once it has come. Events travel on the
     * conductor's stderr, which is not ordered with its stdout: an answer read on stdout does
     * not mean the events written before it have been read yet.
     */
    async waitEvent(type: string, match: (e: Event) => boolean = () => true): Promise<Event> {
      const find = () => events.find((e) => e.type === type && match(e));
      await until(() => find() !== undefined, `the conductor event ${type}`);
      return find()!;
    },
    /** The inner methods the provider answered, in order, once `method` is among them. */
    async providerSaw(method: string): Promise<string[]> {
      await this.waitEvent("provider-request", (e) => e.method === method);
      return events.filter((e) => e.type === "provider-request").map((e) => String(e.method));
    },
    async prompt(sessionId: string, text: string) {
      const from = updates.length;
      const r = await peer.request<{ stopReason: string }>("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
      const mine = updates.slice(from).filter((u) => u.sessionId === sessionId).map((u) => u.update);
      const said = mine.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => (u.content as { text: string }).text).join("");
      return { stopReason: r.stopReason, updates: mine, said };
    },
    async initialize() {
      return peer.request<{ protocolVersion: number; agentCapabilities?: { _meta?: Record<string, unknown> } }>("initialize", {
        protocolVersion: 1,
        clientCapabilities: {},
        clientInfo: { name: "test-editor", version: "1.0.0" },
      });
    },
    async newSession() {
      return (await peer.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [] })).sessionId;
    },
    /** Ends the editor connection; the conductor then stops the agent and exits. */
    async close() {
      await peer.close();
    },
    diagnostics: () => stderr.join("\n"),
  };
  return c;
}

describe("conductor with an agent without MCP over ACP", { timeout: 120_000 }, () => {
  test("a tool call flows editor -> conductor -> agent -> shim -> TCP -> provider and back; teardown leaves nothing", async () => {
    const c = await startConductor(INCAPABLE_AGENT);
    let agentPid: number | undefined;
    let shims: number[] = [];
    try {
      const init = await c.initialize();
      assert.equal(init.protocolVersion, 1);
      // The agent lacks it, but with the conductor's bridge the pair serves acp: servers.
      assert.equal(init.agentCapabilities?._meta?.mcp_acp_transport, true);
      agentPid = (await c.waitEvent("started")).agentPid as number;
      assert.ok(alive(agentPid));
      assert.deepEqual(await c.waitEvent("agent-capability"), { type: "agent-capability", mcpOverAcp: false });

      const sessionId = await c.newSession();
      const listening = await c.waitEvent("bridge-listening");
      assert.equal(listening.server, "tools");
      const port = listening.port as number;
      await c.waitEvent("shim-connected");
      shims = shimPids(port);
      assert.equal(shims.length, 1, "one shim process runs for the provider");

      const listed = await c.prompt(sessionId, "/tools");
      assert.match(listed.said, /mcp__tools__echo/);
      const called = await c.prompt(sessionId, '/call mcp__tools__echo {"text":"hello over the bridge"}');
      assert.equal(called.stopReason, "end_turn");
      const kinds = called.updates.map((u) => `${u.sessionUpdate}:${String(u.status)}`);
      assert.deepEqual(kinds.filter((k) => k.startsWith("tool_call")), ["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"]);
      const done = called.updates.find((u) => u.status === "completed")!;
      assert.match(JSON.stringify(done.content), /hello over the bridge/);
      // The provider reports each request on stderr as it answers; wait for the call's report.
      const reached = await c.providerSaw("tools/call");
      // The connect reached it too: initialize, or server/discover in the stateless era.
      assert.ok(reached.includes("initialize") || reached.includes("server/discover"), `provider saw ${reached.join(", ")}`);

      // A wrong token gets nowhere: no answer, and the provider never hears of it.
      const wrong = await knock(port, `{"token":"${"0".repeat(64)}"}\n{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"intruder","version":"1"}}}\n`);
      assert.equal(wrong.received, "");
      assert.ok(!c.events.some((e) => e.type === "provider-request" && e.client === "intruder"));

      // An envelope for a url nobody declared is refused clearly.
      await assert.rejects(
        c.peer.request("_mcp/server_to_client/request", { url: "acp:nobody", message: { jsonrpc: "2.0", id: 1, method: "ping" } }),
        (e: RpcError) => e.code === -32002 && (e.data as { url: string }).url === "acp:nobody",
      );

      await c.peer.request("session/close", { sessionId });
      await c.waitEvent("session-ended");
      await until(() => shims.every((p) => !alive(p)), "the shim to exit after session/close");
      assert.deepEqual(shimPids(port), []);
      assert.ok(alive(agentPid), "closing a session does not stop the agent");

      const conductorPid = c.transport.pid;
      await c.close();
      await until(() => !alive(agentPid) && !alive(conductorPid), "the agent and the conductor to exit");
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- conductor stderr ---\n${c.diagnostics()}`, { cause: err });
    } finally {
      await c.close();
      for (const pid of [...shims, agentPid]) reap(pid);
    }
  });

  test("a crashed shim is reported and the session goes on; the editor leaving tears everything down", async () => {
    const c = await startConductor(INCAPABLE_AGENT);
    let agentPid: number | undefined;
    let port = 0;
    try {
      await c.initialize();
      const sessionId = await c.newSession();
      port = (await c.waitEvent("bridge-listening")).port as number;
      await c.waitEvent("shim-connected");
      agentPid = (await c.waitEvent("started")).agentPid as number;
      const listed = await c.prompt(sessionId, "/tools");
      assert.match(listed.said, /mcp__tools__echo/);
      const [shim] = shimPids(port);
      assert.ok(shim !== undefined);
      process.kill(shim, "SIGKILL");
      assert.equal((await c.waitEvent("shim-closed")).server, "tools");

      const after = await c.prompt(sessionId, "still here?");
      assert.equal(after.stopReason, "end_turn");
      assert.match(after.said, /still here\?/);

      const conductorPid = c.transport.pid;
      await c.close();
      await until(() => !alive(agentPid) && !alive(conductorPid), "the agent and the conductor to exit");
      await until(() => shimPids(port).length === 0, "every shim (restarted ones too) to be gone");
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- conductor stderr ---\n${c.diagnostics()}`, { cause: err });
    } finally {
      await c.close();
      reap(agentPid);
      for (const pid of shimPids(port)) reap(pid);
    }
  });
});

describe("conductor with an agent that speaks MCP over ACP", { timeout: 120_000 }, () => {
  test("the acp: declaration and the _mcp envelopes pass through; no shim is started", async () => {
    const c = await startConductor(CAPABLE_AGENT);
    let agentPid: number | undefined;
    try {
      const init = await c.initialize();
      assert.equal(init.agentCapabilities?._meta?.mcp_acp_transport, true);
      agentPid = (await c.waitEvent("started")).agentPid as number;
      assert.deepEqual(await c.waitEvent("agent-capability"), { type: "agent-capability", mcpOverAcp: true });
      const sessionId = await c.newSession();
      const called = await c.prompt(sessionId, '/call mcp__tools__add {"a":20,"b":22}');
      const done = called.updates.find((u) => u.status === "completed");
      assert.ok(done, `no completed tool call in ${JSON.stringify(called.updates)}`);
      assert.match(JSON.stringify(done.content), /42/);
      await c.providerSaw("tools/call");
      assert.equal(c.event("bridge-listening"), undefined, "no listener for a capable agent");
      await assert.rejects(
        c.peer.request("_mcp/server_to_client/request", { url: "acp:nobody", message: { jsonrpc: "2.0", id: 1, method: "ping" } }),
        (e: RpcError) => e.code === -32002 && (e.data as { url: string }).url === "acp:nobody",
      );
      await c.peer.request("session/close", { sessionId });
      await c.waitEvent("session-ended");
      const conductorPid = c.transport.pid;
      await c.close();
      await until(() => !alive(agentPid) && !alive(conductorPid), "the agent and the conductor to exit");
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- conductor stderr ---\n${c.diagnostics()}`, { cause: err });
    } finally {
      await c.close();
      reap(agentPid);
    }
  });
});
