import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { defaultGlobalConfigDir, discoverConfigs } from "../../src/config/discovery.ts";
import type { McpServerConfig } from "../../src/config/types.ts";

const SECRET = "ghp_DISCOVERY_SECRET_0042";
const roots: string[] = [];

after(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** A fresh temp dir holding `files` (relative path -> text or JSON value). */
async function tree(files: Record<string, unknown>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "mcp-config-"));
  roots.push(root);
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(join(path, ".."), { recursive: true });
    await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  }
  return root;
}

const stdio = (command: string) => ({ command });

describe("discoverConfigs", () => {
  test("layers merge by name, later winning: global files < workspace < agent < session", async () => {
    const root = await tree({
      "global/10-base.json": { mcpServers: { a: stdio("/g/a"), b: stdio("/g/b"), c: stdio("/g/c"), d: stdio("/g/d") } },
      "global/20-over.json": { mcpServers: { b: stdio("/g2/b") } },
      "global/notes.txt": "not json {",
      "work/.mcp.json": { mcpServers: { c: stdio("/w/c") } },
      "work/.mcp-bridge.json": { servers: [{ name: "w", command: "/w/w" }] },
    });
    const agent: McpServerConfig[] = [{ name: "d", transport: "stdio", command: "/agent/d" }];
    const session: McpServerConfig[] = [{ name: "s", transport: "http", url: "https://s.example/mcp" }];
    const logs: string[] = [];
    const result = await discoverConfigs({
      globalDir: join(root, "global"),
      cwd: join(root, "work"),
      agentServers: agent,
      sessionServers: session,
      log: (m) => logs.push(m),
    });
    assert.deepEqual(result.problems, []);
    assert.deepEqual(
      result.servers.map((s) => [s.name, s.command ?? s.url]),
      [
        ["a", "/g/a"],
        ["b", "/g2/b"],
        ["c", "/w/c"],
        ["d", "/agent/d"],
        ["w", "/w/w"],
        ["s", "https://s.example/mcp"],
      ],
    );
    assert.deepEqual(result.sources, {
      a: join(root, "global/10-base.json"),
      b: join(root, "global/20-over.json"),
      c: join(root, "work/.mcp.json"),
      d: "agent",
      w: join(root, "work/.mcp-bridge.json"),
      s: "session",
    });
    assert.equal(logs.length, 3);
    assert.ok(logs.some((l) => l.includes('server "b"') && l.includes("20-over.json") && l.includes("10-base.json")));
  });

  test("global files are read in sorted order whatever the directory order", async () => {
    const root = await tree({
      "g/b.json": { mcpServers: { x: stdio("/from/b") } },
      "g/a.json": { mcpServers: { x: stdio("/from/a") } },
      "g/C.json": { mcpServers: { x: stdio("/from/C") } },
    });
    const result = await discoverConfigs({ globalDir: join(root, "g") });
    // Code-unit order: "C" < "a" < "b", so b.json is read last and wins.
    assert.equal(result.servers[0]!.command, "/from/b");
    assert.equal(result.sources.x, join(root, "g/b.json"));
  });

  test("enabled: false in a later layer removes an inherited server, with a log line", async () => {
    const root = await tree({
      "g/base.json": { mcpServers: { keep: stdio("/g/keep"), drop: stdio("/g/drop"), drop2: stdio("/g/drop2") } },
      "w/.mcp.json": { mcpServers: { drop: { disabled: true } } },
    });
    const logs: string[] = [];
    const result = await discoverConfigs({
      globalDir: join(root, "g"),
      cwd: join(root, "w"),
      sessionServers: [{ name: "drop2", transport: "stdio", enabled: false }],
      log: (m) => logs.push(m),
    });
    assert.deepEqual(result.problems, []);
    assert.deepEqual(result.servers.map((s) => s.name), ["keep"]);
    assert.deepEqual(Object.keys(result.sources), ["keep"]);
    assert.deepEqual(logs, [
      `config: server "drop" from ${join(root, "g/base.json")} is disabled by ${join(root, "w/.mcp.json")}`,
      `config: server "drop2" from ${join(root, "g/base.json")} is disabled by session`,
    ]);
  });

  test("a disabled server that nothing defines is simply absent", async () => {
    const result = await discoverConfigs({ agentServers: [{ name: "ghost", transport: "stdio", enabled: false }] });
    assert.deepEqual(result.servers, []);
    assert.deepEqual(result.problems, []);
  });

  test("a session server shadows the agent's one of the same name, logged without secrets", async () => {
    const logs: string[] = [];
    const result = await discoverConfigs({
      agentServers: [{ name: "gh", transport: "stdio", command: "/agent/gh", env: { GITHUB_TOKEN: SECRET } }],
      sessionServers: [{ name: "gh", transport: "http", url: "https://gh.example/mcp", headers: { Authorization: `Bearer ${SECRET}` } }],
      log: (m) => logs.push(m),
    });
    assert.deepEqual(result.servers.map((s) => [s.name, s.transport]), [["gh", "http"]]);
    assert.equal(result.sources.gh, "session");
    assert.deepEqual(logs, ['config: session server "gh" shadows the agent\'s server of the same name']);
    assert.ok(!logs.join("\n").includes(SECRET));
  });

  test("invalid JSON and unreadable files become problems with the path; other files still count", async () => {
    const root = await tree({
      "g/1-bad.json": `{"mcpServers": {"x": {"command": "/bin/x", "env": {"TOKEN": "${SECRET}"}}`,
      "g/2-good.json": { mcpServers: { good: stdio("/bin/good") } },
      "g/3-dir.json/inner.txt": "a directory named like a config file",
      "w/.mcp.json": "[1,",
    });
    const result = await discoverConfigs({ globalDir: join(root, "g"), cwd: join(root, "w") });
    assert.deepEqual(result.servers.map((s) => s.name), ["good"]);
    assert.deepEqual(
      result.problems.map((p) => [p.source, p.path, p.severity]),
      [
        [join(root, "g/1-bad.json"), "", "error"],
        [join(root, "g/3-dir.json"), "", "error"],
        [join(root, "w/.mcp.json"), "", "error"],
      ],
    );
    assert.match(result.problems[0]!.message, /^invalid JSON/);
    assert.equal(result.problems[1]!.message, "is not a regular file");
    assert.ok(!JSON.stringify(result.problems).includes(SECRET));
  });

  test("missing directory and missing workspace files are not problems", async () => {
    const root = await tree({});
    const result = await discoverConfigs({ globalDir: join(root, "nope"), cwd: root });
    assert.deepEqual(result, { servers: [], problems: [], sources: {} });
  });

  test("a global path that is a file is a problem", async () => {
    const root = await tree({ "file.json": { mcpServers: {} } });
    const result = await discoverConfigs({ globalDir: join(root, "file.json") });
    assert.equal(result.problems.length, 1);
    assert.equal(result.problems[0]!.source, join(root, "file.json"));
    assert.match(result.problems[0]!.message, /cannot list the config directory \(ENOTDIR\)/);
  });

  test("problems inside files, agent and session lists carry their source", async () => {
    const root = await tree({ "w/.mcp.json": { mcpServers: { bad: { type: "websocket", url: "https://x" } } } });
    const result = await discoverConfigs({
      cwd: join(root, "w"),
      agentServers: [{ name: "a", transport: "stdio" } as McpServerConfig],
      sessionServers: [{ name: "s", transport: "http", url: "not a url" }],
    });
    assert.deepEqual(result.problems.map((p) => [p.source, p.path]), [
      [join(root, "w/.mcp.json"), "/mcpServers/bad/type"],
      ["agent", "/0/command"],
      ["session", "/0/url"],
    ]);
    assert.deepEqual(result.servers, []);
  });

  test("a broken later entry does not remove the inherited server", async () => {
    const root = await tree({
      "g/base.json": { mcpServers: { fs: stdio("/g/fs") } },
      "w/.mcp.json": { mcpServers: { fs: { command: 42 } } },
    });
    const result = await discoverConfigs({ globalDir: join(root, "g"), cwd: join(root, "w") });
    assert.deepEqual(result.servers.map((s) => s.command), ["/g/fs"]);
    assert.deepEqual(result.problems.map((p) => p.path), ["/mcpServers/fs/command"]);
  });

  test("servers from files are untrusted unless a global file says otherwise", async () => {
    const root = await tree({
      "g/base.json": { servers: [{ name: "t", command: "/t", trust: "trusted" }] },
      "w/.mcp-bridge.json": { servers: [{ name: "u", command: "/u" }] },
    });
    const result = await discoverConfigs({
      globalDir: join(root, "g"),
      cwd: join(root, "w"),
      sessionServers: [{ name: "s", transport: "stdio", command: "npx" }],
    });
    assert.deepEqual(result.servers.map((s) => [s.name, s.trust]), [
      ["t", "trusted"],
      ["u", "untrusted"],
      ["s", undefined],
    ]);
  });
});

test("a workspace file cannot mark a server trusted", async () => {
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-ws-"));
  try {
    await writeFile(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { x: { command: "/bin/true", trust: "trusted" } } }));
    const r = await discoverConfigs({ cwd: dir });
    assert.equal(r.servers[0]!.trust, "untrusted");
    assert.ok(r.problems.some((p) => p.severity === "warning" && /cannot mark server "x" trusted/.test(p.message)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the default global directory is $XDG_CONFIG_HOME/mcp-bridge, else ~/.config/mcp-bridge (a relative XDG_CONFIG_HOME is ignored)", () => {
  assert.equal(defaultGlobalConfigDir({ XDG_CONFIG_HOME: "/x/conf" }, "/home/ada"), "/x/conf/mcp-bridge");
  assert.equal(defaultGlobalConfigDir({}, "/home/ada"), "/home/ada/.config/mcp-bridge");
  assert.equal(defaultGlobalConfigDir({ XDG_CONFIG_HOME: "" }, "/home/ada"), "/home/ada/.config/mcp-bridge");
  assert.equal(defaultGlobalConfigDir({ XDG_CONFIG_HOME: "rel/conf" }, "/home/ada"), "/home/ada/.config/mcp-bridge");
});
