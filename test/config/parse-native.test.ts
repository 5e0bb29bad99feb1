import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CONFIG_DEFAULTS, formatProblem, withDefaults } from "../../src/config/parse-common.ts";
import { parseNativeConfig } from "../../src/config/parse-native.ts";
import type { McpServerConfig } from "../../src/config/types.ts";

const SECRET = "native-SECRET-value-9f8e";

describe("parseNativeConfig", () => {
  test("accepts an array and {servers: [...]} alike, with every field", () => {
    const full: McpServerConfig = {
      name: "fs",
      transport: "stdio",
      command: "/usr/bin/fs",
      args: ["-v"],
      env: { HOME_DIR: "/tmp" },
      cwd: "/tmp",
      enabled: true,
      timeout: 10_000,
      toolTimeout: 60_000,
      restartOnCrash: false,
      maxRestarts: 2,
      toolPrefix: "files",
      trust: "trusted",
      resources: false,
      resourceFilter: ["file:///tmp/*"],
      allow: ["mcp__fs__read*"],
      deny: ["mcp__fs__write"],
    };
    for (const value of [[full], { servers: [full] }]) {
      const result = parseNativeConfig(value);
      assert.deepEqual(result.problems, []);
      assert.deepEqual(result.servers, [full]);
    }
  });

  test("leaves defaults unset and trust unset (withDefaults fills them)", () => {
    const result = parseNativeConfig([{ name: "r", url: "https://r.example/mcp" }]);
    assert.deepEqual(result.servers, [{ name: "r", transport: "auto", url: "https://r.example/mcp" }]);
  });

  test("reports every wrong type at once, by path, without values", () => {
    const result = parseNativeConfig({
      servers: [
        {
          name: "bad",
          transport: "stdio",
          command: ["/bin/x"],
          args: ["ok", 1, null],
          env: { TOKEN: 42 },
          timeout: "30s",
          toolTimeout: Number.POSITIVE_INFINITY,
          maxRestarts: 1.5,
          restartOnCrash: "yes",
          trust: "root",
          allow: "mcp__*",
          cwd: "",
        },
      ],
    });
    assert.deepEqual(
      result.problems.map((p) => [p.path, p.severity]),
      [
        ["/servers/0/command", "error"],
        ["/servers/0/args/1", "error"],
        ["/servers/0/args/2", "error"],
        ["/servers/0/env/TOKEN", "error"],
        ["/servers/0/cwd", "error"],
        ["/servers/0/timeout", "error"],
        ["/servers/0/toolTimeout", "error"],
        ["/servers/0/restartOnCrash", "error"],
        ["/servers/0/maxRestarts", "error"],
        ["/servers/0/trust", "error"],
        ["/servers/0/allow", "error"],
      ],
    );
    assert.equal(result.problems.find((p) => p.path === "/servers/0/trust")!.message, 'unknown trust level "root" (expected trusted, untrusted)');
    assert.deepEqual(result.servers, []);
  });

  test("unknown transport lists auto among the expected values", () => {
    const result = parseNativeConfig([{ name: "w", transport: "websocket", url: "https://w" }]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.message]), [
      ["/0/transport", 'unknown transport "websocket" (expected stdio, http, sse, auto)'],
    ]);
  });

  test("stdio needs a command, http/sse need a url", () => {
    const result = parseNativeConfig([
      { name: "s", transport: "stdio" },
      { name: "h", transport: "http" },
      { name: "e", transport: "sse", url: 5 },
    ]);
    assert.deepEqual(result.problems.map((p) => p.path), ["/0/command", "/1/url", "/2/url"]);
    assert.match(result.problems[1]!.message, /missing url \(required for http\)/);
  });

  test("keys that do not fit the transport are warned about", () => {
    const result = parseNativeConfig([{ name: "h", transport: "http", url: "https://h", command: "/bin/h", env: {} }]);
    assert.deepEqual(result.problems.map((p) => [p.path, p.severity]), [
      ["/0/command", "warning"],
      ["/0/env", "warning"],
    ]);
    assert.equal(result.servers.length, 1);
  });

  test("names: missing, not a string, empty, duplicated (also after a failed entry)", () => {
    const result = parseNativeConfig([
      { command: "/bin/a" },
      { name: 3, command: "/bin/a" },
      { name: "", command: "/bin/a" },
      { name: "x", command: 1 },
      { name: "x", command: "/bin/x2" },
      { name: "y", command: "/bin/y" },
      { name: "y", command: "/bin/y2" },
    ]);
    assert.deepEqual(result.problems.map((p) => p.path), [
      "/0/name",
      "/1/name",
      "/2/name",
      "/3/command",
      "/4/name",
      "/6/name",
    ]);
    assert.match(result.problems[4]!.message, /duplicate server name "x" \(first defined at \/3\/name\)/);
    assert.deepEqual(result.servers.map((s) => [s.name, s.command]), [["y", "/bin/y"]]);
  });

  test("a suspiciously short timeout is a warning (values are ms)", () => {
    const result = parseNativeConfig([{ name: "t", command: "/bin/t", timeout: 30 }]);
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]!.severity, "warning");
    assert.match(result.problems[0]!.message, /milliseconds, not seconds/);
    assert.equal(result.servers[0]!.timeout, 30);
  });

  test("enabled and disabled that contradict each other are an error", () => {
    const result = parseNativeConfig([{ name: "c", command: "/bin/c", enabled: true, disabled: true }]);
    assert.deepEqual(result.problems.map((p) => p.path), ["/0/disabled"]);
  });

  test("not a list at all", () => {
    assert.deepEqual(parseNativeConfig(null).problems.map((p) => p.message), [
      "must be an array of servers, or an object with a servers array (got null)",
    ]);
    assert.deepEqual(parseNativeConfig({ servers: {} }).problems.map((p) => p.path), ["/servers"]);
  });

  test("no problem message carries an env or header value", () => {
    const result = parseNativeConfig([
      { name: "a", transport: "stdio", command: "/bin/a", env: { "X=Y": SECRET }, headers: { Authorization: SECRET } },
      { name: "b", url: `https://b.example/?k=${SECRET}`, headers: { "Bad Header": SECRET, Authorization: `Bearer ${SECRET}\n` } },
    ]);
    assert.ok(result.problems.length >= 3);
    for (const problem of result.problems) {
      assert.ok(!formatProblem(problem).includes(SECRET), formatProblem(problem));
    }
  });
});

describe("withDefaults", () => {
  test("fills the issue's defaults; restartOnCrash depends on the transport", () => {
    const stdio = withDefaults({ name: "s", transport: "stdio", command: "/bin/s" });
    assert.deepEqual(stdio, {
      name: "s",
      transport: "stdio",
      command: "/bin/s",
      args: [],
      env: {},
      headers: {},
      enabled: true,
      timeout: 30_000,
      toolTimeout: 120_000,
      restartOnCrash: true,
      maxRestarts: 5,
      trust: "untrusted",
      resources: true,
    });
    assert.equal(withDefaults({ name: "h", transport: "http", url: "https://h" }).restartOnCrash, false);
    assert.equal(CONFIG_DEFAULTS.trust, "untrusted");
  });

  test("keeps what the config says", () => {
    const resolved = withDefaults({ name: "h", transport: "sse", url: "https://h", timeout: 5, trust: "trusted", restartOnCrash: true, maxRestarts: 0, enabled: false });
    assert.equal(resolved.timeout, 5);
    assert.equal(resolved.trust, "trusted");
    assert.equal(resolved.restartOnCrash, true);
    assert.equal(resolved.maxRestarts, 0);
    assert.equal(resolved.enabled, false);
  });
});

describe("formatProblem", () => {
  test("one line with severity, source and path", () => {
    assert.equal(
      formatProblem({ path: "/mcpServers/x/type", message: "bad", severity: "error", source: ".mcp.json" }),
      "[error] .mcp.json#/mcpServers/x/type: bad",
    );
    assert.equal(formatProblem({ path: "", message: "invalid JSON", severity: "warning" }), "[warning] /: invalid JSON");
  });
});
