/** The stdio client's running child: lifecycle and shutdown, stdout/stderr handling, and the ring buffer behind the stderr tail. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { ByteRing, lastLines, TextLineSplitter } from "../../src/transport/ring-buffer.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { alive, waitGone } from "../e2e/helpers.ts";
import { until } from "../helpers/wait.ts";
import { faulty, sleep, textOf } from "./stdio-client-helpers.ts";

const MiB = 1024 * 1024;

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } };

describe("StdioClientTransport: lifecycle", () => {
  test("handshake messages round trip; requested close reports no reason and the pid is gone", async () => {
    const f = faulty([]);
    await f.transport.start();
    assert.equal(f.transport.resolvedCommand, process.execPath);
    const pid = f.transport.pid;
    assert.equal(typeof pid, "number");

    const init = await f.request(1, "initialize", INIT);
    assert.equal(init.result?.protocolVersion, "2025-11-25");
    await f.transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const pong = await f.request(2, "ping");
    assert.deepEqual(pong, { jsonrpc: "2.0", id: 2, result: {} });

    const first = f.transport.close();
    const second = f.transport.close();
    assert.equal(first, second);
    await first;
    assert.deepEqual(f.closes, [undefined]);
    assert.equal(alive(pid!), false);
    await assert.rejects(f.transport.send({ jsonrpc: "2.0", id: 3, method: "ping" }), { code: "CLOSED" });
    assert.deepEqual(f.errors, []);
  });

  test("send before start rejects NOT_CONNECTED; close before start still calls onclose once", async () => {
    const f = faulty([]);
    await assert.rejects(f.transport.send({ jsonrpc: "2.0", id: 1, method: "ping" }), { code: "NOT_CONNECTED" });
    await f.transport.close();
    await f.transport.close();
    assert.deepEqual(f.closes, [undefined]);
    await assert.rejects(f.transport.start(), { code: "CLOSED" });
    assert.equal(f.transport.pid, undefined);
  });

  test("exit in the middle of a request: onclose gets PROCESS_EXITED with code and stderr", async () => {
    const f = faulty(["--crash-after", "1"]);
    await f.transport.start();
    const pid = f.transport.pid!;
    await f.request(1, "initialize", INIT);
    await f.transport.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } });
    const reason = await f.closedPromise;
    assert.ok(reason instanceof BridgeError);
    assert.equal(reason.code, "PROCESS_EXITED");
    assert.match(reason.message, /^server "faulty": process \d+ \(.+\) exited with code 1; last stderr:\n/);
    assert.match(reason.message, /faulty: crashing on tools\/call #1/);
    assert.equal(reason.details.code, 1);
    assert.equal(reason.details.signal, null);
    assert.match(String(reason.details.stderr), /crashing on tools\/call #1/);
    assert.equal(f.messages.some((m) => (m as { id?: unknown }).id === 2), false);
    await assert.rejects(f.transport.send({ jsonrpc: "2.0", id: 3, method: "ping" }), { code: "CLOSED" });
    await f.transport.close();
    assert.equal(f.closes.length, 1);
    assert.equal(alive(pid), false);
  });

  test("exit before the handshake is reported the same way", async () => {
    const f = faulty(["--exit-at-start"]);
    await f.transport.start();
    const reason = await f.closedPromise;
    assert.ok(reason instanceof BridgeError);
    assert.equal(reason.code, "PROCESS_EXITED");
    assert.equal(reason.details.code, 3);
    assert.match(reason.message, /exited with code 3; last stderr:\nfaulty: exiting at start/);
    await f.transport.close();
    assert.equal(alive(f.transport.pid!), false);
  });

  test("a child that ignores stdin EOF and SIGTERM is killed with SIGKILL", async () => {
    const f = faulty(["--ignore-stdin-eof"]);
    await f.transport.start();
    const pid = f.transport.pid!;
    await f.request(1, "ping");
    await f.transport.close();
    assert.deepEqual(f.closes, [undefined]);
    // It saw the SIGTERM and ignored it, so only the SIGKILL can have ended it.
    assert.ok(f.stderr.includes("faulty: ignoring SIGTERM"), f.stderr.join("\n"));
    assert.equal(alive(pid), false);
  });

  test("close reaches grandchildren in the process group", async () => {
    const f = faulty(["--spawn-grandchild"]);
    await f.transport.start();
    const line = await f.stderrLine("grandchild-pid=");
    const grandchild = Number(line.slice("grandchild-pid=".length));
    assert.ok(Number.isInteger(grandchild) && grandchild > 0);
    assert.equal(alive(grandchild), true);
    await f.transport.close();
    assert.equal(alive(f.transport.pid!), false);
    assert.equal(await waitGone(grandchild), true);
  });

  test("stdin closed by the child (EPIPE) does not crash; later sends reject CLOSED", async () => {
    const messages: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["-e", "require('fs').closeSync(0); process.stderr.write('stdin-closed\\n'); setInterval(() => {}, 1000)"],
      shutdownGraceMs: 200,
      onStderr: (l) => messages.push(l),
    });
    await transport.start();
    await until(() => messages.includes("stdin-closed"), 'the child\'s "stdin-closed" on stderr');
    let rejected: unknown;
    for (let i = 0; i < 100 && rejected === undefined; i++) {
      await transport.send({ jsonrpc: "2.0", method: "x", params: { pad: "y".repeat(1024) } }).catch((e) => (rejected = e));
      await sleep(10);
    }
    assert.ok(rejected instanceof BridgeError);
    assert.equal(rejected.code, "CLOSED");
    await transport.close();
    assert.equal(alive(transport.pid!), false);
  });
});

describe("StdioClientTransport: output handling", () => {
  test("a 5 MB stderr flood stays bounded, keeps the latest data, and does not stop the protocol", async () => {
    const f = faulty(["--stderr-flood", "5"]);
    await f.transport.start();
    assert.deepEqual((await f.request(1, "ping")).result, {});
    await f.stderrLine("stderr-flood-done");
    const tail = f.transport.stderrTail();
    assert.ok(tail.length <= 64 * 1024, `tail is ${tail.length} chars`);
    assert.ok(tail.length > 60 * 1024);
    assert.ok(tail.endsWith("\nstderr-flood-done\n"));
    assert.ok(f.transport.stats.stderrBytes >= 5 * MiB);
    assert.ok(f.stderr.every((l) => l.length <= 8192));
    assert.deepEqual((await f.request(2, "ping")).result, {});
    await f.transport.close();
    assert.equal(alive(f.transport.pid!), false);
  });

  test("junk lines on stdout are counted and logged, not fatal, not errors", async () => {
    const f = faulty(["--junk"]);
    await f.transport.start();
    await f.request(1, "initialize", INIT);
    assert.equal(textOf((await f.request(2, "tools/call", { name: "echo", arguments: { text: "hi" } })).result), "hi");
    assert.ok(f.transport.stats.junkLines >= 3);
    assert.equal(f.logs.length, f.transport.stats.junkLines);
    assert.match(f.logs[0]!, /^server "faulty": ignored stdout line \(PARSE_ERROR\): .*faulty server banner/);
    assert.deepEqual(f.errors, []);
    assert.equal(f.transport.stats.messagesReceived, 2);
    await f.transport.close();
    assert.deepEqual(f.closes, [undefined]);
  });

  test("a line over maxLineBytes goes to onerror and the next message still arrives", async () => {
    const f = faulty([], { maxLineBytes: 4096 });
    await f.transport.start();
    await f.transport.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "big", arguments: { bytes: 10000 } } });
    const echo = await f.request(2, "tools/call", { name: "echo", arguments: { text: "after" } });
    assert.equal(textOf(echo.result), "after");
    assert.equal(f.errors.length, 1);
    assert.equal((f.errors[0] as BridgeError).code, "LINE_TOO_LONG");
    assert.equal(f.transport.stats.tooLongLines, 1);
    assert.equal(f.messages.length, 1);
    await f.transport.close();
  });

  test("a 20 MiB result arrives intact", async () => {
    const f = faulty(["--big-result", "20"]);
    await f.transport.start();
    const res = await f.request(1, "tools/call", { name: "big", arguments: {} });
    const text = textOf(res.result);
    assert.equal(text.length, 20 * MiB);
    const unit = "0123456789abcdefghijklmnopqrstuvwxyz";
    assert.ok(text === unit.repeat(Math.ceil((20 * MiB) / unit.length)).slice(0, 20 * MiB));
    await f.transport.close();
  });

  test("many large sends under backpressure are all written, in order", async () => {
    const f = faulty([]);
    await f.transport.start();
    const n = 40;
    const sends: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const text = `${i}:`.padEnd(256 * 1024, "z");
      sends.push(f.transport.send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text } } }));
    }
    await Promise.all(sends);
    await f.waitFor((m) => (m as { id?: unknown }).id === n - 1);
    const ids = f.messages.map((m) => (m as { id: number }).id);
    assert.deepEqual(ids, Array.from({ length: n }, (_, i) => i));
    for (const m of f.messages) {
      const { id, result } = m as { id: number; result: Record<string, unknown> };
      assert.ok(textOf(result).startsWith(`${id}:`));
      assert.equal(textOf(result).length, 256 * 1024);
    }
    await f.transport.close();
  });
});

describe("ring buffer", () => {
  test("keeps the last capacity bytes across wraps and oversized writes", () => {
    const enc = new TextEncoder();
    const ring = new ByteRing(8);
    ring.write(enc.encode("abc"));
    assert.equal(ring.text(), "abc");
    ring.write(enc.encode("defgh"));
    assert.equal(ring.text(), "abcdefgh");
    ring.write(enc.encode("ij"));
    assert.equal(ring.text(), "cdefghij");
    ring.write(enc.encode("0123456789XY"));
    assert.equal(ring.text(), "456789XY");
    assert.equal(ring.size, 8);
    assert.equal(ring.totalWritten, 22);
  });

  test("drops a character cut in half by overwriting instead of showing U+FFFD", () => {
    const ring = new ByteRing(5);
    ring.write(new TextEncoder().encode("x€abc")); // € is 3 bytes; 7 bytes in total
    assert.equal(ring.text(), "abc");
  });

  test("TextLineSplitter handles CRLF, characters split across chunks and overlong lines", () => {
    const lines: string[] = [];
    const split = new TextLineSplitter((l) => lines.push(l), 4);
    const bytes = new TextEncoder().encode("ab€\r\n\nabcdefghij\nend");
    for (let i = 0; i < bytes.length; i++) split.push(bytes.subarray(i, i + 1));
    split.end();
    assert.deepEqual(lines, ["ab€", "", "abcd", "efgh", "ij", "end"]);
  });

  test("lastLines keeps the last lines within a character budget", () => {
    assert.equal(lastLines("a\nb\nc\nd\n", 2, 100), "c\nd");
    assert.equal(lastLines("0123456789\n", 5, 4), "…789");
  });
});
