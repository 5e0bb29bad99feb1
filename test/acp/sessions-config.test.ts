/**
 * AcpMcpSessions reads config files: the global directory and the session's `cwd`, layered
 * under the agent's and the editor's servers (temp dirs, in-process servers).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memConfig } from "../manager/helpers.ts";
import { memorySessions } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "acp-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `files` (path relative to a fresh folder -> JSON) and returns the folder. */
function folder(name: string, files: Record<string, unknown>): string {
  const root = join(dir, name);
  for (const [rel, value] of Object.entries(files)) {
    mkdirSync(join(root, rel, ".."), { recursive: true });
    writeFileSync(join(root, rel), JSON.stringify(value));
  }
  return root;
}

const URL = "http://127.0.0.1:9/mcp";
const remote = (extra: Record<string, unknown> = {}) => ({ type: "http", url: URL, ...extra });

test("open layers the global files, the cwd's workspace files, the agent's and the editor's servers; a workspace file cannot grant trust", async () => {
  const global = folder("global", {
    "10-main.json": { mcpServers: { g: remote({ trust: "trusted" }), shared: remote({ trust: "trusted" }), agentwins: remote(), editorwins: remote(), gone: remote() } },
  });
  const work = folder("work", {
    ".mcp.json": { mcpServers: { w: remote({ trust: "trusted" }), shared: remote() } },
    ".mcp-bridge.json": { servers: [{ name: "gone", enabled: false }] },
  });
  const s = await memorySessions({ globalConfigDir: global, agentServers: [memConfig("agentwins"), memConfig("own")] });
  try {
    await s.sessions.open("a", { cwd: work, mcpServers: [{ type: "http", name: "editorwins", url: URL, headers: [] }] });
    assert.deepEqual(s.trustOf("a"), {
      g: "trusted", // a global file may grant trust
      shared: "untrusted", // the workspace's definition replaced the global one
      agentwins: "trusted",
      editorwins: "trusted",
      w: "untrusted", // downgraded: the workspace came with the repository
      own: "trusted",
    });
    const text = s.logs.join("\n");
    assert.match(text, /cannot mark server "w" trusted; it stays untrusted/);
    assert.match(text, /server "shared" from .*work\/\.mcp\.json replaces the one from .*global\/10-main\.json/);
    assert.match(text, /server "gone" from .*10-main\.json is disabled by .*\.mcp-bridge\.json/);
    assert.match(text, /server "editorwins" from session replaces the one from .*10-main\.json/);
    assert.ok(s.sessions.status("a").every((st) => st.state === "ready"));
  } finally {
    await s.close();
  }
});

test("the global directory defaults to $XDG_CONFIG_HOME/mcp-bridge; globalConfigDir: false and workspaceConfig: false read nothing", async () => {
  const xdg = folder("xdg", { "mcp-bridge/servers.json": { mcpServers: { fromxdg: remote({ trust: "trusted" }) } } });
  const work = folder("work2", { ".mcp.json": { mcpServers: { w: remote() } } });
  const saved = process.env.XDG_CONFIG_HOME;
  process.env.XDG_CONFIG_HOME = xdg;
  const byDefault = await memorySessions({});
  const none = await memorySessions({ globalConfigDir: false, workspaceConfig: false });
  try {
    await byDefault.sessions.open("a", { cwd: work, mcpServers: [] });
    assert.deepEqual(byDefault.trustOf("a"), { fromxdg: "trusted", w: "untrusted" });
    await none.sessions.open("b", { cwd: work, mcpServers: [] });
    assert.deepEqual(none.trustOf("b"), {});
  } finally {
    if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
    else process.env.XDG_CONFIG_HOME = saved;
    await byDefault.close();
    await none.close();
  }
});
