/**
 * One error model: every local error class is a BridgeError built as
 * `(code, message, { cause, details })`, met here through the code path that raises it; API
 * misuse is `INVALID_STATE`; refusals are told apart from failures by their code.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createEchoServer } from "../fixtures/servers/echo.ts";
import { AcpTunnelRouter } from "../src/acp/acp-tunnel-router.ts";
import { Conductor } from "../src/acp/conductor.ts";
import { McpProvider } from "../src/acp/mcp-provider.ts";
import { AcpErrorCode } from "../src/acp/types.ts";
import { fromError } from "../src/bridge/failures.ts";
import { resolveSecrets, SecretError } from "../src/config/secrets.ts";
import { BridgeError, ErrorCode } from "../src/jsonrpc/errors.ts";
import { JsonRpcPeer } from "../src/jsonrpc/peer.ts";
import { McpManager } from "../src/manager/manager.ts";
import { ManagerError } from "../src/manager/resources.ts";
import { McpClient } from "../src/mcp/client.ts";
import { McpServer } from "../src/mcp/server.ts";
import { resolveWithin, PathError } from "../src/security/paths.ts";
import { PolicyError } from "../src/security/policy.ts";
import { checkUrl } from "../src/security/url.ts";
import { OAuthError } from "../src/auth/oauth-error.ts";
import { requireSafeUrl } from "../src/auth/http-fetch.ts";
import { AuthError } from "../src/transport/auth-error.ts";
import { InMemoryTransport } from "../src/transport/memory.ts";
import { StreamableHttpServer } from "../src/transport/http-server.ts";
import { SseServer } from "../src/transport/sse-server.ts";
import { CommandNotFoundError, resolveCommand } from "../src/transport/stdio.ts";
import { readFirstLine } from "../src/transport/tcp.ts";

/** What a thrown value is, as one object, so that a mismatch prints a diff. */
function shape(err: unknown): Record<string, unknown> {
  assert.ok(err instanceof BridgeError, `not a BridgeError: ${String(err)}`);
  return { base: true, name: err.name, code: err.code, message: err.message, details: err.details, cause: err.cause };
}

async function thrown(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  assert.fail("expected a throw");
}

describe("every local error class is a BridgeError (code, message, { cause, details })", () => {
  test("PolicyError: a refused URL", async () => {
    const err = await thrown(() => checkUrl("http://example.com/mcp", { server: "api" }));
    assert.ok(err instanceof PolicyError);
    assert.deepEqual(shape(err), {
      base: true,
      name: "PolicyError",
      code: "INSECURE_URL",
      message: (err as Error).message,
      details: { server: "api", host: "example.com" },
      cause: undefined,
    });
    assert.equal(err.server, "api");
    assert.match(err.message, /^server "api": /);
    const cause = new Error("underneath");
    assert.deepEqual(shape(new PolicyError("INVALID_ENV", "m", { cause, details: { server: "s" } })), {
      base: true, name: "PolicyError", code: "INVALID_ENV", message: "m", details: { server: "s" }, cause,
    });
  });

  test("PathError: a path that leaves its root", async () => {
    const root = await mkdtemp(join(tmpdir(), "error-model-"));
    try {
      const err = await thrown(() => resolveWithin(root, "../etc/passwd"));
      assert.ok(err instanceof PathError);
      assert.deepEqual(shape(err), {
        base: true,
        name: "PathError",
        code: "ESCAPES_ROOT",
        message: `path "../etc/passwd" leaves the root ${JSON.stringify(root)} through ".."; use a path inside it`,
        details: { path: "../etc/passwd", root },
        cause: undefined,
      });
      assert.deepEqual([err.path, err.root], ["../etc/passwd", root]);
      const missing = await thrown(() => resolveWithin(join(root, "nope"), "a"));
      assert.ok(missing instanceof PathError);
      assert.deepEqual([missing.code, (missing.cause as NodeJS.ErrnoException).code], ["ROOT_NOT_FOUND", "ENOENT"]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  test("SecretError: an unset variable", async () => {
    const err = await thrown(() => resolveSecrets({ name: "gh", transport: "stdio", command: "/bin/true", env: { T: "secret://env/MCP_BRIDGE_UNSET_FOR_TEST" } }));
    assert.ok(err instanceof SecretError);
    assert.deepEqual(shape(err), {
      base: true,
      name: "SecretError",
      code: "SECRET_UNRESOLVED",
      message: 'server "gh": env T: secret://env/MCP_BRIDGE_UNSET_FOR_TEST is not set',
      details: { reference: "secret://env/MCP_BRIDGE_UNSET_FOR_TEST", references: ["secret://env/MCP_BRIDGE_UNSET_FOR_TEST"] },
      cause: undefined,
    });
    assert.deepEqual(err.references, ["secret://env/MCP_BRIDGE_UNSET_FOR_TEST"]);
  });

  test("ManagerError: a resource read from a server the session does not have", async () => {
    const manager = new McpManager({ processGuard: false, rateLimit: false });
    try {
      const err = await thrown(() => manager.readResource("ghost", "file:///a"));
      assert.ok(err instanceof ManagerError);
      assert.deepEqual(shape(err), {
        base: true,
        name: "ManagerError",
        code: "UNKNOWN_SERVER",
        message: 'there is no server "ghost" in this session',
        details: { server: "ghost" },
        cause: undefined,
      });
      assert.equal(err.server, "ghost");
    } finally {
      await manager.close();
    }
  });

  test("CommandNotFoundError: a command on no PATH entry", async () => {
    const err = await thrown(() => resolveCommand("mcp-bridge-no-such-command", { cwd: "/", env: { PATH: "/nonexistent-dir" } }));
    assert.ok(err instanceof CommandNotFoundError);
    assert.deepEqual(shape(err), {
      base: true,
      name: "CommandNotFoundError",
      code: "COMMAND_NOT_FOUND",
      message: "mcp-bridge-no-such-command: not found",
      details: { command: "mcp-bridge-no-such-command" },
      cause: undefined,
    });
    assert.equal(err.errno, "ENOENT");
  });

  test("AuthError: a 401 with a Bearer challenge", () => {
    const err = AuthError.fromResponse(401, "https://api.example/mcp", 'Bearer scope="read"');
    const challenge = { scheme: "Bearer", params: { scope: "read" }, scope: "read" };
    assert.deepEqual(shape(err), {
      base: true,
      name: "AuthError",
      code: "AUTH_FAILED",
      message: err.message,
      details: { status: 401, url: "https://api.example/mcp", challenge, challenges: [{ scheme: "Bearer", params: { scope: "read" } }] },
      cause: undefined,
    });
    assert.deepEqual([err.status, err.challenge], [401, challenge]);
  });

  test("OAuthError: an OAuth step refused a URL, with the same code as AuthError and a reason", async () => {
    const err = await thrown(() => requireSafeUrl("http://as.example/token?secret=1", "token endpoint"));
    assert.ok(err instanceof OAuthError);
    assert.deepEqual(shape(err), {
      base: true,
      name: "OAuthError",
      code: "AUTH_FAILED",
      message: "token endpoint http://as.example/token must use https (http only to a loopback host)",
      details: { url: "http://as.example/token", reason: "INSECURE_URL" },
      cause: undefined,
    });
    assert.equal(err.reason, "INSECURE_URL");
  });
});

describe("refusals are told apart from failures by their code", () => {
  test("a PolicyError reaching the bridge is a local failure, not a malformed reply of the server", () => {
    const refused = new PolicyError("COMMAND_NOT_ALLOWED", 'server "fs" is untrusted: ...', { details: { server: "fs" } });
    const result = fromError(refused, { server: "fs", tool: "read" });
    assert.deepEqual(result.failure, { kind: "internal", retryable: false });
    assert.deepEqual(fromError(new BridgeError("PARSE_ERROR", "x"), { server: "fs", tool: "read" }).failure, { kind: "protocol", retryable: false });
  });
});

describe("API misuse is INVALID_STATE", () => {
  test("McpClient.connect twice", async () => {
    const server = createEchoServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new McpClient();
    await server.connect(a);
    await client.connect(b);
    try {
      const [c] = InMemoryTransport.createLinkedPair();
      await assert.rejects(client.connect(c), { name: "BridgeError", code: "INVALID_STATE", message: /already connected/ });
    } finally {
      await client.close();
      await server.close();
    }
  });

  test("registering a tool name twice", () => {
    const server = new McpServer({ name: "s", version: "1" });
    const def = { name: "x", inputSchema: { type: "object" as const } };
    server.tool(def, () => ({ content: [] }));
    assert.throws(() => server.tool(def, () => ({ content: [] })), {
      name: "BridgeError",
      code: "INVALID_STATE",
      message: 'tool "x" is already registered (remove it first)',
      details: { kind: "tool", key: "x" },
    });
  });

  test("McpProvider.attach twice, and declaring before attach", async () => {
    const [a] = InMemoryTransport.createLinkedPair();
    const peer = new JsonRpcPeer(a);
    const unattached = new McpProvider({ name: "tools", server: createEchoServer() });
    await assert.rejects(unattached.declare(), { code: "INVALID_STATE", message: /attach\(\) a link before declaring/ });
    const provider = new McpProvider({ name: "tools", server: createEchoServer() });
    provider.attach(peer);
    assert.throws(() => provider.attach(peer), { name: "BridgeError", code: "INVALID_STATE", message: 'provider "tools": attach() called twice' });
  });

  test("a second tunnel for one key, and a tunnel started twice", async () => {
    const [a] = InMemoryTransport.createLinkedPair();
    const router = new AcpTunnelRouter({ link: new JsonRpcPeer(a), side: "client" });
    const tunnel = router.open("acp:k");
    await tunnel.start();
    await assert.rejects(tunnel.start(), { name: "BridgeError", code: "INVALID_STATE", message: /start\(\) called twice/ });
    assert.throws(() => router.open("acp:k"), { name: "BridgeError", code: "INVALID_STATE", message: /a tunnel for acp:k is already open/ });
    await router.close();
  });

  test("Conductor.start twice", async () => {
    const [agentEnd, agentPeerEnd] = InMemoryTransport.createLinkedPair();
    const agent = new JsonRpcPeer(agentPeerEnd);
    await agent.start();
    const conductor = new Conductor({ agent: agentEnd, providers: [] });
    const [editorEnd] = InMemoryTransport.createLinkedPair();
    await conductor.start(editorEnd);
    try {
      const [other] = InMemoryTransport.createLinkedPair();
      await assert.rejects(conductor.start(other), { name: "BridgeError", code: "INVALID_STATE", message: /start\(\) called twice/ });
    } finally {
      await conductor.close();
      await agent.close();
    }
  });

  test("SseServer.listen twice", async () => {
    const sse = new SseServer({ onSession: () => {} });
    await sse.listen(0, "127.0.0.1");
    try {
      await assert.rejects(sse.listen(0, "127.0.0.1"), { name: "BridgeError", code: "INVALID_STATE", message: /listen\(\) called twice/ });
    } finally {
      await sse.close();
    }
  });

  test("StreamableHttpServer.listen twice", async () => {
    const http = new StreamableHttpServer({ onSession: () => {} });
    await http.listen(0, "127.0.0.1");
    try {
      await assert.rejects(http.listen(0, "127.0.0.1"), { name: "BridgeError", code: "INVALID_STATE", message: "StreamableHttpServer: listen() called twice" });
    } finally {
      await http.close();
    }
  });
});

describe("a TCP greeting that cannot be read is a typed error", () => {
  async function greet(send: (client: Socket) => void, options = { maxBytes: 16, timeoutMs: 10_000 }): Promise<unknown> {
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const client = connect(port, "127.0.0.1");
    const socket = await accepted;
    try {
      send(client);
      return await thrown(() => readFirstLine(socket, options));
    } finally {
      client.destroy();
      socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  test("too long, not UTF-8, ended early", async () => {
    assert.deepEqual(shape(await greet((c) => c.write("x".repeat(40)))), {
      base: true, name: "BridgeError", code: "LIMIT_EXCEEDED", message: "greeting longer than 16 bytes", details: { maxBytes: 16 }, cause: undefined,
    });
    assert.equal((shape(await greet((c) => c.write(Buffer.from([0xff, 0x0a])))) as { code: string }).code, "INVALID_UTF8");
    assert.equal((shape(await greet((c) => c.end("abc"))) as { code: string }).code, "CLOSED");
  });
});

test("wire codes come from one table: ACP's names are the shared ErrorCode", () => {
  assert.equal(AcpErrorCode, ErrorCode);
  assert.deepEqual([ErrorCode.RequestCancelled, ErrorCode.AuthRequired, ErrorCode.ServerError], [-32800, -32000, -32000]);
});
