import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { BridgeError } from "../../src/jsonrpc/errors.ts";
import { StdioServerTransport } from "../../src/transport/stdio-server.ts";
import { loaderArgs } from "../../src/util/node-command.ts";
import { writeRecorder } from "./write-recorder.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SERVER_MODULE = join(ROOT, "src", "transport", "stdio-server.ts");

function pair(maxLineBytes?: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new StdioServerTransport({ stdin, stdout, maxLineBytes });
  const messages: unknown[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e);
  transport.onclose = (r) => closes.push(r);
  return { stdin, stdout, transport, messages, errors, closes };
}

/** Lets queued stream events run. */
function tick(): Promise<void> {
  return new Promise((res) => setImmediate(res));
}

describe("StdioServerTransport over streams", () => {
  test("a message split at every byte inside multi-byte characters decodes intact", async () => {
    const text = "é€😀 ok";
    const bytes = new TextEncoder().encode(`${JSON.stringify({ jsonrpc: "2.0", method: "m", params: { text } })}\n`);
    const at = new TextEncoder().encode('{"jsonrpc":"2.0","method":"m","params":{"text":"').length;
    for (let cut = at; cut <= at + 10; cut++) {
      const p = pair();
      await p.transport.start();
      p.stdin.write(bytes.subarray(0, cut));
      await tick();
      assert.equal(p.messages.length, 0);
      p.stdin.write(bytes.subarray(cut));
      await tick();
      assert.deepEqual(p.messages, [{ jsonrpc: "2.0", method: "m", params: { text } }], `cut at ${cut}`);
      await p.transport.close();
    }
  });

  test("undecodable lines go to onerror with their code and do not close", async () => {
    const p = pair(64);
    await p.transport.start();
    p.stdin.write('{"jsonrpc":"2.0",\n');
    p.stdin.write(new Uint8Array([0xff, 0xfe, 0x0a]));
    p.stdin.write(`"${"x".repeat(100)}"\n`);
    p.stdin.write('{"jsonrpc":"2.0","method":"after"}\r\n');
    await tick();
    assert.deepEqual(
      p.errors.map((e) => (e as BridgeError).code),
      ["PARSE_ERROR", "INVALID_UTF8", "LINE_TOO_LONG"],
    );
    assert.deepEqual(p.messages, [{ jsonrpc: "2.0", method: "after" }]);
    assert.deepEqual(p.closes, []);
    await p.transport.close();
  });

  test("stdin EOF delivers a final unterminated line, then closes once without a reason", async () => {
    const p = pair();
    await p.transport.start();
    p.stdin.end('{"jsonrpc":"2.0","id":0,"method":"last"}');
    await tick();
    await tick();
    assert.deepEqual(p.messages, [{ jsonrpc: "2.0", id: 0, method: "last" }]);
    assert.deepEqual(p.closes, [undefined]);
    await assert.rejects(p.transport.send({ jsonrpc: "2.0", id: 0, result: {} }), { code: "CLOSED" });
  });

  test("send writes exactly one line per message; close is idempotent and leaves stdout open", async () => {
    const p = pair();
    await p.transport.start();
    const out: Buffer[] = [];
    p.stdout.on("data", (c: Buffer) => out.push(c));
    await p.transport.send({ jsonrpc: "2.0", id: 1, result: { a: "é" } });
    await p.transport.send([{ jsonrpc: "2.0", method: "n" }]);
    const first = p.transport.close();
    assert.equal(p.transport.close(), first);
    await first;
    assert.equal(Buffer.concat(out).toString("utf8"), '{"jsonrpc":"2.0","id":1,"result":{"a":"é"}}\n[{"jsonrpc":"2.0","method":"n"}]\n');
    assert.deepEqual(p.closes, [undefined]);
    assert.equal(p.stdout.writable, true);
    p.stdin.write('{"jsonrpc":"2.0","method":"ignored"}\n');
    await tick();
    assert.deepEqual(p.messages, []);
  });

  test("answers sent in the same tick leave in writes of at most eight; a lone answer is written within the tick", async () => {
    const stdin = new PassThrough();
    const { stream: stdout, writes } = writeRecorder();
    const transport = new StdioServerTransport({ stdin, stdout });
    await transport.start();
    for (let id = 1; id <= 10; id++) void transport.send({ jsonrpc: "2.0", id, result: {} });
    await new Promise<void>((resolve) => process.nextTick(resolve));
    const ids = (batch: string[]): number[] => batch.map((line) => (JSON.parse(line) as { id: number }).id);
    assert.deepEqual(writes.map(ids), [[1, 2, 3, 4, 5, 6, 7, 8], [9, 10]], "ten answers in two writes, in order");
    await transport.send({ jsonrpc: "2.0", id: 11, result: {} });
    await new Promise<void>((resolve) => process.nextTick(resolve));
    assert.equal(writes.length, 3);
    assert.equal(writes[2]!.join(""), '{"jsonrpc":"2.0","id":11,"result":{}}\n');
    await transport.close();
  });

  test("send waits for drain when stdout is full", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough({ highWaterMark: 16 });
    const transport = new StdioServerTransport({ stdin, stdout });
    await transport.start();
    let settled = false;
    const sent = transport.send({ jsonrpc: "2.0", id: 1, result: { pad: "p".repeat(100) } }).then(() => {
      settled = true;
    });
    await tick();
    assert.equal(settled, false);
    stdout.resume();
    await sent;
    assert.equal(settled, true);
    await transport.close();
  });

  test("a stdout error (EPIPE) closes the transport with that reason instead of crashing", async () => {
    const p = pair();
    await p.transport.start();
    p.stdout.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await tick();
    assert.equal(p.closes.length, 1);
    assert.equal((p.closes[0] as BridgeError).code, "CLOSED");
    assert.match(p.closes[0]!.message, /EPIPE/);
  });
});

/** A child process that serves an echo over StdioServerTransport on its real stdin/stdout. */
const ECHO_SERVER = `
const { StdioServerTransport } = await import(${JSON.stringify(SERVER_MODULE)});
const t = new StdioServerTransport();
t.onmessage = (m) => {
  if (m.method === "bye") {
    void t.send({ jsonrpc: "2.0", id: m.id, result: { text: "b".repeat(2 * 1024 * 1024) } })
      .then(() => t.close())
      .then(() => process.exit(0));
  } else if ("id" in m) {
    void t.send({ jsonrpc: "2.0", id: m.id, result: { echo: m.params ?? null } });
  }
};
t.onerror = (e) => void t.send({ jsonrpc: "2.0", id: null, error: { code: -32700, message: e.code } });
t.onclose = (reason) => process.stderr.write("closed:" + (reason ? reason.message : "eof") + "\\n");
await t.start();
`;

function runEchoServer() {
  const child = spawn(process.execPath, [...loaderArgs(SERVER_MODULE), "--input-type=module", "-e", ECHO_SERVER], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: unknown[] = [];
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    for (const part of parts) lines.push(JSON.parse(part));
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: string | null }>((res) =>
    child.on("close", (code, signal) => res({ code, signal })),
  );
  return { child, lines, exited, stderr: () => stderr };
}

function assertGone(pid: number): void {
  assert.throws(() => process.kill(pid, 0), { code: "ESRCH" });
}

describe("StdioServerTransport in a child process", () => {
  test("echoes messages, answers junk with -32700, and exits by itself on stdin EOF", async () => {
    const s = runEchoServer();
    try {
      const bytes = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"t":"ü€"}}\n');
      s.child.stdin.write(bytes.subarray(0, bytes.length - 6));
      s.child.stdin.write(bytes.subarray(bytes.length - 6));
      s.child.stdin.write("not json\n");
      s.child.stdin.write('{"jsonrpc":"2.0","method":"notify"}\n{"jsonrpc":"2.0","id":"two","method":"x"}\n');
      s.child.stdin.end();
      const { code, signal } = await s.exited;
      assert.equal(code, 0, s.stderr());
      assert.equal(signal, null);
      assert.deepEqual(s.lines, [
        { jsonrpc: "2.0", id: 1, result: { echo: { t: "ü€" } } },
        { jsonrpc: "2.0", id: null, error: { code: -32700, message: "PARSE_ERROR" } },
        { jsonrpc: "2.0", id: "two", result: { echo: null } },
      ]);
      assert.match(s.stderr(), /closed:eof\n/);
    } finally {
      s.child.kill("SIGKILL");
    }
    assertGone(s.child.pid!);
  });

  test("output sent before close() and process.exit is not lost", async () => {
    const s = runEchoServer();
    try {
      s.child.stdin.write('{"jsonrpc":"2.0","id":9,"method":"bye"}\n');
      const { code } = await s.exited;
      assert.equal(code, 0, s.stderr());
      assert.equal(s.lines.length, 1);
      const reply = s.lines[0] as { id: number; result: { text: string } };
      assert.equal(reply.id, 9);
      assert.equal(reply.result.text.length, 2 * 1024 * 1024);
    } finally {
      s.child.kill("SIGKILL");
    }
    assertGone(s.child.pid!);
  });
});
