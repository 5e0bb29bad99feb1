/** Starting the stdio client's child: command resolution, spawn failures, and the environment the child sees. */
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { buildChildEnv, resolveCommand } from "../../src/transport/spawn-env.ts";
import { StdioClientTransport, type StdioClientOptions } from "../../src/transport/stdio-client.ts";
import { alive } from "../e2e/helpers.ts";
import { faulty, textOf } from "./stdio-client-helpers.ts";

const tempDirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-stdio-"));
  tempDirs.push(dir);
  return dir;
}
after(async () => {
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
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
    await assert.rejects(byPath.start(), {
      name: "BridgeError",
      code: "SPAWN_FAILED",
      message: `server "ro": spawn "${file}" failed: EACCES (${file} is not executable)`,
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
    await assert.rejects(resolveCommand("tool", { cwd: dir, env: { PATH: ro } }), { name: "CommandNotFoundError", code: "COMMAND_NOT_EXECUTABLE", errno: "EACCES" });
    await assert.rejects(resolveCommand("tool", { cwd: ok, env: { PATH: "" } }), { name: "CommandNotFoundError", code: "COMMAND_NOT_FOUND", errno: "ENOENT" });
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
