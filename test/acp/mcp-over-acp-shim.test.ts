/**
 * The shim and its listener with real sockets and a real `mcp-bridge shim` process: tokens are
 * checked (and single-use), a wrong one is closed without an answer, reaches nobody and makes
 * the shim exit 1, the right one is acknowledged, an MCP
 * client on the shim's stdio reaches a provider, and the shim exits when its bridge closes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { describe, test } from "node:test";
import { PassThrough } from "node:stream";
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { AcpTunnelRouter } from "../../src/acp/acp-tunnel-router.ts";
import type { AcpMessageLink } from "../../src/acp/acp-tunnel-transport.ts";
import { McpProvider } from "../../src/acp/mcp-provider.ts";
import { defaultShimCommand, runShim, SHIM_ACCEPTED, SHIM_TOKEN_ENV, ShimBridge, ShimListener, type ShimBridgeEvent } from "../../src/acp/shim.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { alive, reap, ROOT } from "../e2e/helpers.ts";
import { until } from "../helpers/wait.ts";

/** Connects, writes `lines`, and resolves with what came back once the socket closed (or the connect error). */
function knock(port: number, lines: string[]): Promise<{ received: string; error?: string }> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ port, host: "127.0.0.1" });
    let received = "";
    let error: string | undefined;
    socket.on("connect", () => socket.write(lines.join("")));
    socket.on("data", (d: Buffer) => (received += d.toString("utf8")));
    socket.on("error", (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on("close", () => resolve(error === undefined ? { received } : { received, error }));
  });
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "intruder", version: "1" } } })}\n`;

describe("ShimListener", { timeout: 60_000 }, () => {
  test("a wrong, missing or malformed token is closed without a byte; the right one is accepted once", async () => {
    const refused: string[] = [];
    const listener = await ShimListener.open({ onRefused: (r) => refused.push(r) });
    const accepted: string[] = [];
    listener.onconnection = (t) => {
      accepted.push("shim");
      void t.close();
    };
    assert.match(listener.token, /^[0-9a-f]{64}$/);
    assert.deepEqual(listener.env(), { [SHIM_TOKEN_ENV]: listener.token });

    const wrong = await knock(listener.port, [`${JSON.stringify({ token: "0".repeat(64) })}\n`, INITIALIZE]);
    const prefix = await knock(listener.port, [`${JSON.stringify({ token: listener.token.slice(0, 63) })}\n`]);
    const none = await knock(listener.port, ['{"hello":1}\n']);
    const junk = await knock(listener.port, ["not json at all\n"]);
    for (const r of [wrong, prefix, none, junk]) assert.equal(r.received, "", "a refused connection gets no answer");
    assert.deepEqual(refused, ["wrong token", "wrong token", "the greeting has no token", "the greeting is not JSON"]);
    assert.deepEqual(accepted, [], "nothing reached the conductor's side");
    assert.equal(listener.accepted, false);

    const right = await knock(listener.port, [`${JSON.stringify({ token: listener.token })}\n`]);
    assert.equal(right.received, `${JSON.stringify(SHIM_ACCEPTED)}\n`, "the accepted shim is told so before anything else");
    assert.deepEqual(accepted, ["shim"]);
    assert.equal(listener.accepted, true);
    // Single use: the listener stopped listening once its shim was in.
    const again = await knock(listener.port, [`${JSON.stringify({ token: listener.token })}\n`]);
    assert.equal(again.error, "ECONNREFUSED");
    assert.deepEqual(accepted, ["shim"]);
    await listener.close();
  });

  test("a connection that never greets is dropped after the greeting timeout", async () => {
    const refused: string[] = [];
    const listener = await ShimListener.open({ greetingTimeoutMs: 100, onRefused: (r) => refused.push(r) });
    const silent = await knock(listener.port, []);
    assert.equal(silent.received, "");
    assert.deepEqual(refused, ["no greeting within 100 ms"]);
    await listener.close();
  });
});

describe("the shim process", { timeout: 60_000 }, () => {
  /** A provider behind a ShimBridge, the way a conductor wires it. */
  async function bridgeRig() {
    const server = createEchoServer();
    const provider = new McpProvider({ name: "tools", server });
    const events: ShimBridgeEvent[] = [];
    const forwarded: string[] = [];
    const towardServers: AcpMessageLink = {
      request: (method, params, o) => {
        forwarded.push(method);
        return provider.handleRequest(method, params, o?.signal);
      },
      notify: async (method, params) => {
        forwarded.push(method);
        provider.handleNotification(method, params);
      },
    };
    const router = new AcpTunnelRouter({ link: towardServers, side: "client" });
    provider.attach({
      request: (method, params, o) => router.handleRequest(method, params, o?.signal),
      notify: async (method, params) => router.handleNotification(method, params),
    });
    const { key } = await provider.declare();
    const bridge = await ShimBridge.open({ key, server: "tools", router, onEvent: (e) => events.push(e) });
    return { server, provider, router, bridge, events, forwarded, key };
  }

  test("an MCP client on the shim's stdio reaches the provider; closing the bridge ends the shim", async () => {
    const r = await bridgeRig();
    const decl = r.bridge.declaration() as { name: string; command: string; args: string[]; env: { name: string; value: string }[] };
    assert.equal(decl.name, "tools");
    assert.deepEqual(decl.args.slice(-2), ["shim", String(r.bridge.port)]);
    assert.ok(!decl.args.join(" ").includes(decl.env[0]!.value), "the token is not on the command line");
    const transport = new StdioClientTransport({
      command: decl.command,
      args: decl.args,
      env: Object.fromEntries(decl.env.map((e) => [e.name, e.value])),
      cwd: ROOT,
      shutdownGraceMs: 500,
    });
    const client = new McpClient();
    try {
      await client.connect(transport);
      const result = await client.callTool("echo", { text: "via the shim" });
      assert.deepEqual(result.content, [{ type: "text", text: "via the shim" }]);
      assert.ok(r.events.some((e) => e.type === "shim-connected"));
      assert.ok(r.forwarded.includes("_mcp/client_to_server/request"));
      const closed = new Promise<Error | undefined>((resolve) => client.on("close", resolve));
      await r.bridge.close();
      await closed;
      await until(() => !alive(transport.pid), "the shim to exit");
      assert.equal(alive(transport.pid), false, "the shim exited when the conductor closed its connection");
    } finally {
      reap(transport.pid);
      await client.close();
      await r.provider.close();
      await r.server.close();
    }
  });

  test("a shim with a wrong token is refused, reaches no provider, and exits 1 saying so", async () => {
    const r = await bridgeRig();
    const { command, args } = defaultShimCommand(r.bridge.port);
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, [SHIM_TOKEN_ENV]: "f".repeat(64) }, stdio: ["pipe", "pipe", "pipe"] });
    try {
      let stderr = "";
      let stdout = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stdin.write(INITIALIZE);
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      assert.equal(code, 1, "a refused shim fails, so the agent reports the server as failed");
      assert.match(stderr, /the conductor refused this shim's token/);
      assert.equal(stdout, "", "nothing came back");
      assert.ok(r.events.some((e) => e.type === "shim-refused" && e.reason === "wrong token"));
      assert.deepEqual(r.forwarded, [], "the provider saw nothing");
      assert.equal(r.server.sessions.size, 1, "only the declared, never-initialized session exists");
    } finally {
      reap(child.pid);
      await r.bridge.close();
      await r.provider.close();
      await r.server.close();
    }
  });

  test("a listener that resets the connection instead of accepting is a refusal too (exit 1, same words)", async () => {
    // A listener that drops a socket with lines still unread resets it rather than closing it
    // (what ShimListener does to a wrong token when the shim has already forwarded stdin).
    const server = createServer((socket) => socket.once("data", () => socket.resetAndDestroy()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const log: string[] = [];
    try {
      const code = await runShim({ port, token: "f".repeat(64), stdin, stdout, log: (line) => log.push(line) });
      assert.deepEqual({ code, out: stdout.read() as Buffer | null }, { code: 1, out: null });
      assert.match(log.join("\n"), /^connection to the conductor failed: the conductor refused this shim's token \(wrong, or already used\): it closed the connection without accepting it \(.*ECONNRESET\)$/);
    } finally {
      stdin.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("without a token or a listener the shim fails clearly", async () => {
    const { command, args } = defaultShimCommand(1);
    const env = { ...process.env };
    delete env[SHIM_TOKEN_ENV];
    const noToken = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let err1 = "";
    noToken.stderr.on("data", (d: Buffer) => (err1 += d.toString()));
    assert.equal(await new Promise((resolve) => noToken.on("exit", resolve)), 2);
    assert.match(err1, /MCP_BRIDGE_SHIM_TOKEN is not set/);

    const listener = await ShimListener.open();
    const port = listener.port;
    await listener.close();
    const nobody = spawn(command, defaultShimCommand(port).args, { cwd: ROOT, env: { ...env, [SHIM_TOKEN_ENV]: "x" }, stdio: ["pipe", "pipe", "pipe"] });
    let err2 = "";
    nobody.stderr.on("data", (d: Buffer) => (err2 += d.toString()));
    assert.equal(await new Promise((resolve) => nobody.on("exit", resolve)), 1);
    assert.match(err2, new RegExp(`cannot reach the conductor: tcp 127\\.0\\.0\\.1:${port}: connect failed: .*ECONNREFUSED`));
    reap(noToken.pid);
    reap(nobody.pid);
  });
});
