/**
 * McpClient against the echo fixture as a real child process over stdio, in both eras: the
 * fixture is dual-era, so "auto" speaks the stateless one and "legacy" the handshake one.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { McpClient } from "../../src/mcp/client.ts";
import type { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS } from "../../src/mcp/versions.ts";
import { resourceNotFoundCode } from "../helpers/era.ts";
import { alive, connectFixture, reap } from "./helpers.ts";

for (const era of ["auto", "legacy"] as const) {
  describe(`era ${era}`, () => {
    let client: McpClient;
    let transport: StdioClientTransport;

    before(async () => {
      ({ client, transport } = await connectFixture("echo.ts", [], { clientInfo: { name: "e2e", version: "1" }, era, discoverTimeoutMs: 30_000 }));
    });

    after(async () => {
      const pid = transport.pid;
      await client.close();
      assert.equal(alive(pid), false, "the echo server must be gone after close()");
      reap(pid);
    });

    test("handshake over stdio reports the resolved command, the server and the version", () => {
      assert.equal(transport.resolvedCommand, process.execPath);
      assert.equal(client.serverInfo?.name, "echo");
      assert.equal(client.protocolVersion, era === "legacy" ? LATEST_PROTOCOL_VERSION : MODERN_PROTOCOL_VERSIONS[0]);
      assert.equal(client.era, era === "legacy" ? "legacy" : "modern");
      assert.ok(client.serverCapabilities?.tools);
    });

    test("tools are listed with their schemas exactly as the server registered them", async () => {
      const tools = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ["echo", "add", "tiny_image", "slow_progress", "log", "fail", "structured", "whoami"]) assert.ok(names.includes(n), n);
      const structured = tools.find((t) => t.name === "structured")!;
      assert.equal(structured.inputSchema.$schema, "https://json-schema.org/draft/2020-12/schema");
      assert.equal((structured.outputSchema as { additionalProperties: boolean }).additionalProperties, false);
      assert.ok((structured.outputSchema as { $defs: object }).$defs);
    });

    test("tool calls: text, structured content, images, error results", async () => {
      assert.deepEqual((await client.callTool("echo", { text: "héllo 𝄞" })).content, [{ type: "text", text: "héllo 𝄞" }]);
      assert.deepEqual((await client.callTool("add", { a: 2, b: 40 })).structuredContent, { sum: 42 });
      const image = await client.callTool("tiny_image");
      assert.equal(image.content[0]!.type, "image");
      const failed = await client.callTool("fail");
      assert.equal(failed.isError, true);
      assert.match((failed.content[0] as { text: string }).text, /always fails/);
      const invalid = await client.callTool("add", { a: "two" });
      assert.equal(invalid.isError, true, "invalid arguments are a tool error the model can read");
      await assert.rejects(client.callTool("no_such_tool"), { name: "RpcError", code: -32602 });
      const s = await client.callTool("structured", { label: "x" });
      assert.deepEqual(s.structuredContent, { origin: { x: 0, y: 0 }, meta: { label: "x", tags: ["a", "b"] } });
    });

    test("progress arrives during a call, and cancelling settles at once", async () => {
      const seen: string[] = [];
      const r = await client.callTool("slow_progress", { steps: 3, delayMs: 5 }, { onProgress: (p) => seen.push(`${p.progress}/${p.total}`) });
      assert.match((r.content[0] as { text: string }).text, /done after 3 steps/);
      assert.deepEqual(seen, ["1/3", "2/3", "3/3"]);

      const ac = new AbortController();
      const call = client.callTool("slow_progress", { steps: 100, delayMs: 50 }, { signal: ac.signal, onProgress: () => ac.abort() });
      await assert.rejects(call, { name: "BridgeError", code: "CANCELLED" });
      // The connection stays usable after a cancellation.
      assert.equal((await client.callTool("echo", { text: "still here" })).isError, undefined);
    });

    test("log notifications reach the client, filtered by the level it set", async () => {
      const logs: string[] = [];
      const off = client.on("log", (l) => logs.push(`${l.level}:${String(l.data)}`));
      await client.setLoggingLevel("warning");
      await client.callTool("log", { level: "info", message: "quiet" });
      await client.callTool("log", { level: "error", message: "loud" });
      await client.ping();
      off();
      assert.deepEqual(logs, ["error:loud"]);
    });

    test("resources, templates, prompts and completion", async () => {
      const resources = await client.listResources();
      assert.ok(resources.some((r) => r.uri === "echo://greeting"));
      const templates = await client.listResourceTemplates();
      assert.ok(templates.some((t) => t.uriTemplate === "echo://items/{id}"));
      const greeting = await client.readResource("echo://greeting");
      assert.equal((greeting.contents[0] as { text: string }).text, "Hello from echo");
      const item = await client.readResource("echo://items/42");
      assert.equal(item.contents[0]!.uri, "echo://items/42");
      await assert.rejects(client.readResource("echo://nope"), { name: "RpcError", code: resourceNotFoundCode(client.era) });
      const prompts = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === "greet"));
      const greet = await client.getPrompt("greet", { name: "Ada" });
      assert.ok(greet.messages.length > 0);
      await assert.rejects(client.getPrompt("greet", {}), { name: "RpcError", code: -32602 });
      const done = await client.complete({ ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "Al" } });
      assert.deepEqual(done.completion.values, ["Alan", "Alice"]);
    });
  });
}
