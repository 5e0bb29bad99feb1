/** What a reload of an ACP session changes, and opens of one session id running in turn. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rootsOf, serverChanges } from "../../src/acp/session-servers.ts";
import type { McpServerConfig } from "../../src/config/types.ts";
import { memorySessions } from "./helpers.ts";

const stdio = (name: string, extra: Partial<McpServerConfig> = {}): McpServerConfig => ({ name, transport: "stdio", command: "/bin/srv", args: ["--x"], env: { A: "1", B: "2" }, ...extra });
const http = (name: string) => ({ type: "http", name, url: "http://127.0.0.1:9/mcp", headers: [] });

test("serverChanges: the same config (key order aside) is kept; a changed one stops and starts; a gone one stops; a new one starts", () => {
  const running = [stdio("same"), stdio("changed"), stdio("gone")];
  const next = [stdio("same", { env: { B: "2", A: "1" } }), stdio("changed", { args: ["--y"] }), stdio("new")];
  const changes = serverChanges(running, next);
  assert.deepEqual({ ...changes, start: changes.start.map((c) => c.name) }, { stop: ["changed", "gone"], start: ["changed", "new"], kept: ["same"] });
});

test("rootsOf: cwd then the additional directories, absolute paths only, each once", () => {
  assert.deepEqual(rootsOf({ cwd: "/w/app", additionalDirectories: ["/w/lib", "rel", 7, "/w/app", "/"] }), [
    { uri: "file:///w/app", name: "app" },
    { uri: "file:///w/lib", name: "lib" },
    { uri: "file:///" },
  ]);
});

test("opens of one session id run in turn: two at once leave one manager, and a server they share starts once", async () => {
  const s = await memorySessions({ globalConfigDir: false, workspaceConfig: false });
  try {
    await Promise.all([s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m")] }), s.sessions.open("a", { cwd: "/tmp", mcpServers: [http("m"), http("n")] })]);
    assert.deepEqual(s.sessions.status("a").map((st) => [st.name, st.state]), [["m", "ready"], ["n", "ready"]]);
    assert.equal(s.servers.processes.get("m")!.length, 1);
    // A malformed list on a reload is refused before anything changes.
    await assert.rejects(s.sessions.open("a", { cwd: "/tmp", mcpServers: [{ name: "bad" }] }), { code: -32602 });
    assert.deepEqual(s.sessions.status("a").map((st) => st.state), ["ready", "ready"]);
  } finally {
    await s.close();
  }
});
