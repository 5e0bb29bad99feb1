/**
 * A secret given as `secret://env/...` (in env and in headers) never shows up in anything the
 * manager emits or reports: events, logs, audit records, status, error results, thrown errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SecretResolvers } from "../../src/config/secrets.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { alive } from "./helpers.ts";
import { capture, fixtureConfig, nextState } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

const SECRET = "sk-live-7f3a9c2e5b1d4f60";
const resolvers = new SecretResolvers({ env: { MCPB_TEST_TOKEN: SECRET } });

test("an env secret reaches the server but not the logs, events, audit, status or results", async () => {
  const manager = new McpManager({ secretResolvers: resolvers, backoff: { baseMs: 20, capMs: 50 }, shutdownGraceMs: 500 });
  const events = capture(manager);
  const outputs: string[] = [];
  let pid: number | undefined;
  try {
    const config = fixtureConfig("vault", "faulty.ts", ["--print-env", "--stderr-echo", "--crash-after", "3"], {
      env: { API_TOKEN: "secret://env/MCPB_TEST_TOKEN" },
    });
    await manager.connect([config]);
    pid = manager.status()[0]!.pid;

    const env = await manager.callTool("mcp__vault__env", {});
    outputs.push(JSON.stringify(env));
    assert.equal(env.isError, false);
    assert.match(env.text, /"API_TOKEN":"\[REDACTED\]"/, "the child got the secret; the result shows it redacted");

    // The model passes the secret back in: the server prints it to stderr and echoes it.
    const echoed = await manager.callTool("mcp__vault__echo", { text: `token is ${SECRET}` });
    outputs.push(JSON.stringify(echoed));
    assert.equal(echoed.text, "token is [REDACTED]");
    await until(() => events.lines.some((l) => l.startsWith("log ") && l.includes("echo: token is [REDACTED]")), "the stderr line");

    // The third call crashes it; the exit reason carries stderr (with the secret) into errors.
    const restarted = nextState(manager, (s) => s.to === "ready");
    const crashed = await manager.callTool("mcp__vault__echo", { text: SECRET });
    outputs.push(JSON.stringify(crashed));
    assert.equal(crashed.failure?.kind, "crashed");
    await restarted;
    const status = manager.status();
    outputs.push(JSON.stringify(status));
    assert.match(status[0]!.lastError ?? "", /echo: token is \[REDACTED\]/, "the stderr tail in the error is redacted");
    assert.ok(events.lines.some((l) => l.startsWith("audit ") && l.includes("[REDACTED]")));
  } finally {
    await manager.close();
  }
  const everything = [...events.lines, ...outputs].join("\n");
  assert.ok(everything.length > 1000, "a real amount of output was captured");
  assert.equal(everything.includes(SECRET), false, "the secret appears nowhere");
  assert.equal(alive(pid), false);
});

test("a header secret echoed back by a hostile HTTP server is redacted from the error", async () => {
  const server: Server = createServer((req, res) => {
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `rejected credentials: ${String(req.headers.authorization)}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const manager = new McpManager({ secretResolvers: resolvers });
  const events = capture(manager);
  try {
    const status = await manager.connect([
      { name: "remote", transport: "http", url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: "Bearer secret://env/MCPB_TEST_TOKEN" } },
    ]);
    assert.equal(status[0]!.state, "failed");
    assert.match(status[0]!.lastError ?? "", /rejected credentials: \[REDACTED\]/);
    const everything = `${events.text()}\n${JSON.stringify(manager.status())}`;
    assert.equal(everything.includes(SECRET), false);
  } finally {
    await manager.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test("a missing secret leaves the server unstarted with an error naming the reference", async () => {
  const manager = new McpManager({ secretResolvers: new SecretResolvers({ env: {} }) });
  try {
    const status = await manager.connect([fixtureConfig("nokey", "faulty.ts", [], { env: { API_TOKEN: "secret://env/MCPB_ABSENT" } })]);
    assert.equal(status[0]!.state, "failed");
    assert.equal(status[0]!.pid, undefined, "nothing was spawned");
    assert.match(status[0]!.lastError ?? "", /secret:\/\/env\/MCPB_ABSENT is not set/);
  } finally {
    await manager.close();
  }
});

test("a server that echoes its secret in every channel: nothing the agent gets from the manager contains it", async () => {
  const manager = new McpManager({ secretResolvers: resolvers, shutdownGraceMs: 500 });
  const events = capture(manager);
  const seen: Record<string, string> = {};
  let pid: number | undefined;
  try {
    const config = fixtureConfig("mirror", "mirror.ts", ["--tool-named-after-text"], { env: { MIRROR_TEXT: "secret://env/MCPB_TEST_TOKEN" } });
    await manager.connect([config]);
    pid = manager.status()[0]!.pid;
    assert.equal(manager.status()[0]!.state, "ready");

    const tools = await manager.tools();
    assert.deepEqual(tools.map((t) => t.name), ["mcp__mirror__mirror"], "the tool whose name holds the secret is left out");
    seen.tools = JSON.stringify(tools);
    seen.call = JSON.stringify(await manager.callTool("mcp__mirror__mirror", {}));
    seen.resources = JSON.stringify(await manager.listResources());
    seen.read = JSON.stringify(await manager.readResource("mirror", "mirror://text"));
    seen.context = JSON.stringify(await manager.resourceContext([{ server: "mirror", uri: "mirror://text" }]));
    seen.prompts = JSON.stringify(await manager.listPrompts());
    seen.prompt = JSON.stringify(await manager.getPrompt("mirror", "mirror"));
    seen.completion = JSON.stringify(await manager.complete("mirror", { ref: { type: "ref/prompt", name: "mirror" }, argument: { name: "topic", value: "" } }));
    seen.instructions = JSON.stringify(manager.serverInstructions());
    seen.status = JSON.stringify(manager.status());
    seen.events = events.text();
  } finally {
    await manager.close();
  }
  for (const [channel, text] of Object.entries(seen)) {
    assert.equal(text.includes(SECRET), false, `${channel} leaks the secret: ${text}`);
  }
  const redacted = Object.entries(seen).filter(([, text]) => text.includes("[REDACTED]")).map(([channel]) => channel);
  assert.deepEqual(redacted, ["tools", "call", "resources", "read", "context", "prompts", "prompt", "completion", "instructions", "events"]);
  assert.match(seen.events!, /tools left out because their names contain a configured secret: tool_\[REDACTED\]/);
  assert.equal(alive(pid), false);
});
