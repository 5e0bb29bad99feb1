/** McpClient and URL elicitation: declared modes, completion notices, and the -32042 error. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { UrlElicitationRequiredError, type ElicitationContext } from "../../src/mcp/client.ts";
import type { ElicitRequestParams, ElicitResult } from "../../src/mcp/types.ts";
import { connectPair } from "./client-helpers.ts";

const URL_ELICITATION = { mode: "url", elicitationId: "el-1", url: "https://auth.example.com/connect?e=1", message: "Connect your account" } as const;

/** A settled turn of the in-memory pair: what was sent has been handled. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("elicitation/create in a mode the client did not declare is -32602 (a missing mode means form); URL mode needs its fields", async () => {
  const seen: ElicitRequestParams[] = [];
  const urlOnly = await connectPair({ handlers: { elicitation: (p) => (seen.push(p), { action: "accept" }) }, elicitationModes: { form: false, url: true } });
  await urlOnly.client.connect(urlOnly.transport);
  assert.deepEqual(urlOnly.initParams()!.capabilities, { elicitation: { url: {} } });
  const form = { message: "name?", requestedSchema: { type: "object", properties: {} } };
  await assert.rejects(urlOnly.server.request("elicitation/create", form), { code: -32602, message: 'elicitation/create: this client did not declare "form" elicitation' });
  await assert.rejects(urlOnly.server.request("elicitation/create", { ...form, mode: "carrier-pigeon" }), { code: -32602 });
  await assert.rejects(urlOnly.server.request("elicitation/create", { mode: "url", message: "x", url: "https://a.example" }), {
    code: -32602,
    message: "elicitation/create: URL mode needs message, elicitationId and url strings",
  });
  assert.deepEqual(await urlOnly.server.request("elicitation/create", URL_ELICITATION), { action: "accept" });
  assert.deepEqual(seen, [URL_ELICITATION]);
  await urlOnly.client.close();

  const formOnly = await connectPair({ handlers: { elicitation: () => ({ action: "decline" }) }, elicitationModes: { form: true } });
  await formOnly.client.connect(formOnly.transport);
  assert.deepEqual(formOnly.initParams()!.capabilities, { elicitation: { form: {} } });
  await assert.rejects(formOnly.server.request("elicitation/create", URL_ELICITATION), { code: -32602 });
  assert.deepEqual(await formOnly.server.request("elicitation/create", form), { action: "decline" });
  await formOnly.client.close();
});

test("notifications/elicitation/complete is emitted once for a URL elicitation the client saw; unknown and repeated ids are ignored", async () => {
  const contexts: ElicitationContext[] = [];
  const pair = await connectPair({ handlers: { elicitation: (_p, ctx) => (contexts.push(ctx), { action: "accept" }) } });
  await pair.client.connect(pair.transport);
  const completed: string[] = [];
  pair.client.on("elicitationComplete", (e) => completed.push(e.elicitationId));
  await pair.server.request("elicitation/create", URL_ELICITATION);
  assert.equal(contexts[0]!.request?.method, "elicitation/create");
  assert.equal(contexts[0]!.requiredBy, undefined);
  await pair.server.notify("notifications/elicitation/complete", { elicitationId: "never-asked" });
  await pair.server.notify("notifications/elicitation/complete", { elicitationId: "el-1" });
  await pair.server.notify("notifications/elicitation/complete", { elicitationId: "el-1" });
  await pair.server.notify("notifications/elicitation/complete", { elicitationId: 7 });
  await settle();
  assert.deepEqual(completed, ["el-1"]);
  await pair.client.close();
});

test("-32042 becomes UrlElicitationRequiredError carrying the elicitations, after the elicitation handler was asked about each", async () => {
  const asked: Array<[ElicitRequestParams, string | undefined, boolean]> = [];
  const answers: ElicitResult[] = [{ action: "accept" }, { action: "decline" }];
  const pair = await connectPair({ handlers: { elicitation: (p, ctx) => (asked.push([p, ctx.requiredBy, ctx.request === undefined]), answers.shift()!) } });
  const second = { ...URL_ELICITATION, elicitationId: "el-2", url: "https://pay.example.org/x" };
  const data = { elicitations: [URL_ELICITATION, { mode: "url", message: "no id or url" }, second] };
  pair.server.setRequestHandler("tools/call", () => {
    throw new RpcError(-32042, "This request requires more information.", data);
  });
  pair.server.setRequestHandler("resources/read", () => {
    throw new RpcError(-32042, "Authorization required", { elicitations: [URL_ELICITATION] });
  });
  await pair.client.connect(pair.transport);
  const completed: string[] = [];
  pair.client.on("elicitationComplete", (e) => completed.push(e.elicitationId));

  const err = await pair.client.callTool("needs_auth").then(
    () => assert.fail("the call succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof UrlElicitationRequiredError);
  assert.ok(err instanceof RpcError, "still an RpcError for code that switches on wire codes");
  assert.deepEqual(
    { code: err.code, method: err.method, elicitations: err.elicitations, outcomes: err.outcomes, data: err.data },
    { code: -32042, method: "tools/call", elicitations: [URL_ELICITATION, second], outcomes: [{ action: "accept" }, { action: "decline" }], data },
  );
  assert.equal(
    err.message,
    "tools/call: the server requires 2 URL elicitation(s) first (auth.example.com, pay.example.org): This request requires more information.; the user answered accept, decline; retry once completed",
  );
  assert.deepEqual(asked, [
    [URL_ELICITATION, "tools/call", true],
    [second, "tools/call", true],
  ]);
  // Their completion notices now reach the app.
  await pair.server.notify("notifications/elicitation/complete", { elicitationId: "el-2" });
  await settle();
  assert.deepEqual(completed, ["el-2"]);
  // Requests other than tools/call are handled the same way.
  answers.push({ action: "cancel" });
  await assert.rejects(pair.client.readResource("x://y"), { name: "UrlElicitationRequiredError", method: "resources/read", outcomes: [{ action: "cancel" }] });
  await pair.client.close();
});

test("-32042 without an elicitation handler (or without URL mode) is still typed, and says nobody was asked", async () => {
  for (const options of [{}, { handlers: { elicitation: () => ({ action: "accept" as const }) }, elicitationModes: { form: true } }]) {
    const pair = await connectPair(options);
    pair.server.setRequestHandler("tools/call", () => {
      throw new RpcError(-32042, "Authorization required", { elicitations: [URL_ELICITATION] });
    });
    await pair.client.connect(pair.transport);
    await assert.rejects(pair.client.callTool("needs_auth"), {
      name: "UrlElicitationRequiredError",
      code: -32042,
      elicitations: [URL_ELICITATION],
      outcomes: undefined,
      message: "tools/call: the server requires 1 URL elicitation(s) first (auth.example.com): Authorization required; none was shown to the user (no elicitation handler with URL mode); retry once completed",
    });
    await pair.client.close();
  }
});
