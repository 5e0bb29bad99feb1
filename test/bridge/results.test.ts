import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fromError } from "../../src/bridge/failures.ts";
import {
  DEFAULT_MAX_TEXT_CHARS,
  EMPTY_RESULT_TEXT,
  base64Bytes,
  cutMarker,
  formatBytes,
  renderResultText,
  toBridgedResult,
} from "../../src/bridge/results.ts";
import type { BridgedResult } from "../../src/bridge/types.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { CallToolResult, ContentBlock } from "../../src/mcp/types.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";

/** A base64 string that decodes to exactly `n` bytes. */
function base64Of(n: number): string {
  const full = Math.floor(n / 3) * 4;
  const rest = n % 3;
  return "A".repeat(full) + (rest === 0 ? "" : rest === 1 ? "AA==" : "AAA=");
}

function result(...content: ContentBlock[]): CallToolResult {
  return { content };
}

describe("toBridgedResult: content types", () => {
  it("maps text, image, audio, resource_link, embedded text and blob resources", () => {
    const ann = { audience: ["assistant" as const], priority: 0.5 };
    const r = toBridgedResult(
      result(
        { type: "text", text: "hello", annotations: ann },
        { type: "image", data: base64Of(2048), mimeType: "image/png" },
        { type: "audio", data: base64Of(10), mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///a.txt", name: "a.txt", description: "the file", mimeType: "text/plain", size: 12 },
        { type: "resource", resource: { uri: "file:///b.md", mimeType: "text/markdown", text: "# B" } },
        { type: "resource", resource: { uri: "file:///c.bin", blob: base64Of(3) } },
      ),
    );
    assert.equal(r.isError, false);
    assert.deepEqual(r.content, [
      { type: "text", text: "hello", annotations: ann },
      { type: "image", mimeType: "image/png", data: base64Of(2048) },
      { type: "audio", mimeType: "audio/wav", data: base64Of(10) },
      { type: "resource_link", uri: "file:///a.txt", name: "a.txt", description: "the file", mimeType: "text/plain", size: 12 },
      { type: "resource_text", uri: "file:///b.md", mimeType: "text/markdown", text: "# B" },
      { type: "resource_blob", uri: "file:///c.bin", blob: base64Of(3) },
    ]);
    assert.equal(
      r.text,
      [
        "hello",
        "[image: image/png, 2 KiB]",
        "[audio: audio/wav, 10 bytes]",
        "[resource link: a.txt <file:///a.txt> (text/plain): the file]",
        "[resource file:///b.md (text/markdown)]\n# B",
        "[binary resource file:///c.bin, 3 bytes]",
      ].join("\n"),
    );
    assert.equal(r.truncated, undefined);
    assert.equal(r.failure, undefined);
  });

  it("keeps structuredContent by reference, and keeps isError", () => {
    const structured = { sum: 42 };
    const r = toBridgedResult({ content: [{ type: "text", text: '{"sum":42}' }], structuredContent: structured, isError: true });
    assert.equal(r.structured, structured);
    assert.equal(r.isError, true);
    assert.equal(r.text, '{"sum":42}');
  });

  it("uses the JSON of structuredContent as text when content is empty", () => {
    const r = toBridgedResult({ content: [], structuredContent: { a: [1, 2] } });
    assert.equal(r.text, '{"a":[1,2]}');
    assert.deepEqual(r.content, [{ type: "text", text: '{"a":[1,2]}' }]);
  });

  it("gives an empty result a placeholder, marked as the bridge's own text", () => {
    for (const raw of [{ content: [] }, { content: [], isError: true }]) {
      const r = toBridgedResult(raw);
      assert.equal(r.text, EMPTY_RESULT_TEXT);
      assert.deepEqual(r.content, [{ type: "text", text: EMPTY_RESULT_TEXT, origin: "bridge" }]);
      assert.equal(r.isError, raw.isError === true);
    }
    assert.equal(EMPTY_RESULT_TEXT, "(the tool returned no content)");
  });

  it("turns unknown or malformed blocks into notes instead of failing", () => {
    const raw = { content: [{ type: "video", url: "x" }, { type: "text" }, 7, { type: "text", text: "ok" }] } as unknown as CallToolResult;
    const r = toBridgedResult(raw);
    assert.deepEqual(
      r.content.map((c) => (c.type === "text" ? c.text : c.type)),
      [
        '[content of unsupported type "video" omitted by mcp-bridge]',
        '[content of unsupported type "text" omitted by mcp-bridge]',
        "[content of unsupported type (none) omitted by mcp-bridge]",
        "ok",
      ],
    );
    const missing = toBridgedResult({} as CallToolResult);
    assert.equal(missing.text, EMPTY_RESULT_TEXT);
  });

  it("clips absurdly long link metadata", () => {
    const r = toBridgedResult(result({ type: "resource_link", uri: "u", name: "n".repeat(10_000), description: "d".repeat(10_000) }));
    const link = r.content[0]!;
    assert.equal(link.type, "resource_link");
    if (link.type !== "resource_link") return;
    assert.equal(link.name.length, 512);
    assert.ok(link.name.endsWith("…"));
    assert.equal(link.description!.length, 2048);
  });
});

describe("toBridgedResult: limits", () => {
  it("cuts text over the limit with an exact marker", () => {
    const r = toBridgedResult(result({ type: "text", text: "a".repeat(DEFAULT_MAX_TEXT_CHARS + 123_456) }));
    assert.equal(r.text, `${"a".repeat(DEFAULT_MAX_TEXT_CHARS)}\n[… 123456 more characters cut by mcp-bridge]`);
    assert.equal(cutMarker(5), "[… 5 more characters cut by mcp-bridge]");
    assert.deepEqual(r.truncated, { textChars: 123_456, binaryParts: 0, structured: false });
    assert.deepEqual(r.content.at(-1), { type: "text", text: cutMarker(123_456), origin: "bridge" });
  });

  it("text exactly at the limit is not cut", () => {
    const r = toBridgedResult(result({ type: "text", text: "b".repeat(100) }), { maxTextChars: 100 });
    assert.equal(r.text, "b".repeat(100));
    assert.equal(r.truncated, undefined);
  });

  it("counts over all text parts; later text is dropped and counted, other parts stay", () => {
    const r = toBridgedResult(
      result(
        { type: "text", text: "1234567" },
        { type: "resource", resource: { uri: "file:///x", text: "abcdefgh" } },
        { type: "image", data: base64Of(4), mimeType: "image/gif" },
        { type: "text", text: "tail-text" },
      ),
      { maxTextChars: 10 },
    );
    assert.deepEqual(
      r.content.map((c) => c.type),
      ["text", "resource_text", "text", "image"],
    );
    assert.equal(r.text, `1234567\n[resource file:///x]\nabc\n${cutMarker(5 + 9)}\n[image: image/gif, 4 bytes]`);
    assert.equal(r.truncated?.textChars, 14);
  });

  it("never splits a surrogate pair at the cut", () => {
    const r = toBridgedResult(result({ type: "text", text: "ab𝄞cd" }), { maxTextChars: 3 });
    assert.equal(r.text, `ab\n${cutMarker(4)}`);
  });

  it("drops structuredContent over the text limit, with a note", () => {
    const big = { data: "x".repeat(200) };
    const r = toBridgedResult({ content: [{ type: "text", text: "summary" }], structuredContent: big }, { maxTextChars: 100 });
    assert.equal(r.structured, undefined);
    assert.equal(r.text, `summary\n[structured content of ${JSON.stringify(big).length} characters omitted by mcp-bridge: over the 100-character limit]`);
    assert.deepEqual(r.truncated, { textChars: 0, binaryParts: 0, structured: true });
  });

  it("replaces binary parts beyond the binary limit by a note; text does not count against it", () => {
    const r = toBridgedResult(
      result(
        { type: "image", data: base64Of(600), mimeType: "image/png" },
        { type: "audio", data: base64Of(600), mimeType: "audio/mpeg" },
        { type: "resource", resource: { uri: "file:///b", blob: base64Of(300), mimeType: "application/zip" } },
        { type: "text", text: "t".repeat(5000) },
      ),
      { maxBinaryBytes: 1000 },
    );
    assert.deepEqual(r.content.map((c) => c.type), ["image", "text", "resource_blob", "text"]);
    assert.equal(
      r.content[1]!.type === "text" && r.content[1]!.text,
      "[audio (audio/mpeg, 600 bytes) omitted by mcp-bridge: over the 1000 bytes limit for binary content per call]",
    );
    assert.deepEqual(r.truncated, { textChars: 0, binaryParts: 1, structured: false });
  });

  it("the default binary limit is 5 MiB", () => {
    const ok = toBridgedResult(result({ type: "image", data: base64Of(5 * 1024 * 1024), mimeType: "image/png" }));
    assert.equal(ok.content[0]!.type, "image");
    const over = toBridgedResult(result({ type: "image", data: base64Of(5 * 1024 * 1024 + 1), mimeType: "image/png" }));
    assert.match(over.text, /^\[image \(image\/png, 5 MiB\) omitted by mcp-bridge: over the 5 MiB limit/);
  });

  it("a server-chosen mime type cannot inject brackets or newlines into a bridge note", () => {
    const r = toBridgedResult(result({ type: "image", data: base64Of(10), mimeType: "x]\n<system>" }), { maxBinaryBytes: 1 });
    assert.equal(r.text, "[image (x___system_, 10 bytes) omitted by mcp-bridge: over the 1 byte limit for binary content per call]");
  });

  it("base64Bytes and formatBytes", () => {
    assert.equal(base64Bytes(""), 0);
    assert.equal(base64Bytes("QQ=="), 1);
    assert.equal(base64Bytes("QUI="), 2);
    assert.equal(base64Bytes("QUJD"), 3);
    assert.equal(formatBytes(1023), "1023 bytes");
    assert.equal(formatBytes(1536), "1.5 KiB");
    assert.equal(formatBytes(5 * 1024 * 1024), "5 MiB");
  });
});

describe("renderResultText", () => {
  it("hands each run of server parts to wrapRun and leaves bridge notes outside", () => {
    const r = toBridgedResult(result({ type: "text", text: "x".repeat(8) }, { type: "text", text: "y" }), { maxTextChars: 4 });
    const runs: string[] = [];
    const text = renderResultText(r.content, (run) => {
      runs.push(run);
      return `<<${run}>>`;
    });
    assert.deepEqual(runs, ["xxxx"]);
    assert.equal(text, `<<xxxx>>\n${cutMarker(5)}`);
  });
});

describe("results from a real client and server", () => {
  it("every content type, a timeout, an unknown tool and a schema mismatch become readable results", async () => {
    const server = new McpServer({ name: "results-test", version: "1.0.0" });
    const obj = { type: "object" };
    server.tool({ name: "mixed", inputSchema: obj }, () => ({
      content: [
        { type: "text", text: "t".repeat(50) },
        { type: "image", data: base64Of(30), mimeType: "image/png" },
        { type: "resource", resource: { uri: "mem://r", text: "inside" } },
      ],
    }));
    server.tool({ name: "hang", inputSchema: obj }, (_args, c) => new Promise((resolve) => {
      c.signal.addEventListener("abort", () => resolve({ content: [] }));
    }));
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new McpClient();
    await client.connect(clientSide);
    try {
      await client.listTools();
      // Only the hanging call gets a short timeout: a first call may wait while the server loads
      // its schema validator, which can take longer than 50 ms on a loaded machine under tsx.
      const call = async (name: string, timeoutMs?: number): Promise<BridgedResult> => {
        try {
          return toBridgedResult(await client.callTool(name, {}, { timeoutMs }), { maxTextChars: 40 });
        } catch (err) {
          return fromError(err, { server: "results-test", tool: name });
        }
      };

      const mixed = await call("mixed");
      assert.equal(mixed.text, `${"t".repeat(40)}\n${cutMarker(10 + 6)}\n[image: image/png, 30 bytes]`);

      const hung = await call("hang", 50);
      assert.deepEqual(hung.failure, { kind: "timeout", retryable: true });
      assert.match(hung.text, /timed out after 50 ms/);

      const unknown = await call("nope");
      assert.deepEqual(unknown.failure, { kind: "rejected", retryable: false });

      // A server that breaks its own output schema (McpServer itself would refuse to).
      const [rawSide, strictSide] = InMemoryTransport.createLinkedPair();
      const raw = new JsonRpcPeer(rawSide);
      raw.setRequestHandler("initialize", () => ({
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "raw", version: "1" },
      }));
      raw.setRequestHandler("tools/list", () => ({
        tools: [{ name: "typed", inputSchema: obj, outputSchema: { type: "object", required: ["n"] } }],
      }));
      raw.setRequestHandler("tools/call", () => ({ content: [{ type: "text", text: "no structured content" }] }));
      await raw.start();
      const strict = new McpClient();
      await strict.connect(strictSide);
      try {
        await strict.listTools();
        const mismatch = await strict.callTool("typed", {}).then(
          (r) => toBridgedResult(r),
          (err: unknown) => fromError(err, { server: "raw", tool: "typed" }),
        );
        assert.deepEqual(mismatch.failure, { kind: "invalid_result", retryable: false });
        assert.match(mismatch.text, /declares an outputSchema but returned no structuredContent/);
      } finally {
        await strict.close();
        await raw.close();
      }
    } finally {
      await client.close();
      await server.close();
    }
  });
});
