/**
 * The client features of an ACP session's servers: roots from the session's directories,
 * sampling and elicitation through the agent's handlers, told the session and the server.
 * The server is a real child (fixtures/servers/client-features.ts).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Agent } from "../../src/acp/connection.ts";
import { AcpMcpSessions, type AcpMcpSessionsOptions, type SessionRequestContext } from "../../src/acp/sessions.ts";
import { alive } from "../e2e/helpers.ts";
import { fixtureEntry } from "../e2e/acp-helpers.ts";
import { pair } from "./helpers.ts";
import { until } from "../helpers/wait.ts";

const dir = mkdtempSync(join(tmpdir(), "acp-features-"));
const app = join(dir, "app");
const lib = join(dir, "lib");
for (const d of [app, lib]) mkdirSync(d);
after(() => rmSync(dir, { recursive: true, force: true }));

/** Opens session "s" with the fixture as the editor's server "feat"; runs `body`; checks the child is gone. */
async function withSession(options: AcpMcpSessionsOptions, request: { cwd: string; additionalDirectories?: string[] }, body: (call: (tool: string, args?: Record<string, unknown>) => Promise<unknown>) => Promise<void>): Promise<void> {
  let sessions!: AcpMcpSessions;
  const agent: Agent = { initialize: () => ({}), newSession: () => ({ sessionId: "unused" }), prompt: () => ({ stopReason: "end_turn" }), cancel: () => {} };
  const p = await pair((conn) => (sessions = new AcpMcpSessions(conn, { globalConfigDir: false, workspaceConfig: false, wrapClientServers: false, manager: { processGuard: false }, ...options }), agent));
  await p.editor.request("initialize", { protocolVersion: 1 });
  try {
    await sessions.open("s", { ...request, mcpServers: [fixtureEntry("feat", "client-features.ts")] });
    const pid = sessions.status("s")[0]?.pid;
    assert.equal(sessions.status("s")[0]?.state, "ready", sessions.status("s")[0]?.lastError);
    await body(async (tool, args = {}) => {
      const result = await sessions.callTool("s", `mcp__feat__${tool}`, args);
      return result.isError ? { error: result.text } : JSON.parse(result.text);
    });
    await sessions.close("s");
    assert.equal(alive(pid), false);
  } finally {
    await sessions.closeAll();
    await p.close();
  }
}

test("roots are the session's cwd and additionalDirectories by default, declared with listChanged; roots: false declares none", async () => {
  await withSession({}, { cwd: app, additionalDirectories: [lib, "not/absolute"] }, async (call) => {
    assert.deepEqual(await call("capabilities"), { roots: { listChanged: true } });
    assert.deepEqual(await call("roots"), { roots: [{ uri: pathToFileURL(app).href, name: "app" }, { uri: pathToFileURL(lib).href, name: "lib" }], changes: 0 });
  });
  await withSession({ clientFeatures: { roots: false } }, { cwd: app }, async (call) => {
    assert.deepEqual(await call("capabilities"), {});
  });
});

test("sampling and elicitation go to the agent's handlers with the session and the server named; completion notices too", async () => {
  const asked: Array<[string, SessionRequestContext]> = [];
  const completed: unknown[] = [];
  const options: AcpMcpSessionsOptions = {
    clientFeatures: {
      roots: false,
      sampling: (_params, ctx) => (asked.push(["sampling", ctx]), { role: "assistant", content: { type: "text", text: "ok" }, model: "m" }),
      elicitation: (params, ctx) => (asked.push([`elicitation ${params.mode ?? "form"}`, ctx]), { action: "accept" }),
      elicitationModes: { url: true, form: false },
      onElicitationComplete: (event) => completed.push(event),
    },
  };
  await withSession(options, { cwd: app }, async (call) => {
    assert.deepEqual(await call("capabilities"), { sampling: {}, elicitation: { url: {} } });
    assert.deepEqual(await call("sample", { prompt: "hi" }), { role: "assistant", content: { type: "text", text: "ok" }, model: "m" });
    assert.deepEqual(await call("elicit", { mode: "url" }), { action: "accept" });
    assert.match((await call("needs_auth") as { error: string }).error, /requires 1 URL elicitation\(s\) first \(auth\.example\.com\)/);
    assert.equal(await call("finish_auth"), "done");
    await until(() => completed.length === 1, "the completion notice");
    assert.deepEqual(
      asked.map(([what, ctx]) => [what, ctx.sessionId, ctx.server, ctx.requiredBy]),
      [
        ["sampling", "s", "feat", undefined],
        ["elicitation url", "s", "feat", undefined],
        ["elicitation url", "s", "feat", "tools/call"],
      ],
    );
    assert.deepEqual(completed, [{ sessionId: "s", server: "feat", elicitationId: "auth-1" }]);
  });
});
