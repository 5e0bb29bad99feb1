/**
 * Forwarding through `mcp-bridge serve`: what an upstream asks during a tool call
 * (elicitation, sampling, roots) reaches the downstream client whose call it is, and no other.
 * Real processes: serve over HTTP in front of two client-features fixture servers, and two
 * downstream clients with calls in flight at the same time.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CallForwarding } from "../../src/gateway/forwarding.ts";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import type { ClientHandlers } from "../../src/mcp/client.ts";
import { until, within } from "../helpers/wait.ts";
import { fixtureEntry, sharing, startServeHttp, textOf } from "./serve-helpers.ts";

/** A promise and its resolver, to hold a handler until the other client's call is in flight. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Handlers that record each question under `who` and answer as `who`. */
function answering(who: string, seen: string[], hold: Promise<void> = Promise.resolve()): ClientHandlers {
  return {
    elicitation: async (params) => {
      seen.push(`elicitation: ${params.message}`);
      await hold;
      return { action: "accept", content: { name: who } };
    },
    sampling: async (params) => {
      const first = params.messages[0]?.content as { text?: string } | undefined;
      seen.push(`sampling: ${first?.text}`);
      await hold;
      return { role: "assistant", model: `model-${who}`, content: { type: "text", text: `sampled by ${who}` } };
    },
    roots: () => {
      seen.push("roots");
      return [{ uri: `file:///home/${who}`, name: who }];
    },
  };
}

for (const era of ["legacy", "modern"] as const) {
  test(`two ${era === "legacy" ? "2025 (session)" : "stateless"} clients with calls in flight at once: each gets only the question of its own call's upstream`, { timeout: 120_000 }, async () => {
  // A stateless request has no session to own upstreams: it is served by shared ones only.
  const serve = await startServeHttp({ a: fixtureEntry("client-features.ts"), b: fixtureEntry("client-features.ts") }, [], era === "modern" ? sharing("a", "b") : undefined);
  try {
    const seenA: string[] = [];
    const seenB: string[] = [];
    // A's elicitation is answered only once B's sampling is asked: both calls are then in flight.
    const bAsked = gate();
    const alice = await serve.connect({ era, handlers: answering("alice", seenA, bAsked.opened) });
    const bob = await serve.connect({
      era,
      handlers: { ...answering("bob", seenB), sampling: async (params, ctx) => (bAsked.open(), answering("bob", seenB).sampling!(params, ctx)) },
    });
    const [elicited, sampled] = await Promise.all([
      alice.callTool("mcp__a__elicit", { mode: "form" }),
      bob.callTool("mcp__b__sample", { prompt: "for bob" }),
    ]);
    assert.deepEqual(JSON.parse(textOf(elicited)), { action: "accept", content: { name: "alice" } });
    assert.equal(JSON.parse(textOf(sampled)).model, "model-bob");
    assert.deepEqual(seenA, ["elicitation: Who are you?"]);
    assert.deepEqual(seenB, ["sampling: for bob"]);
    // Roots too: each client's own.
    const [rootsA, rootsB] = await Promise.all([alice.callTool("mcp__b__roots"), bob.callTool("mcp__a__roots")]);
    assert.deepEqual(JSON.parse(textOf(rootsA)).roots, [{ uri: "file:///home/alice", name: "alice" }]);
    assert.deepEqual(JSON.parse(textOf(rootsB)).roots, [{ uri: "file:///home/bob", name: "bob" }]);
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
  });
}

// 2025 sessions: a question is a request while the call waits, so both calls are in flight at
// once (a stateless client's call ends with the question, and its retry comes later).
test("calls of two session clients on one shared upstream connection: the question is refused, never shown to the other client", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({ a: fixtureEntry("client-features.ts") }, [], sharing("a"));
  try {
    const seenA: string[] = [];
    const seenB: string[] = [];
    const bDone = gate();
    const alice = await serve.connect({ era: "legacy", handlers: answering("alice", seenA, bDone.opened) });
    const bob = await serve.connect({ era: "legacy", handlers: answering("bob", seenB) });
    const aliceCall = alice.callTool("mcp__a__elicit", { mode: "form" });
    aliceCall.catch(() => undefined); // awaited below; a failure before that must not be unhandled
    // Bob calls once Alice's question is out (her call is in flight on "a" until she answers).
    await until(() => seenA.length > 0, "Alice's question");

    const refused = await bob.callTool("mcp__a__elicit", { mode: "form" }).finally(bDone.open);
    assert.equal(refused.isError, true, textOf(refused));
    assert.match(textOf(refused), /asks no client another client's question/);
    assert.deepEqual(seenB, []);
    assert.deepEqual(JSON.parse(textOf(await aliceCall)), { action: "accept", content: { name: "alice" } });
    assert.deepEqual(seenA, ["elicitation: Who are you?"]);
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("a client that declared no elicitation: the upstream's question fails its call with the reason", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({ a: fixtureEntry("client-features.ts") });
  try {
    const plain = await serve.connect();
    const result = await plain.callTool("mcp__a__elicit", { mode: "form" });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /elicitation/);
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("outside any call, an upstream's question is refused with a clear error", async () => {
  const forwarding = new CallForwarding();
  const signal = new AbortController().signal;
  await assert.rejects(Promise.resolve(forwarding.clientFeatures.roots!({ server: "fs", signal })), (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, -32600);
    assert.match(err.message, /^roots\/list: .*no call is running; ask during a tool call$/);
    return true;
  });
  const params = { messages: [], maxTokens: 1 };
  await assert.rejects(Promise.resolve(forwarding.clientFeatures.sampling!(params, { server: "fs", signal })), /sampling\/createMessage: .*no call is running/);
});

test("progress comes down to the caller's token, and a cancelled call is cancelled upstream", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-fwd-"));
  const received = join(dir, "received.log");
  const serve = await startServeHttp({ echo: fixtureEntry("echo.ts"), hang: fixtureEntry("faulty.ts", ["--hang-calls", "--log-received", received]) });
  try {
    const client = await serve.connect({ era: "legacy" });
    const seen: string[] = [];
    const done = await client.callTool("mcp__echo__slow_progress", { steps: 3, delayMs: 1 }, { onProgress: (p) => seen.push(`${p.progress}/${p.total}`) });
    assert.equal(textOf(done), "done after 3 steps");
    assert.deepEqual(seen, ["1/3", "2/3", "3/3"]);

    const abort = new AbortController();
    const call = client.callTool("mcp__hang__echo", { text: "never" }, { signal: abort.signal });
    call.catch(() => undefined); // awaited below
    const log = (): string => (existsSync(received) ? readFileSync(received, "utf8") : "");
    await until(() => log().includes("tools/call echo"), "the call to reach the upstream");
    abort.abort();
    await assert.rejects(call);
    await until(() => log().includes("notifications/cancelled"), "the upstream to be told of the cancellation");
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a cancelled call withdraws the question its upstream had put to the client", { timeout: 120_000 }, async () => {
  const serve = await startServeHttp({ a: fixtureEntry("client-features.ts") });
  try {
    const asked = gate();
    const withdrawn = gate();
    const client = await serve.connect({
      era: "legacy",
      handlers: {
        elicitation: (_params, ctx) =>
          new Promise((_resolve, reject) => {
            asked.open();
            ctx.signal.addEventListener("abort", () => (withdrawn.open(), reject(new Error("withdrawn"))), { once: true });
          }),
      },
    });
    const abort = new AbortController();
    const call = client.callTool("mcp__a__elicit", { mode: "form" }, { signal: abort.signal });
    call.catch(() => undefined); // awaited below
    await within(asked.opened, "the upstream's question to reach the client");
    abort.abort();
    await assert.rejects(call);
    await within(withdrawn.opened, "the question to be withdrawn (notifications/cancelled from serve)");
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
  }
});

test("a client that ends its session mid-call has the call cancelled upstream", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-fwd-"));
  const received = join(dir, "received.log");
  const serve = await startServeHttp({ hang: fixtureEntry("faulty.ts", ["--hang-calls", "--log-received", received]) });
  try {
    const leaving = await serve.connect({ era: "legacy" });
    const call = leaving.callTool("mcp__hang__echo", { text: "never" });
    call.catch(() => undefined); // it fails when the client closes; that is not the point here
    const log = (): string => (existsSync(received) ? readFileSync(received, "utf8") : "");
    await until(() => log().includes("tools/call echo"), "the call to reach the upstream");
    await leaving.close(); // DELETE: the session ends with the call in flight
    await until(() => log().includes("notifications/cancelled"), "the upstream to be told of the cancellation");
    // serve still serves others.
    const next = await serve.connect({ era: "legacy" });
    assert.ok((await next.listTools()).some((t) => t.name === "mcp__hang__echo"));
  } finally {
    assert.deepEqual(await serve.stop(), [0, null]);
    rmSync(dir, { recursive: true, force: true });
  }
});
