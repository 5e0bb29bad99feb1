/** ndjson over TCP: framing, split chunks, close from either side, limits, connect retries, greetings. */
import assert from "node:assert/strict";
import { createServer, connect, type Server, type Socket } from "node:net";
import { describe, test } from "node:test";
import type { BridgeError } from "../../src/jsonrpc/errors.ts";
import { readFirstLine, TcpClientTransport, TcpTransport } from "../../src/transport/tcp.ts";
import { until, within } from "../helpers/wait.ts";

/** A loopback server on port 0; every accepted socket is handed to `onSocket`. */
async function listen(onSocket: (s: Socket) => void): Promise<{ server: Server; port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    onSocket(s);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves with the next value `register` produces. */
function next<T>(register: (fn: (v: T) => void) => void): Promise<T> {
  return new Promise((resolve) => register(resolve));
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function record(t: TcpTransport) {
  const messages: unknown[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  let wake: (() => void) | undefined;
  t.onmessage = (m) => {
    messages.push(m);
    wake?.();
  };
  t.onerror = (e) => {
    errors.push(e);
    wake?.();
  };
  t.onclose = (r) => {
    closes.push(r);
    wake?.();
  };
  /** Resolves once `cond()` holds, re-checking on each message, error or close; fails naming `what` at the deadline. */
  const until = (cond: () => boolean, what: string): Promise<void> =>
    within(
      (async () => {
        while (!cond()) await new Promise<void>((resolve) => (wake = resolve));
      })(),
      what,
    );
  return { messages, errors, closes, until };
}

describe("TcpTransport and TcpClientTransport", { timeout: 30_000 }, () => {
  test("messages flow both ways, in order", async () => {
    const accepted = deferred<TcpTransport>();
    const { port, close } = await listen((s) => accepted.resolve(new TcpTransport(s)));
    const client = new TcpClientTransport({ port });
    const c = record(client);
    await client.start();
    const serverSide = await accepted.promise;
    const s = record(serverSide);
    await serverSide.start();
    for (let i = 0; i < 50; i++) await client.send({ jsonrpc: "2.0", id: i, method: "m", params: { i } });
    await serverSide.send({ jsonrpc: "2.0", id: 1, result: { text: "é€😀" } });
    await s.until(() => s.messages.length === 50, "all 50 messages at the server side");
    await c.until(() => c.messages.length === 1, "the message at the client");
    assert.deepEqual(s.messages.map((m) => (m as { id: number }).id), Array.from({ length: 50 }, (_, i) => i));
    assert.deepEqual(c.messages[0], { jsonrpc: "2.0", id: 1, result: { text: "é€😀" } });
    await client.close();
    await s.until(() => s.closes.length === 1, "the server side to close");
    assert.deepEqual(s.closes, [undefined]);
    assert.deepEqual(c.closes, [undefined]);
    await assert.rejects(client.send({ jsonrpc: "2.0", method: "late" }), { name: "BridgeError", code: "CLOSED" });
    await assert.rejects(serverSide.send({ jsonrpc: "2.0", method: "late" }), { name: "BridgeError", code: "CLOSED" });
    await close();
  });

  test("a message written at every split point, across multi-byte characters, decodes intact", async () => {
    const line = new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", method: "m", params: { text: "é€😀 ok" } })}\n`);
    for (let cut = 1; cut < line.length; cut += 3) {
      const accepted = deferred<Socket>();
      const { port, close } = await listen((s) => accepted.resolve(s));
      const client = new TcpClientTransport({ port });
      const c = record(client);
      await client.start();
      const raw = await within(accepted.promise, "the listener to accept the connection");
      raw.write(line.subarray(0, cut));
      await new Promise((r) => setTimeout(r, 1));
      raw.write(line.subarray(cut));
      await c.until(() => c.messages.length === 1, "the message at the client");
      assert.deepEqual(c.messages[0], { jsonrpc: "2.0", method: "m", params: { text: "é€😀 ok" } }, `cut at ${cut}`);
      await client.close();
      await close();
    }
  });

  test("the other side closing ends the transport once; junk and oversize lines do not", async () => {
    const accepted = deferred<Socket>();
    const { port, close } = await listen((s) => accepted.resolve(s));
    const client = new TcpClientTransport({ port, maxLineBytes: 64 });
    const c = record(client);
    await client.start();
    const raw = await within(accepted.promise, "the listener to accept the connection");
    raw.write(`not json\n${"x".repeat(200)}\n{"jsonrpc":"2.0","method":"after"}\n`);
    await c.until(() => c.messages.length === 1, "the message at the client");
    assert.deepEqual(c.errors.map((e) => (e as BridgeError).code), ["PARSE_ERROR", "LINE_TOO_LONG"]);
    assert.deepEqual(c.messages, [{ jsonrpc: "2.0", method: "after" }]);
    raw.end();
    await c.until(() => c.closes.length === 1, "the client to close");
    assert.deepEqual(c.closes, [undefined]);
    await client.close();
    assert.equal(c.closes.length, 1, "onclose is called exactly once");
    await close();
  });

  test("a reset connection ends the transport with a reason", async () => {
    const accepted = deferred<Socket>();
    const { port, close } = await listen((s) => accepted.resolve(s));
    const client = new TcpClientTransport({ port });
    const c = record(client);
    await client.start();
    const raw = await within(accepted.promise, "the listener to accept the connection");
    raw.resetAndDestroy();
    await c.until(() => c.closes.length === 1, "the client to close");
    assert.ok(c.closes[0] instanceof Error);
    assert.match(c.closes[0]!.message, /connection failed/);
    await close();
  });

  test("connect retries until the listener appears; a bounded number of attempts then fails", async () => {
    const probe = await listen(() => undefined);
    const port = probe.port;
    await probe.close();
    const failing = new TcpClientTransport({ port, connectAttempts: 3, retryDelayMs: 5 });
    await assert.rejects(failing.start(), { name: "BridgeError", code: "CLOSED", message: /connect failed: .*ECONNREFUSED/ });

    // The listener appears while the client waits to retry: the wait is the test's to end.
    const delays: number[] = [];
    const waiting = deferred<void>();
    const listening = deferred<void>();
    const late = new TcpClientTransport({
      port,
      connectAttempts: 3,
      retryDelayMs: 10,
      delay: (ms) => {
        delays.push(ms);
        waiting.resolve();
        return listening.promise;
      },
    });
    const starting = late.start();
    await within(waiting.promise, "the first connect attempt to be refused");
    const accepted = deferred<Socket>();
    const server = createServer((s) => accepted.resolve(s));
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    listening.resolve();
    await starting;
    assert.deepEqual(delays, [10], "one refused attempt, one retry");
    await late.send({ jsonrpc: "2.0", method: "hello" });
    const raw = await within(accepted.promise, "the listener to accept the connection");
    const got = await next<string>((fn) => raw.once("data", (d: Buffer) => fn(d.toString("utf8"))));
    assert.equal(got, '{"jsonrpc":"2.0","method":"hello"}\n');
    await late.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test("the greeting is the first line, and readFirstLine hands what follows to the transport", async () => {
    const accepted = deferred<Socket>();
    const { port, close } = await listen((s) => accepted.resolve(s));
    const client = new TcpClientTransport({ port, greeting: { token: "abc" } });
    await client.start();
    // Queued right behind the greeting, so both usually arrive in one chunk.
    await client.send({ jsonrpc: "2.0", method: "first" });
    const socket = await accepted.promise;
    const { line, rest } = await readFirstLine(socket, { maxBytes: 100, timeoutMs: 5000 });
    assert.deepEqual(JSON.parse(line), { token: "abc" });
    const server = new TcpTransport(socket, { initialData: rest });
    const s = record(server);
    await server.start();
    await client.send({ jsonrpc: "2.0", method: "second" });
    await s.until(() => s.messages.length === 2, "both messages at the server side");
    assert.deepEqual(s.messages, [{ jsonrpc: "2.0", method: "first" }, { jsonrpc: "2.0", method: "second" }]);
    await client.close();
    await server.close();
    await close();
  });

  test("readFirstLine refuses a greeting that is too long, and one that never comes", async () => {
    const sockets: Socket[] = [];
    const { port, close } = await listen((s) => sockets.push(s));
    const long = connect({ port, host: "127.0.0.1" });
    long.on("error", () => undefined);
    long.write("y".repeat(300));
    const silent = connect({ port, host: "127.0.0.1" });
    silent.on("error", () => undefined);
    await until(() => sockets.length === 2, "both connections to be accepted");
    const results = await Promise.allSettled(sockets.map((s) => readFirstLine(s, { maxBytes: 100, timeoutMs: 200 })));
    const reasons = results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "accepted")).sort();
    assert.deepEqual(reasons.map((m) => m.replace(/\d+/g, "N")), ["greeting longer than N bytes", "no greeting within N ms"]);
    for (const s of sockets) s.destroy();
    long.destroy();
    silent.destroy();
    await close();
  });
});
