import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseJsonText, parseMcpJsonFile } from "../../src/config/parse-files.ts";
import type { ConfigProblem } from "../../src/config/types.ts";

const SECRETS = ["ghp_TOPSECRET_file_1", "sk-live-PLAINTEXT-2", "hunter2-password-3", "tok_in_url_4"];

function assertNoSecret(problems: ConfigProblem[], secrets: readonly string[] = SECRETS): void {
  const text = JSON.stringify(problems);
  for (const s of secrets) assert.ok(!text.includes(s), `a problem leaks ${s}: ${text}`);
}

const paths = (problems: ConfigProblem[], severity?: ConfigProblem["severity"]) =>
  problems.filter((p) => severity === undefined || p.severity === severity).map((p) => p.path);

describe("parseMcpJsonFile: the formats people already have", () => {
  test("Claude Desktop / Cursor mcpServers with command, args, env", () => {
    const result = parseMcpJsonFile({
      mcpServers: {
        filesystem: { command: "/usr/local/bin/mcp-fs", args: ["--root", "/tmp"], env: { GITHUB_TOKEN: "secret://env/GH" } },
      },
      globalShortcut: "Ctrl+Space",
    });
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.servers, [
      {
        name: "filesystem",
        transport: "stdio",
        command: "/usr/local/bin/mcp-fs",
        args: ["--root", "/tmp"],
        env: { GITHUB_TOKEN: "secret://env/GH" },
        trust: "untrusted",
      },
    ]);
  });

  test("a url without type is auto; Claude Code's type http/sse/stdio is honoured", () => {
    const result = parseMcpJsonFile({
      mcpServers: {
        cursorRemote: { url: "https://mcp.example.com/mcp", headers: { "X-Team": "blue" } },
        ccHttp: { type: "http", url: "https://a.example/mcp" },
        ccSse: { type: "sse", url: "http://127.0.0.1:9000/sse" },
        ccStdio: { type: "stdio", command: "/bin/server" },
      },
    });
    assert.deepEqual(result.problems, []);
    assert.deepEqual(
      result.servers.map((s) => [s.name, s.transport]),
      [
        ["cursorRemote", "auto"],
        ["ccHttp", "http"],
        ["ccSse", "sse"],
        ["ccStdio", "stdio"],
      ],
    );
    assert.deepEqual(result.servers[0]!.headers, { "X-Team": "blue" });
  });

  test("VS Code servers with inputs and ${input:...}: warnings, server kept", () => {
    const result = parseMcpJsonFile({
      inputs: [{ type: "promptString", id: "token", password: true }],
      servers: {
        github: {
          type: "http",
          url: "https://api.example.com/mcp",
          headers: { Authorization: "Bearer ${input:token}" },
        },
        local: { type: "stdio", command: "/opt/srv", args: ["${workspaceFolder}"], envFile: "${workspaceFolder}/.env" },
      },
    });
    assert.deepEqual(paths(result.problems, "error"), []);
    assert.deepEqual(paths(result.problems, "warning").sort(), [
      "/inputs",
      "/servers/github/headers/Authorization",
      "/servers/local/args/0",
      "/servers/local/envFile",
    ]);
    assert.match(result.problems.find((p) => p.path === "/servers/github/headers/Authorization")!.message, /\$\{input:\.\.\.\}.*not supported/);
    assert.deepEqual(result.servers.map((s) => [s.name, s.transport]), [
      ["github", "http"],
      ["local", "stdio"],
    ]);
  });

  test("native form: servers as an array, or a bare array", () => {
    for (const value of [{ servers: [{ name: "n", transport: "sse", url: "https://h/sse", trust: "trusted" }] }, [{ name: "n", transport: "sse", url: "https://h/sse", trust: "trusted" }]]) {
      const result = parseMcpJsonFile(value);
      assert.deepEqual(result.problems, []);
      assert.deepEqual(result.servers, [{ name: "n", transport: "sse", url: "https://h/sse", trust: "trusted" }]);
    }
  });

  test("native fields are accepted in mcpServers entries", () => {
    const result = parseMcpJsonFile({
      mcpServers: { a: { command: "/bin/a", timeout: 5000, toolTimeout: 60000, allow: ["mcp__a__*"], deny: ["mcp__a__rm"], toolPrefix: "alpha", maxRestarts: 0 } },
    });
    assert.deepEqual(result.problems, []);
    assert.equal(result.servers[0]!.timeout, 5000);
    assert.equal(result.servers[0]!.maxRestarts, 0);
    assert.deepEqual(result.servers[0]!.deny, ["mcp__a__rm"]);
  });

  test("disabled: true becomes enabled: false and needs no command", () => {
    const result = parseMcpJsonFile({ mcpServers: { old: { disabled: true } } });
    assert.deepEqual(result.problems, []);
    assert.equal(result.servers[0]!.enabled, false);
  });
});

describe("parseMcpJsonFile: every problem at once, no secret echoed", () => {
  test("a file with five different mistakes reports exactly those five, with paths", () => {
    const result = parseMcpJsonFile(
      {
        mcpServers: {
          a: { command: "/bin/a", args: "--token ghp_TOPSECRET_file_1", env: { API_KEY: "secret://env/A" } },
          b: { command: "/bin/b", timeout: -5, env: { OPENAI_KEY: "secret://env/B" } },
          c: { type: "websocket", url: "https://x.example/?t=tok_in_url_4" },
          d: { type: "stdio", args: ["hunter2-password-3"] },
          e: { type: "http", url: "not a url sk-live-PLAINTEXT-2" },
          good: { command: "/bin/good" },
        },
      },
      "/home/u/.mcp.json",
    );
    assert.deepEqual(
      result.problems.map((p) => [p.path, p.severity]),
      [
        ["/mcpServers/a/args", "error"],
        ["/mcpServers/b/timeout", "error"],
        ["/mcpServers/c/type", "error"],
        ["/mcpServers/d/command", "error"],
        ["/mcpServers/e/url", "error"],
      ],
    );
    const byPath = new Map(result.problems.map((p) => [p.path, p.message]));
    assert.equal(byPath.get("/mcpServers/c/type"), 'unknown transport "websocket" (expected stdio, http, sse)');
    assert.match(byPath.get("/mcpServers/a/args")!, /must be an array of strings \(got string\)/);
    assert.match(byPath.get("/mcpServers/d/command")!, /missing command/);
    assert.ok(result.problems.every((p) => p.source === "/home/u/.mcp.json"));
    assert.deepEqual(result.servers.map((s) => s.name), ["good"]);
    assertNoSecret(result.problems);
  });

  test("unknown keys are warnings; the server is still used", () => {
    const result = parseMcpJsonFile({ mcpServers: { a: { command: "/bin/a", colour: "red" } } });
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity, p.message]), [
      ["/mcpServers/a/colour", "warning", 'unknown key "colour" (ignored)'],
    ]);
    assert.equal(result.servers.length, 1);
  });

  test("bad env and header entries are named by key, never by value", () => {
    const result = parseMcpJsonFile({
      mcpServers: {
        s: { command: "/bin/s", env: { "BAD=NAME": "ghp_TOPSECRET_file_1", PORT: 8080 } },
        h: { url: "https://h.example", headers: { Authorization: "Bearer sk-live-PLAINTEXT-2\r\nX-Evil: 1", "bad header": "hunter2-password-3" } },
      },
    });
    assert.deepEqual(paths(result.problems, "error").sort(), [
      "/mcpServers/h/headers/Authorization",
      "/mcpServers/h/headers/bad header",
      "/mcpServers/s/env/BAD=NAME",
      "/mcpServers/s/env/PORT",
    ]);
    assert.equal(result.servers.length, 0);
    assertNoSecret(result.problems);
  });

  test("a url that is not http(s) names the scheme, not the url", () => {
    const result = parseMcpJsonFile({ mcpServers: { w: { url: "ftp://user:tok_in_url_4@host/x" } } });
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]!.message, 'unsupported URL scheme "ftp:" (expected http: or https:)');
    assertNoSecret(result.problems);
  });

  test("both command and url without a type is an error; neither is an error", () => {
    const result = parseMcpJsonFile({ mcpServers: { both: { command: "/bin/x", url: "https://x" }, none: { args: [] } } });
    assert.deepEqual(paths(result.problems, "error"), ["/mcpServers/both", "/mcpServers/none"]);
    assert.match(result.problems[0]!.message, /both command and url/);
    assert.match(result.problems[1]!.message, /needs a command .* or a url/);
  });

  test("type and transport must agree", () => {
    const result = parseMcpJsonFile({ mcpServers: { x: { type: "http", transport: "sse", url: "https://x" } } });
    assert.deepEqual(paths(result.problems, "error"), ["/mcpServers/x/type"]);
    assert.match(result.problems[0]!.message, /contradicts transport "sse"/);
  });

  test("names: duplicates across sections, control characters, odd characters", () => {
    const result = parseMcpJsonFile({
      mcpServers: { dup: { command: "/bin/1" }, "bad\nname": { command: "/bin/2" }, "My Server": { command: "/bin/3" } },
      servers: { dup: { type: "stdio", command: "/bin/4" } },
    });
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [
      ["/mcpServers/bad\\u000aname", "error"],
      ["/mcpServers/My Server", "warning"],
      ["/servers/dup", "error"],
    ]);
    assert.match(result.problems[2]!.message, /duplicate server name "dup" \(first defined at \/mcpServers\/dup\)/);
    assert.deepEqual(result.servers.map((s) => [s.name, s.command]), [
      ["dup", "/bin/1"],
      ["My Server", "/bin/3"],
    ]);
  });

  test("path segments are escaped as JSON pointers", () => {
    const result = parseMcpJsonFile({ mcpServers: { "a/b~c": { command: 7 } } });
    assert.deepEqual(paths(result.problems, "error"), ["/mcpServers/a~1b~0c/command"]);
  });

  test("secret:// outside env and headers is a warning", () => {
    const result = parseMcpJsonFile({ mcpServers: { a: { command: "/bin/a", args: ["--token", "secret://env/T"] } } });
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [["/mcpServers/a/args/1", "warning"]]);
  });

  test("plaintext credentials give warnings without the value; references do not", () => {
    const result = parseMcpJsonFile({
      mcpServers: {
        gh: { command: "/bin/gh", env: { GITHUB_TOKEN: "ghp_TOPSECRET_file_1", LOG_LEVEL: "debug", DB_PASSWORD: "secret://file/db" } },
        api: { url: "https://api.example", headers: { Authorization: "Bearer sk-live-PLAINTEXT-2", "X-Api-Key": "Bearer secret://env/K" } },
      },
    });
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [
      ["/mcpServers/gh/env/GITHUB_TOKEN", "warning"],
      ["/mcpServers/api/headers/Authorization", "warning"],
    ]);
    assert.match(result.problems[0]!.message, /GITHUB_TOKEN looks like a credential/);
    assert.equal(result.servers.length, 2);
    assertNoSecret(result.problems);
  });

  test("a value that is not a config file is one clear error", () => {
    assert.deepEqual(parseMcpJsonFile("text").problems.map((p) => p.message), ["config file must hold a JSON object (got string)"]);
    const empty = parseMcpJsonFile({ preferences: {} });
    assert.equal(empty.problems.length, 1);
    assert.match(empty.problems[0]!.message, /no servers found: expected mcpServers/);
    const wrong = parseMcpJsonFile({ mcpServers: [{ command: "/bin/x" }] });
    assert.deepEqual(wrong.problems.map((p) => p.path), ["/mcpServers"]);
  });
});

describe("parseJsonText", () => {
  test("accepts comments, trailing commas and a BOM, as VS Code's mcp.json does", () => {
    const text = '\uFEFF{\n  // servers\n  "servers": { /* one */ "a": { "command": "/bin/a", "args": ["//not a comment",], }, },\n}\n';
    const decoded = parseJsonText(text);
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.value, { servers: { a: { command: "/bin/a", args: ["//not a comment"] } } });
  });

  test("strings with escaped quotes and comment-like text survive", () => {
    const decoded = parseJsonText('{"a": "x\\" // y", "b": "/* z */,]"}');
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.value, { a: 'x" // y', b: "/* z */,]" });
  });

  test("a syntax error gives a position, never the text around it", () => {
    const cases = [
      '{\n  "env": {"TOKEN": "ghp_TOPSECRET_file_1" "x": 1}\n}',
      '{"env": {"TOKEN": ghp_TOPSECRET_file_1}}',
      '{"env": {"TOKEN": "ghp_TOPSECRET_file_1"',
    ];
    for (const text of cases) {
      const decoded = parseJsonText(text, "/etc/mcp/a.json");
      assert.equal(decoded.ok, false);
      if (decoded.ok) continue;
      assert.equal(decoded.problem.source, "/etc/mcp/a.json");
      assert.equal(decoded.problem.severity, "error");
      assert.match(decoded.problem.message, /^invalid JSON/);
      assertNoSecret([decoded.problem]);
    }
    const first = parseJsonText(cases[0]!);
    assert.ok(!first.ok && first.problem.message === "invalid JSON at line 2, column 43");
  });
});
