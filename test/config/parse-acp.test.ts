import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseAcpMcpServers, type AcpMcpServer } from "../../src/config/parse-acp.ts";

const TOKEN = "acp-editor-TOKEN-51c2";
const KEY = "acp-env-KEY-77d0";

function assertNoSecret(value: unknown): void {
  const text = JSON.stringify(value);
  for (const s of [TOKEN, KEY]) assert.ok(!text.includes(s), `leaks ${s}: ${text}`);
}

describe("parseAcpMcpServers", () => {
  test("the three variants; env and headers become maps; trust stays unset", () => {
    const input: AcpMcpServer[] = [
      { name: "fs", command: "npx", args: ["-y", "fs"], env: [{ name: "API_KEY", value: KEY }] },
      { type: "http", name: "api", url: "https://api.example/mcp", headers: [{ name: "Authorization", value: `Bearer ${TOKEN}` }] },
      { type: "sse", name: "ev", url: "http://127.0.0.1:7000/sse", headers: [] },
      { type: "stdio", name: "v2", command: "/bin/v2", args: [], env: [] },
    ];
    const result = parseAcpMcpServers(input);
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.servers, [
      { name: "fs", transport: "stdio", command: "npx", args: ["-y", "fs"], env: { API_KEY: KEY } },
      { name: "api", transport: "http", url: "https://api.example/mcp", headers: { Authorization: `Bearer ${TOKEN}` } },
      { name: "ev", transport: "sse", url: "http://127.0.0.1:7000/sse", headers: {} },
      { name: "v2", transport: "stdio", command: "/bin/v2", args: [], env: {} },
    ]);
    assert.ok(result.servers.every((s) => s.trust === undefined));
  });

  test("missing args, env and headers mean empty", () => {
    const result = parseAcpMcpServers([
      { name: "s", command: "/bin/s" },
      { type: "http", name: "h", url: "https://h" },
    ]);
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.servers, [
      { name: "s", transport: "stdio", command: "/bin/s", args: [], env: {} },
      { name: "h", transport: "http", url: "https://h", headers: {} },
    ]);
  });

  test("duplicate names are errors and the duplicate is not used", () => {
    const result = parseAcpMcpServers([
      { name: "a", command: "/bin/first" },
      { type: "http", name: "a", url: "https://second" },
      { name: "b", command: "/bin/b" },
    ]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [["/1/name", "error"]]);
    assert.match(result.problems[0]!.message, /duplicate server name "a" \(first defined at \/0\/name\)/);
    assert.deepEqual(result.servers.map((s) => [s.name, s.transport]), [
      ["a", "stdio"],
      ["b", "stdio"],
    ]);
  });

  test("type acp and unknown types are clear errors", () => {
    const result = parseAcpMcpServers([
      { type: "acp", name: "tools", serverId: "tools:1" },
      { type: "websocket", name: "w", url: "wss://w" },
      { type: 7, name: "n" },
    ]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.message]), [
      ["/0/type", 'transport "acp" (MCP over ACP) is not supported here (expected stdio, http, sse)'],
      ["/1/type", 'unknown transport "websocket" (expected stdio, http, sse)'],
      ["/2/type", "unknown transport a number (expected stdio, http, sse)"],
    ]);
    assert.deepEqual(result.servers, []);
  });

  test("an untyped entry with a url gets a hint to set type", () => {
    const result = parseAcpMcpServers([{ name: "h", url: "https://h", headers: [] }]);
    assert.equal(result.problems.filter((p) => p.severity === "error").length, 1);
    const error = result.problems.find((p) => p.severity === "error")!;
    assert.equal(error.path, "/0/command");
    assert.match(error.message, /needs type "http"/);
  });

  test("every problem at once, with paths, and never a value", () => {
    const result = parseAcpMcpServers([
      { name: "s", command: "/bin/s", args: [TOKEN, 1], env: [{ name: "A=B", value: KEY }, { name: "OK", value: 3 }, "x"] },
      { type: "http", name: "h", url: `ftp://${TOKEN}@h`, headers: [{ name: "Authorization", value: `Bearer ${TOKEN}\r\nX: y` }, { value: KEY }] },
      { type: "sse", name: "", headers: {} },
      "nope",
    ]);
    assert.deepEqual(result.problems.map((p) => p.path), [
      "/0/args/1",
      "/0/env/0/name",
      "/0/env/1/value",
      "/0/env/2",
      "/1/url",
      "/1/headers/0/value",
      "/1/headers/1/name",
      "/2/name",
      "/2/url",
      "/2/headers",
      "/3",
    ]);
    assert.ok(result.problems.every((p) => p.severity === "error"));
    assert.deepEqual(result.servers, []);
    assertNoSecret(result.problems);
  });

  test("repeated env or header names: a warning, the last one wins", () => {
    const result = parseAcpMcpServers([
      { name: "s", command: "/bin/s", env: [{ name: "A", value: "1" }, { name: "A", value: "2" }] },
      { type: "http", name: "h", url: "https://h", headers: [{ name: "X-Key", value: "1" }, { name: "x-key", value: "2" }] },
    ]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [
      ["/0/env/1/name", "warning"],
      ["/1/headers/1/name", "warning"],
    ]);
    assert.deepEqual(result.servers[0]!.env, { A: "2" });
    assert.deepEqual(result.servers[1]!.headers, { "x-key": "2" });
  });

  test("keys of the other variant and unknown keys are warnings; _meta is fine", () => {
    const result = parseAcpMcpServers([{ name: "s", command: "/bin/s", url: "https://x", extra: 1, _meta: { a: 1 } }]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [
      ["/0/url", "warning"],
      ["/0/extra", "warning"],
    ]);
    assert.equal(result.servers.length, 1);
  });

  test("not an array", () => {
    const result = parseAcpMcpServers({ name: "x" });
    assert.deepEqual(result.problems, [{ path: "", message: "mcpServers must be an array (got object)", severity: "error" }]);
  });
});
