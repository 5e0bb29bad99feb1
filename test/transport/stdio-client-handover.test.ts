/**
 * A process started with `startProcess` and handed to a StdioClientTransport later (the CLI's
 * early spawn): nothing it wrote or did before the transport took it over is lost, and a
 * transport closed without starting still stops it.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { startProcess, type StartedProcess } from "../../src/transport/stdio-spawn.ts";
import { alive, fixture } from "../e2e/helpers.ts";
import { until, within } from "../helpers/wait.ts";
import { faulty, textOf } from "./stdio-client-helpers.ts";

const tempDirs: string[] = [];
after(async () => {
  for (const dir of tempDirs) await rm(dir, { recursive: true, force: true });
});

/** Starts the faulty fixture with `flags` as a process of its own, not yet handed to a transport. */
async function started(flags: string[]): Promise<StartedProcess> {
  const p = await startProcess(fixture("faulty.ts", flags));
  assert.ok(p !== undefined);
  return p;
}

describe("StdioClientTransport: a process handed over", () => {
  test("is served as a process of its own: same pid and command, requests answered, close stops it", async () => {
    const p = await started([]);
    assert.equal(await p.running, undefined);
    const f = faulty([], { process: p });
    await f.transport.start();
    assert.equal(f.transport.pid, p.child.pid);
    assert.equal(f.transport.resolvedCommand, p.resolvedCommand);
    assert.equal(textOf((await f.request(1, "tools/call", { name: "echo", arguments: { text: "handed" } })).result), "handed");
    await f.transport.close();
    assert.deepEqual(f.closes, [undefined]);
    assert.equal(alive(p.child.pid!), false);
  });

  test("what it wrote to stdout and stderr before the hand-over is delivered, in order", async () => {
    const p = await started(["--junk", "--notify-before-init", "--stderr-echo"]);
    assert.equal(await p.running, undefined);
    // Let it write its start-up junk before anyone reads.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const f = faulty([], { process: p });
    await f.transport.start();
    await f.request(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } });
    // The notifications sent before the initialize response came first, and the junk was counted.
    const methods = f.messages.map((m) => (m as { method?: string }).method ?? "response");
    assert.equal(methods.at(-1), "response");
    assert.ok(methods.includes("notifications/tools/list_changed"), methods.join(", "));
    assert.ok(f.transport.stats.junkLines > 0);
    await f.transport.close();
    assert.equal(alive(p.child.pid!), false);
  });

  test("an exit before the hand-over is reported once started, with its code and stderr", async () => {
    const p = await started(["--exit-at-start"]);
    await until(() => p.exit !== undefined, "the fixture's exit");
    const f = faulty([], { process: p });
    await f.transport.start();
    const reason = await within(f.closedPromise, "the end the early exit reports");
    assert.ok(reason instanceof BridgeError);
    assert.equal(reason.code, "PROCESS_EXITED");
    assert.equal(reason.details.code, 3);
    assert.match(reason.message, /exited with code 3/);
    await f.transport.close();
  });

  test("a process that could not start fails start() with SPAWN_FAILED, as one the transport spawned", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-handover-"));
    tempDirs.push(dir);
    // Executable, so the lookup finds it; its interpreter does not exist, so exec fails (ENOENT).
    const script = join(dir, "bad-interpreter");
    await writeFile(script, "#!/nonexistent/interpreter\n");
    await chmod(script, 0o755);
    const p = await startProcess({ command: script });
    assert.ok(p !== undefined);
    const handed = faulty([], { command: script, process: p, name: "bad" });
    const own = faulty([], { command: script, name: "bad" });
    for (const f of [handed, own]) {
      await assert.rejects(f.transport.start(), { name: "BridgeError", code: "SPAWN_FAILED", message: /spawn ".*bad-interpreter" failed: ENOENT/ });
      await f.transport.close();
    }
    assert.deepEqual(handed.closes, own.closes);
  });

  test("closed without being started, the transport still stops the process it was given", async () => {
    const p = await started([]);
    assert.equal(await p.running, undefined);
    const f = faulty([], { process: p });
    await f.transport.close();
    assert.equal(alive(p.child.pid!), false);
    await assert.rejects(f.transport.start(), { code: "CLOSED" });
  });

  test("startProcess spawns nothing when the caller gave up while the command was looked up", async () => {
    const p = await startProcess(fixture("faulty.ts", []), () => true);
    assert.equal(p, undefined);
  });
});
