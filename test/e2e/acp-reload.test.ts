/**
 * The reference ACP agent as a child process: `session/load` and `session/resume` of an open
 * session keep the servers whose config did not change (same pids), a global config file joins
 * every session, and the session's directories are its servers' roots.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { SessionUpdate } from "../../src/acp/types.ts";
import { alive, ROOT, waitGone } from "./helpers.ts";
import { fixtureEntry, INIT, messagesText, prompt, startAgent, type AgentProcess } from "./acp-helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "acp-reload-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The one pid the agent logged for `server`, asserting it started exactly once. */
function onlyPid(agent: AgentProcess, server: string): number {
  const pids = agent.pidsOf(server);
  assert.equal(pids.length, 1, `${server} started ${pids.length} times`);
  return pids[0]!;
}

/** The JSON the fixture's `roots` tool answered in the session's last completed tool call. */
function lastRoots(updates: readonly SessionUpdate[]): unknown {
  const done = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed").at(-1);
  const text = done?.sessionUpdate === "tool_call_update" ? (done.content ?? []).map((c) => ("content" in c && c.content.type === "text" ? c.content.text : "")).join("") : "";
  // The text may be wrapped in untrusted-content markers; the answer is the JSON inside.
  const json = /\{"roots":.*"changes":\d+\}/.exec(text);
  assert.ok(json !== null, `no roots answer in ${JSON.stringify(text)}`);
  return JSON.parse(json[0]);
}

test("load and resume of an open session: unchanged servers keep running, changed and removed ones stop, new ones start; without mcpServers nothing moves", async () => {
  const xdg = join(dir, "xdg");
  mkdirSync(join(xdg, "mcp-bridge"), { recursive: true });
  const global = fixtureEntry("global", "echo.ts");
  writeFileSync(join(xdg, "mcp-bridge", "servers.json"), JSON.stringify({ mcpServers: { global: { command: global.command, args: global.args, trust: "trusted" } } }));
  const agent = await startAgent([], { XDG_CONFIG_HOME: xdg });
  try {
    await agent.editor.request("initialize", INIT);
    const a = fixtureEntry("a", "echo.ts");
    const b = fixtureEntry("b", "echo.ts");
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [a, b] });
    const [pa, pb, pg] = [onlyPid(agent, "a"), onlyPid(agent, "b"), onlyPid(agent, "global")];

    // b changes (one more argument), c is new, a is the same.
    const b2 = { ...b, args: [...b.args, "--changed"] };
    const c = fixtureEntry("c", "echo.ts");
    assert.deepEqual(await agent.editor.request("session/load", { sessionId, cwd: ROOT, mcpServers: [a, b2, c] }), {});
    assert.equal(onlyPid(agent, "a"), pa);
    assert.equal(onlyPid(agent, "global"), pg);
    assert.equal(await waitGone(pb), true, "the changed server's old process is gone");
    const [, pb2] = agent.pidsOf("b");
    const pc = onlyPid(agent, "c");
    assert.ok([pa, pb2, pc, pg].every((pid) => alive(pid)));

    // Without mcpServers (resume, and a lenient load), every server keeps running.
    assert.deepEqual(await agent.editor.request("session/resume", { sessionId, cwd: ROOT }), {});
    assert.deepEqual(await agent.editor.request("session/load", { sessionId, cwd: ROOT }), {});
    assert.deepEqual([agent.pidsOf("a"), agent.pidsOf("b"), agent.pidsOf("c"), agent.pidsOf("global")], [[pa], [pb, pb2], [pc], [pg]]);
    const mark = agent.updatesOf(sessionId).length;
    await prompt(agent, sessionId, "/tools");
    const listing = messagesText(agent.updatesOf(sessionId).slice(mark));
    for (const server of ["a", "b", "c", "global"]) assert.match(listing, new RegExp(`mcp__${server}__echo:`));
    assert.match(agent.stderr.join("\n"), /reloaded: kept "global", "a"; stopped "b"; starting "b", "c"/);

    // An empty list: the editor's servers stop; the global file's server stays.
    assert.deepEqual(await agent.editor.request("session/resume", { sessionId, cwd: ROOT, mcpServers: [] }), {});
    for (const pid of [pa, pb2, pc]) assert.equal(await waitGone(pid), true);
    assert.ok(alive(pg));
    assert.equal(agent.pidsOf("global").length, 1);
  } finally {
    await agent.stop();
  }
  for (const server of ["a", "b", "c", "global"]) for (const pid of agent.pidsOf(server)) assert.equal(alive(pid), false);
});

test("a session's servers get its cwd and additionalDirectories as roots; a resume that moves them reaches the running server", async () => {
  const extra = join(dir, "extra");
  mkdirSync(extra, { recursive: true });
  const agent = await startAgent();
  try {
    await agent.editor.request("initialize", INIT);
    const feat = fixtureEntry("feat", "client-features.ts");
    const { sessionId } = await agent.editor.request<{ sessionId: string }>("session/new", { cwd: ROOT, mcpServers: [feat], additionalDirectories: [extra, "relative/ignored"] });
    const pid = onlyPid(agent, "feat");
    await prompt(agent, sessionId, "/call mcp__feat__roots");
    const cwdRoot = { uri: pathToFileURL(ROOT).href, name: basename(ROOT) };
    assert.deepEqual(lastRoots(agent.updatesOf(sessionId)), { roots: [cwdRoot, { uri: pathToFileURL(extra).href, name: "extra" }], changes: 0 });

    await agent.editor.request("session/resume", { sessionId, cwd: ROOT, additionalDirectories: [] });
    assert.equal(onlyPid(agent, "feat"), pid, "the server kept running");
    await prompt(agent, sessionId, "/call mcp__feat__roots");
    // The fixture is dual-era, so the agent speaks the stateless era: no roots/list_changed
    // (changes stays 0), the server asks for the roots on each call and gets the new ones.
    assert.deepEqual(lastRoots(agent.updatesOf(sessionId)), { roots: [cwdRoot], changes: 0 });
  } finally {
    await agent.stop();
  }
  assert.equal(alive(agent.pidsOf("feat")[0]), false);
});
