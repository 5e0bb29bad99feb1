/**
 * Roots, sampling and elicitation through the manager, with a real child server
 * (fixtures/servers/client-features.ts) that sends the requests.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ServerRequestContext } from "../../src/manager/client-features.ts";
import { McpManager, type McpManagerOptions } from "../../src/manager/manager.ts";
import type { ElicitRequestParams } from "../../src/mcp/types.ts";
import { alive } from "../e2e/helpers.ts";
import { fixtureConfig } from "../e2e/manager-helpers.ts";
import { until } from "../helpers/wait.ts";
import { isModernVersion } from "../../src/mcp/versions.ts";

const AUTH = { mode: "url", elicitationId: "auth-1", url: "https://auth.example.com/connect?elicitation=auth-1", message: "Connect your Example account" };

/** A manager with the fixture as server "feat"; closes it and checks the child is gone. */
async function withFeatures(options: McpManagerOptions, body: (manager: McpManager) => Promise<void>): Promise<void> {
  const manager = new McpManager({ processGuard: false, rateLimit: false, ...options });
  const [status] = await manager.connect([fixtureConfig("feat", "client-features.ts", [], { env: { FEAT_TOKEN: "tok-5551234567" } })]);
  const pid = status!.pid;
  try {
    assert.equal(status!.state, "ready", status!.lastError);
    await body(manager);
  } finally {
    await manager.close();
    assert.equal(alive(pid), false);
  }
}

/** The JSON a fixture tool answered, or the error text. */
async function call(manager: McpManager, tool: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const result = await manager.callTool(`mcp__feat__${tool}`, args);
  return result.isError ? { error: result.text } : JSON.parse(result.text);
}

test("without client features nothing is declared, and the server's roots/list and sampling requests are refused", async () => {
  await withFeatures({}, async (manager) => {
    assert.deepEqual(await call(manager, "capabilities"), {});
    assert.match(String((await call(manager, "roots") as { error: string }).error), /roots/);
    assert.match(String((await call(manager, "sample", { prompt: "hi" }) as { error: string }).error), /sampling/);
  });
});

test("roots and sampling reach the agent's handlers, named by server and redacted; only what is supplied is declared; rootsChanged tells the server", async () => {
  const asked: Array<[string, unknown, ServerRequestContext]> = [];
  let roots = [{ uri: "file:///work/project", name: "project" }];
  await withFeatures(
    {
      clientFeatures: {
        roots: (ctx) => (asked.push(["roots", undefined, ctx]), roots),
        sampling: (params, ctx) => {
          asked.push(["sampling", params.messages, ctx]);
          return { role: "assistant", content: { type: "text", text: "four" }, model: "scripted" };
        },
      },
    },
    async (manager) => {
      assert.deepEqual(await call(manager, "capabilities"), { roots: { listChanged: true }, sampling: {} });
      assert.deepEqual(await call(manager, "roots"), { roots, changes: 0 });
      assert.deepEqual(await call(manager, "sample", { prompt: "2+2?" }), { role: "assistant", content: { type: "text", text: "four" }, model: "scripted" });
      // A known secret the server sends back is redacted before the agent (and its model) sees it.
      await call(manager, "sample", { prompt: "key tok-5551234567" });
      assert.deepEqual(
        asked.map(([kind, params, ctx]) => [kind, params, ctx.server, ctx.signal instanceof AbortSignal]),
        [
          ["roots", undefined, "feat", true],
          ["sampling", [{ role: "user", content: { type: "text", text: "2+2?" } }], "feat", true],
          ["sampling", [{ role: "user", content: { type: "text", text: "key [REDACTED]" } }], "feat", true],
        ],
      );
      // The roots change: the server reads the new ones. The handshake era tells it
      // (roots/list_changed); the stateless one has no such notice, its server asks for the
      // roots on every call (input_required).
      roots = [{ uri: "file:///work/other", name: "other" }];
      await manager.rootsChanged();
      const told = isModernVersion(manager.status()[0]!.protocolVersion) ? 0 : 1;
      assert.deepEqual(await call(manager, "roots"), { roots, changes: told });
      // No elicitation handler: the server may not elicit.
      assert.match(String((await call(manager, "elicit", { mode: "form" }) as { error: string }).error), /elicitation/);
    },
  );
});

test("elicitation: form and URL requests reach the handler; a -32042 call shows its URL elicitation through it, and the completion notice is reported", async () => {
  const elicited: Array<[ElicitRequestParams, ServerRequestContext]> = [];
  const completed: unknown[] = [];
  await withFeatures(
    {
      clientFeatures: {
        elicitation: (params, ctx) => {
          elicited.push([params, ctx]);
          return params.mode === "url" ? { action: "accept" } : { action: "accept", content: { name: "Ada" } };
        },
        onElicitationComplete: (event) => completed.push(event),
      },
    },
    async (manager) => {
      assert.deepEqual(await call(manager, "capabilities"), { elicitation: { form: {}, url: {} } });
      assert.deepEqual(await call(manager, "elicit", { mode: "form" }), { action: "accept", content: { name: "Ada" } });
      assert.deepEqual(await call(manager, "elicit", { mode: "url" }), { action: "accept" });

      const refused = await manager.callTool("mcp__feat__needs_auth", {});
      assert.equal(refused.isError, true);
      assert.match(refused.text, /requires 1 URL elicitation\(s\) first \(auth\.example\.com\): Authorization required; the user answered accept; retry once completed/);
      assert.deepEqual(
        elicited.map(([p, ctx]) => [p.mode ?? "form", ctx.server, ctx.requiredBy]),
        [
          ["form", "feat", undefined],
          ["url", "feat", undefined],
          ["url", "feat", "tools/call"],
        ],
      );
      assert.deepEqual(elicited[2]![0], AUTH);

      assert.deepEqual(await call(manager, "finish_auth"), "done");
      await until(() => completed.length === 1, "the completion notice");
      assert.deepEqual(completed, [{ server: "feat", elicitationId: "auth-1" }]);
      assert.deepEqual(await call(manager, "needs_auth"), "authorised");
    },
  );
});
