import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { ByteRing, lastLines, TextLineSplitter } from "../../src/transport/ring-buffer.ts";
import { buildChildEnv, resolveCommand } from "../../src/transport/spawn-env.ts";
import { StdioClientTransport, type StdioClientOptions } from "../../src/transport/stdio-client.ts";
import { alive, fixture } from "../e2e/helpers.ts";

const MiB = 1024 * 1024;

/** A transport on the faulty fixture, recording everything it reports. */
function faulty(flags: string[], options: Partial<StdioClientOptions> = {}) {
  const messages: unknown[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  const stderr: string[] = [];
  const logs: string[] = [];
  const waiters: { match: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
  const transport = new StdioClientTransport(fixture("faulty.ts", flags, {
    name: "faulty",
    shutdownGraceMs: 200,
    onStderr: (line) => stderr.push(line),
    onLog: (msg) => logs.push(msg),
    ...options,
  }));
  let closed: (reason: Error | undefined) => void = () => {};
  const closedPromise = new Promise<Error | undefined>((res) => (closed = res));
  transport.onmessage = (m) => {
    messages.push(m);
    const i = waiters.findIndex((w) => w.match(m));
    if (i !== -1) waiters.splice(i, 1)[0]!.resolve(m);
  };
  transport.onerror = (e) => errors.push(e);
  transport.onclose = (reason) => {
    closes.push(reason);
    closed(reason);
  };
  const waitFor = (match: (m: unknown) => boolean): Promise<unknown> => {
    const seen = messages.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ match, resolve }));
  };
  const request = async (id: number, method: string, params?: Record<string, unknown>) => {
    const response = waitFor((m) => (m as { id?: unknown }).id === id);
    const msg: JsonRpcMessage = params ? { jsonrpc: "2.0", id, method, params } : { jsonrpc: "2.0", id, method };
    await transport.send(msg);
    return (await response) as { id: number; result?: Record<string, unknown>; error?: { code: number } };
  };
  const stderrLine = async (prefix: string): Promise<string> => {
    for (;;) {
      const line = stderr.find((l) => l.startsWith(prefix));
      if (line !== undefined) return line;
      await sleep(20);
    }
  };
  return { transport, messages, errors, closes, stderr, logs, closedPromise, waitFor, request, stderrLine };
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (!alive(pid)) return true;
    await sleep(25);
  }
  return false;
}

function textOf(result: Record<string, unknown> | undefined): string {
  const content = (result?.content ?? []) as { type: string; text: string }[];
  return content[0]!.text;
}

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } };

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-stdio-"));
  tempDirs.push(dir);
  return dir;
}
after(async () => {
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
});

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
    while (!messages.includes("stdin-closed")) await sleep(20);
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

describe("StdioClientTransport: spawning", () => {
  test("a command not on PATH fails with SPAWN_FAILED ENOENT naming server and command", async () => {
    const t = new StdioClientTransport({ command: "mcp-bridge-no-such-command", name: "nope" });
    const err = await t.start().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof BridgeError);
    assert.equal(err.code, "SPAWN_FAILED");
    assert.equal(err.message, 'server "nope": spawn "mcp-bridge-no-such-command" failed: ENOENT (is it on PATH?)');
    assert.equal(t.pid, undefined);
    await t.close();
  });

  test("a file that is not executable fails with SPAWN_FAILED EACCES, by path and through PATH", async () => {
    const dir = await tempDir();
    const file = join(dir, "not-exec");
    await writeFile(file, "#!/bin/sh\necho hi\n");
    await chmod(file, 0o644);

    const byPath = new StdioClientTransport({ command: file, name: "ro" });
    await assert.rejects(byPath.start(), (e: unknown) => {
      assert.ok(e instanceof BridgeError);
      assert.equal(e.code, "SPAWN_FAILED");
      assert.equal(e.message, `server "ro": spawn "${file}" failed: EACCES (${file} is not executable)`);
      return true;
    });
    const viaPath = new StdioClientTransport({ command: "not-exec", env: { PATH: dir } });
    await assert.rejects(viaPath.start(), { code: "SPAWN_FAILED", message: /EACCES/ });
  });

  test("a bare command is resolved through the child's PATH to an absolute path", async () => {
    const dir = await tempDir();
    await symlink(process.execPath, join(dir, "mcp-node"));
    const f = faulty([], { command: "mcp-node", env: { PATH: dir } });
    await f.transport.start();
    assert.equal(f.transport.resolvedCommand, join(dir, "mcp-node"));
    assert.deepEqual((await f.request(1, "ping")).result, {});
    await f.transport.close();
    assert.equal(alive(f.transport.pid!), false);
  });

  test("a command with a slash is resolved against cwd, not PATH", async () => {
    const dir = await tempDir();
    await symlink(process.execPath, join(dir, "local-node"));
    const t = new StdioClientTransport({ command: "./local-node", args: ["-e", ""], cwd: dir, env: { PATH: "" } });
    await t.start();
    assert.equal(t.resolvedCommand, join(dir, "local-node"));
    await t.close();
    assert.equal(alive(t.pid!), false);
  });

  test("an argument spawn refuses (a NUL byte) fails with SPAWN_FAILED, not a throw", async () => {
    const t = new StdioClientTransport({ command: process.execPath, args: ["a\u0000b"], name: "nul" });
    await assert.rejects(t.start(), { code: "SPAWN_FAILED", message: /^server "nul": spawn ".+" failed: / });
    await t.close();
  });

  test("a missing working directory fails with SPAWN_FAILED naming it", async () => {
    const t = new StdioClientTransport({ command: process.execPath, cwd: "/nonexistent/mcp-bridge-dir" });
    await assert.rejects(t.start(), { code: "SPAWN_FAILED", message: /working directory "\/nonexistent\/mcp-bridge-dir"/ });
  });

  test("resolveCommand skips relative PATH entries and prefers a later executable over EACCES", async () => {
    const dir = await tempDir();
    const ro = join(dir, "ro");
    const ok = join(dir, "ok");
    const rel = "relative-dir";
    await mkdir(ro);
    await mkdir(ok);
    await writeFile(join(ro, "tool"), "#!/bin/sh\n", { mode: 0o644 });
    await writeFile(join(ok, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    assert.equal(await resolveCommand("tool", { cwd: dir, env: { PATH: `${rel}:${ro}:${ok}` } }), join(ok, "tool"));
    await assert.rejects(resolveCommand("tool", { cwd: dir, env: { PATH: ro } }), { code: "EACCES" });
    await assert.rejects(resolveCommand("tool", { cwd: ok, env: { PATH: "" } }), { code: "ENOENT" });
  });
});

describe("StdioClientTransport: environment", () => {
  test("buildChildEnv passes the minimal base plus explicit vars; inheritEnv passes everything", () => {
    const source = { PATH: "/bin", HOME: "/h", SHELL: "/bin/zsh", API_KEY: "secret", LANG: "C" };
    assert.deepEqual(buildChildEnv({ source, env: { EXTRA: "1" }, platform: "linux" }), {
      PATH: "/bin",
      HOME: "/h",
      LANG: "C",
      EXTRA: "1",
    });
    assert.deepEqual(buildChildEnv({ source, inheritEnv: true, env: { HOME: "/other" }, platform: "linux" }), {
      ...source,
      HOME: "/other",
    });
    const win = buildChildEnv({
      source: { Path: "C:\\bin", SystemRoot: "C:\\Windows", SECRET: "s" },
      env: { PATH: "D:\\bin" },
      platform: "win32",
    });
    assert.deepEqual(win, { SystemRoot: "C:\\Windows", PATH: "D:\\bin" });
  });

  test("the child sees only the minimal env unless inheritEnv is set", async () => {
    process.env.MCP_BRIDGE_TEST_SECRET = "do-not-leak";
    try {
      const readEnv = async (options: Partial<StdioClientOptions>) => {
        const f = faulty(["--print-env"], options);
        await f.transport.start();
        const res = await f.request(1, "tools/call", { name: "env", arguments: {} });
        await f.transport.close();
        assert.equal(alive(f.transport.pid!), false);
        return JSON.parse(textOf(res.result)) as Record<string, string>;
      };
      const minimal = await readEnv({ env: { MCP_BRIDGE_EXPLICIT: "yes" } });
      assert.equal(minimal.MCP_BRIDGE_TEST_SECRET, undefined);
      assert.equal(minimal.MCP_BRIDGE_EXPLICIT, "yes");
      assert.equal(minimal.PATH, process.env.PATH);
      const inherited = await readEnv({ inheritEnv: true });
      assert.equal(inherited.MCP_BRIDGE_TEST_SECRET, "do-not-leak");
    } finally {
      delete process.env.MCP_BRIDGE_TEST_SECRET;
    }
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
