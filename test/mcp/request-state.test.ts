/**
 * The sealed `requestState` of the stateless era's input rounds: it opens only on the server
 * that sealed it, unchanged, unexpired, for the request it was issued for.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { RpcError } from "../../src/jsonrpc/errors.ts";
import { RequestStateSeal, requestDigest } from "../../src/mcp/request-state.ts";

const payload = (request: string) => ({ method: "tools/call", request, answers: { user_name: { action: "accept", content: { name: "Ada" } } } });

/** Rejects with RpcError -32602 whose data names `reason`. */
async function refused(p: Promise<unknown>, reason: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof RpcError);
    assert.equal(err.code, -32602);
    assert.match(String((err.data as { reason: string }).reason), reason);
    return true;
  });
}

test("a sealed state opens on its server with its answers, for its request", async () => {
  const seal = new RequestStateSeal();
  const digest = await requestDigest("greet", { who: "x" });
  const state = await seal.seal(payload(digest));
  assert.match(state, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const opened = await seal.open(state, "tools/call", digest);
  assert.deepEqual(opened.answers, payload(digest).answers);
});

test("a changed payload or MAC, another server's state and garbage are refused", async () => {
  const seal = new RequestStateSeal();
  const digest = await requestDigest("greet", {});
  const state = await seal.seal(payload(digest));
  const [body, mac] = state.split(".") as [string, string];
  const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
  await refused(seal.open(`${flip(body)}.${mac}`, "tools/call", digest), /tampered/);
  await refused(seal.open(`${body}.${flip(mac)}`, "tools/call", digest), /tampered/);
  await refused(new RequestStateSeal().open(state, "tools/call", digest), /not issued by this server/);
  for (const junk of ["", "no-dot", ".x", "a.b!", 42, null, "x".repeat(300_000)]) {
    await refused(seal.open(junk, "tools/call", digest), /malformed|tampered/);
  }
});

test("a state is refused once expired, and on another method or request", async () => {
  let now = 1_000_000;
  const seal = new RequestStateSeal({ ttlMs: 100, now: () => now });
  const digest = await requestDigest("greet", {});
  const state = await seal.seal(payload(digest));
  await refused(seal.open(state, "prompts/get", digest), /another request/);
  await refused(seal.open(state, "tools/call", await requestDigest("other", {})), /another request/);
  now += 101;
  await refused(seal.open(state, "tools/call", digest), /expired/);
});

test("the request digest ignores key order but not values", async () => {
  const a = await requestDigest("t", { x: 1, y: { p: [1, 2], q: "s" } });
  assert.equal(a, await requestDigest("t", { y: { q: "s", p: [1, 2] }, x: 1 }));
  assert.notEqual(a, await requestDigest("t", { x: 2, y: { p: [1, 2], q: "s" } }));
  assert.notEqual(a, await requestDigest("u", { x: 1, y: { p: [1, 2], q: "s" } }));
});
