import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { connect, createServer } from "node:net";
import { test } from "node:test";
import { assertNetnsAvailable, groupAlive, inNetns, ProcessGroups } from "../../scripts/netns.ts";
import { until } from "../helpers/wait.ts";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === "object" && addr !== null ? addr.port : 0));
    });
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", () => resolve(true));
  });
}

test("a namespace can be created here (the conformance and interop scripts depend on it)", () => {
  assert.doesNotThrow(() => assertNetnsAvailable());
});

test("inNetns runs the command with loopback as the only interface, and up", () => {
  const { command, args } = inNetns(["ip", "-o", "link", "show"]);
  const r = spawnSync(command, args, { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const links = r.stdout.trim().split("\n");
  assert.equal(links.length, 1, r.stdout);
  assert.match(links[0] ?? "", /^1: lo: <[^>]*\bUP\b/);
});

test("inNetns passes arguments through untouched (no shell splitting)", () => {
  const { command, args } = inNetns(["printf", "%s|", "a b", "$HOME", "'q'"]);
  const r = spawnSync(command, args, { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, "a b|$HOME|'q'|");
});

test("a server listening on every interface inside is reachable inside and not from outside", async () => {
  const port = await freePort();
  const script = [
    "const net = require('node:net');",
    `const s = net.createServer((c) => c.end('hi')).listen(${port}, '0.0.0.0', () => {`,
    `  net.connect(${port}, '127.0.0.1').on('data', (d) => console.log('inside got ' + d)).on('error', (e) => console.log('inside error ' + e.code));`,
    "});",
  ].join("\n");
  const groups = new ProcessGroups();
  const { command, args } = inNetns([process.execPath, "-e", script]);
  const p = groups.start("listener", command, args);
  try {
    await until(() => p.output().includes("inside "), "the inner connection");
    assert.match(p.output(), /inside got hi/);
    assert.equal(await refused(port), true, "the namespaced listener must not be reachable from outside");
  } finally {
    await groups.stopAll();
  }
  assert.equal(groupAlive(p.pid), false);
});

test("stopAll ends a whole process group, grandchildren included", async () => {
  const groups = new ProcessGroups();
  // The shell's children (the backgrounded sleep) stay in its group.
  const p = groups.start("tree", "sh", ["-c", "sleep 300 & echo started; wait"]);
  await until(() => p.output().includes("started"), "the shell");
  assert.equal(groupAlive(p.pid), true);
  await groups.stopAll(500);
  assert.equal(groupAlive(p.pid), false);
  const { signal } = await p.exited;
  assert.equal(signal, "SIGTERM");
});
