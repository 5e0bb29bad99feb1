/**
 * The peer against faulty traffic: malformed responses (never answered, their request fails),
 * values JSON cannot carry (never a crash), and lines over the transport's limit (the request
 * they answered fails, or its timeout says why).
 */
import { mock, test } from "node:test";
import assert from "node:assert/strict";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { LineDecoder } from "../../src/jsonrpc/ndjson.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { unencodable, UNENCODABLE_KINDS, type UnencodableKind } from "../../fixtures/servers/unencodable.ts";
import { InjectingTransport, rawPair, tick } from "./peer-helpers.ts";

const utf8 = new TextEncoder();

test("a malformed response is never answered; the request it names fails at once with INVALID_MESSAGE", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("ping", () => ({}));
  await start();
  const p = peer.request("tools/list");
  const req = (await raw.next()) as { id: number };
  await raw.send({ jsonrpc: "2.0", id: req.id, error: { code: "E_BAD" } } as unknown as JsonRpcMessage);
  await assert.rejects(p, {
    name: "BridgeError",
    code: "INVALID_MESSAGE",
    message: 'request "tools/list": the response is malformed: error must be {code: integer, message: string}',
  });
  // The next thing the peer writes is the ping's answer: nothing was sent for the bad response.
  await raw.send({ jsonrpc: "2.0", id: "p", method: "ping" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: "p", result: {} });
  assert.equal(peer.pendingCount, 0);
  await peer.close();
});

test("malformed responses nobody waits for are counted and never answered, whatever their id", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("ping", () => ({}));
  await start();
  const bad = [
    { jsonrpc: "2.0", id: 1, error: { code: "E_BAD" } },
    { jsonrpc: "2.0", id: 2, result: {}, error: { code: 1, message: "m" } },
    { jsonrpc: "1.0", id: 3, result: {} },
    { jsonrpc: "2.0", id: 4 },
    { jsonrpc: "2.0", id: true, result: {} },
  ];
  for (const b of bad) await raw.send(b as unknown as JsonRpcMessage);
  await raw.send({ jsonrpc: "2.0", id: "p", method: "ping" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: "p", result: {} });
  assert.equal(peer.stats.invalidMessages, bad.length);
  await peer.close();
});

test("request() and notify() with params JSON cannot carry reject with INVALID_PARAMS at once and send nothing", async () => {
  const { peer, raw, start } = rawPair({ maxPendingRequests: 1 });
  await start();
  for (const kind of UNENCODABLE_KINDS) {
    await assert.rejects(peer.request("tools/call", unencodable(kind), { timeoutMs: 60_000 }), {
      name: "BridgeError",
      code: "INVALID_PARAMS",
      message: new RegExp(`^request "tools/call": params cannot be serialised as JSON \\(`),
    });
    assert.equal(peer.pendingCount, 0, `${kind}: the pending slot is free`);
    await assert.rejects(peer.notify("notifications/message", unencodable(kind)), {
      code: "INVALID_PARAMS",
      message: /^notification "notifications\/message": params cannot be serialised as JSON/,
    });
  }
  // No notifications/cancelled for requests that never left: the next message is this request,
  // whose id follows the ids the refused requests took.
  const ok = peer.request("after");
  const id = UNENCODABLE_KINDS.length + 1;
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id, method: "after" });
  await raw.send({ jsonrpc: "2.0", id, result: "fine" });
  assert.equal(await ok, "fine");
  await tick();
  assert.equal(raw.received.length, 0);
  await peer.close();
});

test("a reply JSON cannot carry is answered -32603 for its id over the memory pair, and the peer goes on", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("value", (params) => unencodable((params as { kind: UnencodableKind }).kind));
  peer.setRequestHandler("ping", () => ({}));
  await start();
  const reasons: Record<string, string> = {
    bigint: "Do not know how to serialize a BigInt",
    cycle: "Converting circular structure to JSON",
    deep: "Maximum call stack size exceeded",
  };
  for (const kind of UNENCODABLE_KINDS) {
    await raw.send({ jsonrpc: "2.0", id: kind, method: "value", params: { kind } });
    assert.deepEqual(await raw.next(), {
      jsonrpc: "2.0",
      id: kind,
      error: { code: -32603, message: `Internal error: the result cannot be serialised as JSON (${reasons[kind]})` },
    });
  }
  await raw.send({ jsonrpc: "2.0", id: 9, method: "ping" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: 9, result: {} });
  await peer.close();
});

test("a transport whose send() throws instead of rejecting fails the request, not the process", async () => {
  const t = new InjectingTransport();
  t.send = () => {
    throw new BridgeError("CLOSED", "thrown, not rejected");
  };
  const peer = new JsonRpcPeer(t);
  await peer.start();
  await assert.rejects(peer.request("x"), { code: "CLOSED", message: "thrown, not rejected" });
  await assert.rejects(peer.notify("y"), { code: "CLOSED" });
  assert.equal(peer.pendingCount, 0);
  await peer.close();
});

/** Feeds `line` through a real decoder with a 64-byte limit and hands its errors to the peer. */
function overLimit(t: InjectingTransport, line: string): void {
  for (const d of new LineDecoder({ maxLineBytes: 64 }).push(utf8.encode(`${line}\n`))) {
    if (!d.ok) t.onerror?.(d.error);
  }
}

const padding = "x".repeat(200);

test("a discarded line that is a response with a readable id fails that request at once with LIMIT_EXCEEDED", async () => {
  const t = new InjectingTransport();
  const peer = new JsonRpcPeer(t, { answerParseErrors: false });
  await peer.start();
  const first = peer.request("tools/list", {}, { timeoutMs: 60_000 });
  const second = peer.request("tools/call", {}, { timeoutMs: 60_000 });
  const line = `{"jsonrpc":"2.0","id":2,"result":{"text":"${padding}"}}`;
  overLimit(t, line);
  await assert.rejects(second, {
    code: "LIMIT_EXCEEDED",
    message: `request "tools/call": the response was a line of at least ${line.length} bytes, over the 64-byte limit (maxLineBytes), and was discarded; raise maxLineBytes or ask for less`,
  });
  assert.equal(peer.pendingCount, 1, "the other request still waits");
  // A request from the other side that happens to carry our id 1 fails nothing.
  overLimit(t, `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"p":"${padding}"}}`);
  // An "id" nested in the result is not the response's id.
  overLimit(t, `{"jsonrpc":"2.0","result":{"id":1,"text":"${padding}"},"id":7}`);
  // Nor does a notification; and none of these is remembered as a possible lost response.
  overLimit(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${padding}"}}`);
  assert.equal(peer.pendingCount, 1);
  assert.equal(peer.lastDiscardedLine, undefined);
  t.onmessage?.({ jsonrpc: "2.0", id: 1, result: { tools: [] } });
  assert.deepEqual(await first, { tools: [] });
  await peer.close();
});

test("a discarded line without a readable id: the timeouts of requests then in flight say so, later ones do not", async () => {
  const t = new InjectingTransport();
  const peer = new JsonRpcPeer(t, { answerParseErrors: false });
  await peer.start();
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const before = peer.request("tools/list", {}, { timeoutMs: 1000 });
    // The id comes after the first 4 KiB, which is all the decoder reads of a discarded line.
    const line = `{"jsonrpc":"2.0","result":{"text":"${"x".repeat(5000)}"},"id":1}`;
    overLimit(t, line);
    const after = peer.request("ping", {}, { timeoutMs: 1000 });
    assert.equal(peer.lastDiscardedLine, `a line of at least ${line.length} bytes, over the 64-byte limit (maxLineBytes), was discarded without a readable id (it may have been the response)`);
    mock.timers.tick(1000);
    await assert.rejects(before, {
      code: "TIMEOUT",
      message: `request "tools/list" timed out after 1000 ms; meanwhile ${peer.lastDiscardedLine}`,
    });
    await assert.rejects(after, { code: "TIMEOUT", message: 'request "ping" timed out after 1000 ms' });
  } finally {
    mock.timers.reset();
  }
  await peer.close();
});
