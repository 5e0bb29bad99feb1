import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { GREET_NAMES, TINY_PNG_BASE64, createEchoServer } from "../../fixtures/servers/echo.ts";
import type { CallToolResult, Tool } from "../../src/mcp/types.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { connect, rejectsWithCode } from "./server-harness.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const firstText = (r: CallToolResult) => (r.content[0] as { text: string }).text;

async function echo() {
  const h = await connect(createEchoServer());
  await h.initialize();
  const call = (name: string, args: Record<string, unknown> = {}, options = {}) =>
    h.client.request<CallToolResult>("tools/call", { name, arguments: args }, options);
  return { h, call };
}

test("echo fixture lists its tools, with the annotated and structured ones intact", async () => {
  const { h } = await echo();
  const { tools } = await h.client.request<{ tools: Tool[] }>("tools/list");
  assert.deepEqual(tools.map((t) => t.name), ["echo", "add", "tiny_image", "slow_progress", "log", "fail", "structured", "whoami"]);
  const whoami = tools.find((t) => t.name === "whoami")!;
  assert.equal(whoami.title, "Who am I");
  assert.equal(whoami.annotations?.readOnlyHint, true);
  const structured = tools.find((t) => t.name === "structured")!;
  const out = structured.outputSchema as Record<string, unknown>;
  assert.equal(out.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(out.additionalProperties, false);
  assert.deepEqual(Object.keys(out.$defs as object), ["point"]);
  assert.equal(structured.inputSchema.$schema, "https://json-schema.org/draft/2020-12/schema");
});

test("echo fixture tools answer as documented", async () => {
  const { h, call } = await echo();
  assert.equal(firstText(await call("echo", { text: "hé\nllo" })), "hé\nllo");
  const add = await call("add", { a: 2, b: 3.5 });
  assert.deepEqual(add.structuredContent, { sum: 5.5 });
  assert.equal(firstText(add), "5.5");
  assert.equal((await call("add", { a: "2", b: 3 })).isError, true);

  const image = (await call("tiny_image")).content[0] as { type: string; data: string; mimeType: string };
  assert.equal(image.type, "image");
  assert.equal(image.mimeType, "image/png");
  assert.equal(image.data, TINY_PNG_BASE64);
  assert.deepEqual([...atob(image.data).slice(0, 4)].map((c) => c.charCodeAt(0)), [0x89, 0x50, 0x4e, 0x47]);

  const fail = await call("fail");
  assert.equal(fail.isError, true);
  assert.match(firstText(fail), /always fails/);

  const structured = await call("structured", { label: "L" });
  assert.equal(structured.isError, undefined);
  assert.deepEqual(structured.structuredContent, { origin: { x: 0, y: 0 }, meta: { label: "L", tags: ["a", "b"] } });
  assert.equal((await call("structured", { label: "" })).isError, true, "minLength from the passed-through schema applies");

  assert.equal(firstText(await call("whoami")), "harness speaking 2025-11-25");
  await rejectsWithCode(h.client.request("tools/call", { name: "missing", arguments: {} }), -32602);
});

test("echo fixture: slow_progress reports each step; log respects the level", async () => {
  const { h, call } = await echo();
  const seen: Array<{ progress: number; total?: number }> = [];
  const r = await call("slow_progress", { steps: 3, delayMs: 1 }, { onProgress: (p: { progress: number; total?: number }) => seen.push(p) });
  assert.equal(firstText(r), "done after 3 steps");
  assert.deepEqual(seen.map((p) => [p.progress, p.total]), [[1, 3], [2, 3], [3, 3]]);

  await call("log", { level: "debug", message: "quiet" });
  await call("log", { level: "warning", message: "loud" });
  await h.settle();
  assert.deepEqual(
    h.notes.filter((n) => n.method === "notifications/message").map((n) => n.params),
    [{ level: "warning", logger: "echo", data: "loud" }],
  );
});

test("echo fixture: cancelling slow_progress stops it and the session stays usable", async () => {
  const { h, call } = await echo();
  const controller = new AbortController();
  let first!: () => void;
  const progressed = new Promise<void>((r) => (first = r));
  const running = call("slow_progress", { steps: 1000, delayMs: 20 }, { signal: controller.signal, onProgress: () => first() });
  await progressed;
  controller.abort();
  await assert.rejects(running, { name: "BridgeError", code: "CANCELLED" });
  assert.equal(firstText(await call("echo", { text: "still here" })), "still here");
  await h.settle();
  assert.equal(h.client.stats.lateResponses, 0, "the cancelled call was never answered");
  await h.client.close();
});

test("echo fixture resources, prompts and completion", async () => {
  const { h } = await echo();
  const read = (uri: string) => h.client.request<{ contents: Array<{ text?: string; blob?: string }> }>("resources/read", { uri });
  assert.equal((await read("echo://greeting")).contents[0].text, "Hello from echo");
  const blob = atob((await read("echo://blob")).contents[0].blob!);
  assert.deepEqual([...blob].map((c) => c.charCodeAt(0)), Array.from({ length: 16 }, (_, i) => i));
  assert.equal((await read("echo://items/5")).contents[0].text, "item 5");
  await rejectsWithCode(read("echo://nothing"), -32002);

  const greet = await h.client.request<{ messages: Array<{ content: { text: string } }> }>("prompts/get", {
    name: "greet",
    arguments: { name: "Ada" },
  });
  assert.equal(greet.messages[0].content.text, "Hi Ada!");
  await rejectsWithCode(h.client.request("prompts/get", { name: "greet", arguments: {} }), -32602);
  const hello = await h.client.request<{ messages: unknown[] }>("prompts/get", { name: "hello" });
  assert.equal(hello.messages.length, 1);

  const c = await h.client.request<{ completion: { values: string[] } }>("completion/complete", {
    ref: { type: "ref/prompt", name: "greet" },
    argument: { name: "name", value: "al" },
  });
  assert.deepEqual(c.completion.values, GREET_NAMES.filter((n) => n.startsWith("Al")));
  assert.deepEqual(c.completion.values, ["Alan", "Alice"]);
});

/** Reads ndjson lines from a stream, one at a time. */
function lineReader(stream: NodeJS.ReadableStream) {
  let buffer = "";
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) !== -1) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    waiters.splice(0).forEach((w) => w());
  });
  stream.on("end", () => waiters.splice(0).forEach((w) => w()));
  return async (): Promise<unknown> => {
    while (lines.length === 0) await new Promise<void>((r) => waiters.push(r));
    return JSON.parse(lines.shift()!);
  };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("echo fixture runs as a stdio child: initialize, tools/list, exits on stdin EOF", { timeout: 30_000 }, async () => {
  const echo = nodeModuleCommand("fixtures/servers/echo.ts");
  const child = spawn(echo.command, echo.args, {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid!;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => (stderr += d));
  const next = lineReader(child.stdout);
  const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
  try {
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    const init = (await next()) as { id: number; result: { protocolVersion: string; serverInfo: { name: string }; capabilities: Record<string, unknown> } };
    assert.equal(init.id, 1, stderr);
    assert.equal(init.result.protocolVersion, "2025-06-18");
    assert.equal(init.result.serverInfo.name, "echo");
    assert.deepEqual(init.result.capabilities.tools, { listChanged: true });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const list = (await next()) as { id: number; result: { tools: Tool[] } };
    assert.equal(list.id, 2);
    assert.ok(list.result.tools.some((t) => t.name === "echo"));
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { text: "over stdio" } } });
    assert.deepEqual(await next(), { jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "over stdio" }] } });
    child.stdin.end();
    const { code, signal } = await exited;
    assert.equal(signal, null, "the child ended by itself, not by a signal");
    assert.equal(code, 0, stderr);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(pid, "SIGKILL");
      await exited;
    }
  }
  assert.equal(pidAlive(pid), false);
});
