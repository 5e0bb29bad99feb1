import { test } from "node:test";
import assert from "node:assert/strict";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { BridgeError, RpcError } from "../../src/jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { InjectingTransport, rawPair, tick } from "./peer-helpers.ts";

test("id 0 and string ids correlate exactly; \"1\" never matches 1", async () => {
  const { peer, raw, start } = rawPair();
  await start();
  const first = peer.request("a");
  const req1 = (await raw.next()) as { id: number };
  assert.equal(req1.id, 1);
  await raw.send({ jsonrpc: "2.0", id: "1", result: "wrong" });
  await raw.send({ jsonrpc: "2.0", id: 1, result: "right" });
  assert.equal(await first, "right");
  assert.equal(peer.stats.unknownResponses, 1);
  await peer.close();
});

test("incoming request with id 0 is answered with id 0", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("echo", (p) => p);
  await start();
  await raw.send({ jsonrpc: "2.0", id: 0, method: "echo", params: { x: 1 } });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: 0, result: { x: 1 } });
  await peer.close();
});

test("invalid requests get -32600; id null request is invalid", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("x", () => ({}));
  await start();
  await raw.send({ jsonrpc: "2.0", id: null, method: "x" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: request id must be a string or a number" } });
  await raw.send({ jsonrpc: "1.0", id: 5, method: "x" });
  const r = (await raw.next()) as { id: unknown; error: { code: number } };
  assert.equal(r.id, 5);
  assert.equal(r.error.code, -32600);
  await raw.send("hello" as unknown as JsonRpcMessage);
  assert.equal(((await raw.next()) as { error: { code: number } }).error.code, -32600);
  assert.equal(peer.stats.invalidMessages, 3);
  await peer.close();
});

test("unknown method gets -32601; notifications get no reply", async () => {
  const { peer, raw, start } = rawPair();
  await start();
  await raw.send({ jsonrpc: "2.0", method: "nobody/listens" });
  await raw.send({ jsonrpc: "2.0", id: "q", method: "nobody/answers" });
  const r = (await raw.next()) as { id: unknown; error: { code: number; message: string } };
  assert.equal(r.id, "q");
  assert.equal(r.error.code, -32601);
  assert.match(r.error.message, /nobody\/answers/);
  await tick();
  assert.equal(raw.received.length, 0, "the notification must not be answered");
  await peer.close();
});

test("a throwing handler gives -32603 with its message and no stack; RpcError keeps its code", async () => {
  const { peer, raw, start } = rawPair();
  peer.setRequestHandler("boom", () => {
    throw new Error("disk on fire");
  });
  peer.setRequestHandler("bad", async () => {
    throw new RpcError(-32602, "bad params", { field: "x" });
  });
  await start();
  await raw.send({ jsonrpc: "2.0", id: 1, method: "boom" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "disk on fire" } });
  await raw.send({ jsonrpc: "2.0", id: 2, method: "bad" });
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: 2, error: { code: -32602, message: "bad params", data: { field: "x" } } });
  await peer.close();
});

test("error responses reject with RpcError carrying code and data", async () => {
  const { peer, raw, start } = rawPair();
  await start();
  const p = peer.request("x");
  const req = (await raw.next()) as { id: number };
  await raw.send({ jsonrpc: "2.0", id: req.id, error: { code: -32002, message: "nope", data: { uri: "u" } } });
  await assert.rejects(p, { name: "RpcError", code: -32002, data: { uri: "u" } });
  await peer.close();
});

test("timeout rejects with TIMEOUT, sends notifications/cancelled, and a late response is counted", async () => {
  const { peer, raw, start } = rawPair();
  await start();
  const p = peer.request("slow", {}, { timeoutMs: 20 });
  const req = (await raw.next()) as { id: number };
  await assert.rejects(p, { name: "BridgeError", code: "TIMEOUT" });
  const cancel = (await raw.next()) as { method: string; params: { requestId: number } };
  assert.equal(cancel.method, "notifications/cancelled");
  assert.equal(cancel.params.requestId, req.id);
  await raw.send({ jsonrpc: "2.0", id: req.id, result: {} });
  await tick();
  assert.equal(peer.stats.lateResponses, 1);
  assert.equal(peer.pendingCount, 0);
  await peer.close();
});

test("abort settles the caller at once and sends notifications/cancelled", async () => {
  const { peer, raw, start } = rawPair();
  await start();
  const ac = new AbortController();
  const p = peer.request("long", {}, { signal: ac.signal });
  const req = (await raw.next()) as { id: number };
  ac.abort();
  await assert.rejects(p, { name: "BridgeError", code: "CANCELLED" });
  const cancel = (await raw.next()) as { method: string; params: { requestId: number } };
  assert.deepEqual([cancel.method, cancel.params.requestId], ["notifications/cancelled", req.id]);
  // An already-aborted signal never sends the request.
  await assert.rejects(peer.request("never", {}, { signal: AbortSignal.abort() }), /cancelled/);
  await tick();
  assert.equal(raw.received.length, 0);
  await peer.close();
});

test("progress reaches the callback, resets the timeout, and the hard cap still applies", async (t) => {
  // The peer's clock (setTimeout for the timeout, Date for the cap) is mocked: time passes when
  // the test says so, so a loaded machine cannot fire the timeout between two progress steps.
  t.mock.timers.enable({ apis: ["setTimeout", "Date"] });
  const { peer, raw, start } = rawPair();
  await start();
  const seen: number[] = [];
  const progress = async (token: number, n: number) => {
    await raw.send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: n, total: 5 } });
    await tick();
  };
  const p = peer.request("work", { a: 1 }, { timeoutMs: 60, maxTotalTimeoutMs: 5000, onProgress: (i) => seen.push(i.progress) });
  let settled = false;
  void p.then(() => (settled = true), () => (settled = true));
  const req = (await raw.next()) as { id: number; params: { a: number; _meta: { progressToken: number } } };
  assert.equal(req.params._meta.progressToken, req.id);
  assert.equal(req.params.a, 1);
  // Progress every 50 ms keeps a 60 ms timeout alive for 250 ms; 59 ms after the last, still alive.
  for (let i = 1; i <= 5; i++) {
    t.mock.timers.tick(50);
    await progress(req.id, i);
  }
  t.mock.timers.tick(59);
  await tick();
  assert.equal(settled, false, "the request is still pending 59 ms after the last progress");
  await raw.send({ jsonrpc: "2.0", id: req.id, result: { done: true } });
  assert.deepEqual(await p, { done: true });
  assert.deepEqual(seen, [1, 2, 3, 4, 5]);

  // Progress at 50 ms moves the timeout to 110 ms, but the 100 ms cap comes first.
  const capped = peer.request("work", {}, { timeoutMs: 60, maxTotalTimeoutMs: 100, onProgress: () => {} });
  const req2 = (await raw.next()) as { id: number };
  t.mock.timers.tick(50);
  await progress(req2.id, 1);
  t.mock.timers.tick(50);
  await assert.rejects(capped, { name: "BridgeError", code: "TIMEOUT", message: 'request "work" timed out after its total time cap' });
  await peer.close();
});

test("inbound cancellation aborts the handler's signal and sends no response", async () => {
  const { peer, raw, start } = rawPair();
  let aborted = false;
  peer.setRequestHandler("wait", (_p, ctx) =>
    new Promise((resolve) => {
      ctx.signal.addEventListener("abort", () => {
        aborted = true;
        resolve({ late: true });
      });
    }),
  );
  await start();
  await raw.send({ jsonrpc: "2.0", id: 9, method: "wait" });
  await tick();
  await raw.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 9 } });
  await tick();
  await tick();
  assert.equal(aborted, true);
  assert.equal(raw.received.length, 0);
  await peer.close();
});

test("inbound cancellation calls the context's onAbort listeners: each once, a removed one not, one that throws stops no other, a late one at once", async () => {
  const { peer, raw, start } = rawPair();
  const heard: string[] = [];
  let late: string | undefined;
  let release: () => void = () => undefined;
  peer.setRequestHandler("wait", (_p, ctx) =>
    new Promise((resolve) => {
      ctx.onAbort!((reason) => {
        heard.push(`first: ${reason.message}`);
        throw new Error("a faulty listener");
      });
      const remove = ctx.onAbort!(() => heard.push("removed"));
      ctx.onAbort!((reason) => heard.push(`third: ${reason.message}`));
      remove();
      release = () => {
        ctx.onAbort!((reason) => (late = reason.message));
        resolve({ late: true });
      };
      ctx.signal.addEventListener("abort", () => heard.push("signal"));
    }),
  );
  await start();
  await raw.send({ jsonrpc: "2.0", id: 7, method: "wait" });
  await tick();
  await raw.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
  await tick();
  assert.deepEqual(heard, ["signal", "first: cancelled by the requester", "third: cancelled by the requester"]);
  release();
  assert.equal(late, "cancelled by the requester", "a listener added after the abort hears of it at once");
  await tick();
  assert.equal(raw.received.length, 0);
  await peer.close();
});

for (const [name, options, answer] of [
  ["by default (MCP) nothing: the handler's late result is dropped", {}, undefined],
  ["with cancelledReply (ACP) that error at once, before the handler returns", {
    cancelMethod: "$/cancel_request",
    cancelParams: (id: string | number) => ({ requestId: id }),
    cancelledReply: (id: string | number) => ({ code: -32800, message: "Request cancelled", data: { requestId: id } }),
  }, { jsonrpc: "2.0", id: 9, error: { code: -32800, message: "Request cancelled", data: { requestId: 9 } } }],
] as const) {
  test(`a request cancelled by the requester is answered ${name}`, async () => {
    const { peer, raw, start } = rawPair(options);
    const cancelMethod = "cancelMethod" in options ? options.cancelMethod : "notifications/cancelled";
    let finish!: (v: unknown) => void;
    let signal: AbortSignal | undefined;
    peer.setRequestHandler("wait", (_p, ctx) => {
      signal = ctx.signal;
      return new Promise((resolve) => (finish = resolve));
    });
    peer.setRequestHandler("ping", () => ({ pong: true }));
    await start();
    await raw.send({ jsonrpc: "2.0", id: 9, method: "wait" });
    await raw.send({ jsonrpc: "2.0", method: cancelMethod, params: { requestId: 9 } });
    await raw.send({ jsonrpc: "2.0", method: cancelMethod, params: { requestId: 9 } });
    await raw.send({ jsonrpc: "2.0", id: 10, method: "ping" });
    // Replies in the order their causes arrived, up to the ping's: while the handler still
    // runs, only a cancelledReply answers it, and once however often the cancel came.
    const pong = (id: number) => ({ jsonrpc: "2.0", id, result: { pong: true } });
    const got: unknown[] = [];
    do got.push(await raw.next()); while ((got.at(-1) as { id?: unknown }).id !== 10);
    assert.deepEqual(got, answer === undefined ? [pong(10)] : [answer, pong(10)]);
    assert.equal(signal?.aborted, true);
    // The handler's own result, when it comes, is never sent.
    finish({ late: true });
    await tick();
    await raw.send({ jsonrpc: "2.0", id: 11, method: "ping" });
    assert.deepEqual(await raw.next(), pong(11));
    assert.deepEqual(raw.received, []);
    await peer.close();
  });
}

test("handlers can send progress and call back to the requester", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const server = new JsonRpcPeer(a);
  const client = new JsonRpcPeer(b);
  server.setRequestHandler("job", async (_p, ctx) => {
    await ctx.sendProgress(1, 2, "half");
    const answer = await ctx.request<{ ok: boolean }>("confirm", { q: "sure?" });
    await ctx.sendProgress(2, 2);
    return { confirmed: answer.ok };
  });
  client.setRequestHandler("confirm", () => ({ ok: true }));
  await server.start();
  await client.start();
  const progress: string[] = [];
  const result = await client.request("job", {}, { onProgress: (p) => progress.push(`${p.progress}/${p.total}${p.message ? ` ${p.message}` : ""}`) });
  assert.deepEqual(result, { confirmed: true });
  assert.deepEqual(progress, ["1/2 half", "2/2"]);
  await client.close();
  await server.close();
});

test("parse errors are answered with -32700 and id null unless disabled", async () => {
  const t = new InjectingTransport();
  const peer = new JsonRpcPeer(t);
  const errors: Error[] = [];
  peer.onerror = (e) => errors.push(e);
  await peer.start();
  t.onerror?.(new BridgeError("PARSE_ERROR", "line is not valid JSON"));
  await tick();
  assert.deepEqual((t.sent[0] as { id: unknown }).id, null);
  assert.equal((t.sent[0] as { error: { code: number } }).error.code, -32700);
  assert.equal(peer.stats.parseErrors, 1);
  assert.equal(errors.length, 1);

  const quiet = new InjectingTransport();
  const quietPeer = new JsonRpcPeer(quiet, { answerParseErrors: false });
  await quietPeer.start();
  quiet.onerror?.(new BridgeError("PARSE_ERROR", "junk"));
  await tick();
  assert.equal(quiet.sent.length, 0);
  await peer.close();
  await quietPeer.close();
});

test("batches are refused unless allowed, then each element is answered in one array", async () => {
  let allow = false;
  const { peer, raw, start } = rawPair({ batchesAllowed: () => allow });
  peer.setRequestHandler("double", (p) => (p as { n: number }).n * 2);
  await start();
  const batch = [
    { jsonrpc: "2.0", id: 1, method: "double", params: { n: 2 } },
    { jsonrpc: "2.0", method: "note" },
    { jsonrpc: "2.0", id: 2, method: "missing" },
  ];
  await raw.send(batch);
  assert.deepEqual(await raw.next(), { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request: batches are not supported by the negotiated protocol version" } });
  allow = true;
  await raw.send(batch);
  const answers = (await raw.next()) as Array<{ id: number }>;
  assert.equal(answers.length, 2);
  assert.deepEqual(answers[0], { jsonrpc: "2.0", id: 1, result: 4 });
  assert.equal(answers[1]!.id, 2);
  await raw.send([]);
  assert.equal(((await raw.next()) as { error: { code: number } }).error.code, -32600);
  await peer.close();
});

test("close rejects every pending request with CLOSED, aborts handlers, and is idempotent", async () => {
  const { peer, raw, start } = rawPair();
  let handlerSignal: AbortSignal | undefined;
  peer.setRequestHandler("hang", (_p, ctx) => {
    handlerSignal = ctx.signal;
    return new Promise(() => {});
  });
  await start();
  await raw.send({ jsonrpc: "2.0", id: 1, method: "hang" });
  const pending = [peer.request("a"), peer.request("b"), peer.request("c")];
  await tick();
  const c1 = peer.close();
  const c2 = peer.close();
  assert.equal(c1, c2);
  await c1;
  for (const p of pending) await assert.rejects(p, { name: "BridgeError", code: "CLOSED" });
  assert.equal(handlerSignal?.aborted, true);
  await assert.rejects(peer.request("after"), { name: "BridgeError", code: "CLOSED" });
  assert.equal(peer.closed, true);
});

test("a transport ending with a reason rejects pending requests with that reason", async () => {
  const t = new InjectingTransport();
  const peer = new JsonRpcPeer(t);
  let closedWith: Error | undefined;
  peer.onclose = (r) => (closedWith = r);
  await peer.start();
  const p = peer.request("x");
  t.onclose?.(new BridgeError("PROCESS_EXITED", "server exited with code 3"));
  await assert.rejects(p, { name: "BridgeError", code: "PROCESS_EXITED", message: /code 3/ });
  assert.equal((closedWith as BridgeError).code, "PROCESS_EXITED");
});

test("the pending limit refuses extra requests with TOO_MANY_PENDING", async () => {
  const { peer, start } = rawPair({ maxPendingRequests: 2 });
  await start();
  const a = peer.request("a");
  const b = peer.request("b");
  await assert.rejects(peer.request("c"), { name: "BridgeError", code: "TOO_MANY_PENDING" });
  await peer.close();
  await assert.rejects(a);
  await assert.rejects(b);
});

test("abort listeners are removed when requests settle (no leak over many requests)", async () => {
  const [a, b] = InMemoryTransport.createLinkedPair();
  const server = new JsonRpcPeer(a);
  const client = new JsonRpcPeer(b);
  server.setRequestHandler("n", (p) => p);
  await server.start();
  await client.start();
  const ac = new AbortController();
  let added = 0;
  let removed = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  const remove = ac.signal.removeEventListener.bind(ac.signal);
  ac.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    added++;
    return add(...args);
  }) as typeof add;
  ac.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    removed++;
    return remove(...args);
  }) as typeof remove;
  for (let i = 0; i < 2000; i++) await client.request("n", { i }, { signal: ac.signal });
  assert.equal(added, 2000);
  assert.equal(removed, 2000);
  await client.close();
  await server.close();
});

test("messages sent from inside a handler carry the handled request's id as routing hint", async () => {
  const t = new InjectingTransport();
  const peer = new JsonRpcPeer(t);
  peer.setRequestHandler("work", async (_p, ctx) => {
    await ctx.notify("notifications/message", { level: "info", data: "x" });
    await ctx.sendProgress(1, 1);
    void ctx.request("sampling/createMessage", {}).catch(() => undefined);
    return {};
  });
  await peer.start();
  t.onmessage?.({ jsonrpc: "2.0", id: "r7", method: "work", params: { _meta: { progressToken: "p" } } });
  await tick();
  await peer.notify("unrelated");
  assert.deepEqual(
    t.sent.map((m, i) => [(m as { method?: string }).method ?? "response", t.related[i]]),
    [
      ["notifications/message", "r7"],
      ["notifications/progress", "r7"],
      ["sampling/createMessage", "r7"],
      ["response", undefined],
      ["unrelated", undefined],
    ],
  );
  await peer.close();
});
