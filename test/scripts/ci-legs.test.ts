/**
 * The CI matrix's pieces with real parts: a real git repository in a temporary folder, a real
 * copy of it, and a real `node --test` run of a tiny suite in that copy.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readlinkSync, statSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import {
  checkoutFiles,
  copyCheckout,
  formatDuration,
  nativeEnv,
  nativeTestArgs,
  nodeModulesAbove,
  REPO_ROOT,
  runLeg,
  TEST_DIR,
  TEST_SUFFIX,
  testFiles,
} from "../../scripts/ci-legs.ts";
import type { Leg } from "../../scripts/ci-legs.ts";

const temps: string[] = [];
after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], { cwd, stdio: "ignore" });
}

/** A git repository with committed, deleted, untracked, ignored and installed files. */
async function fakeCheckout(files: Record<string, string>): Promise<string> {
  const root = await tempDir("ci-legs-repo-");
  await writeFiles(root, { ".gitignore": "node_modules/\n*.log\n", "gone.txt": "deleted after the commit\n", ...files });
  git(root, "init", "-q");
  git(root, "add", ".");
  git(root, "commit", "-q", "-m", "fixture");
  await rm(join(root, "gone.txt"));
  await writeFiles(root, {
    "untracked.txt": "not committed yet\n",
    "debug.log": "ignored\n",
    "node_modules/dep/index.js": "export const installed = true;\n",
  });
  return root;
}

describe("the suite's files", () => {
  test("testFiles finds every *.test.ts under test/, sorted, as npm test does", async () => {
    const root = await tempDir("ci-legs-files-");
    await writeFiles(root, {
      "test/b.test.ts": "",
      "test/a/z.test.ts": "",
      "test/a/helpers.ts": "",
      "test/a/old.test.js": "",
      "src/not-here.test.ts": "",
    });
    assert.deepEqual(await testFiles(root), ["test/a/z.test.ts", "test/b.test.ts"]);
  });

  test("the native command is node --test with npm test's concurrency, its timeout and the files", () => {
    assert.deepEqual(nativeTestArgs(["test/a.test.ts"]), ["--test", "--test-concurrency=2", "--test-timeout=600000", "test/a.test.ts"]);
  });

  test("the native command leaves out the *.dev.test.ts files, as the README's offline command does", () => {
    assert.deepEqual(nativeTestArgs(["test/a.test.ts", "test/b.dev.test.ts", "test/c/d.test.ts"]), ["--test", "--test-concurrency=2", "--test-timeout=600000", "test/a.test.ts", "test/c/d.test.ts"]);
  });

  test("npm test is the same command with tsx, on the same files: change them together", async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    const find = `$(find ${TEST_DIR} -name '*${TEST_SUFFIX}' | sort)`;
    assert.equal(pkg.scripts.test, ["node", "--import", "tsx", ...nativeTestArgs([find])].join(" "));
  });
});

test("nativeEnv puts the leg's node first on PATH and drops what could preload a package", () => {
  const env = nativeEnv("/opt/node-24/bin/node", {
    PATH: "/usr/bin",
    HOME: "/home/x",
    NODE_OPTIONS: "--import tsx",
    NODE_PATH: "/somewhere/node_modules",
    NODE_TEST_CONTEXT: "child-v8",
  });
  assert.deepEqual(env, { PATH: `/opt/node-24/bin${delimiter}/usr/bin`, HOME: "/home/x" });
});

describe("the copy of a checkout", () => {
  test("checkoutFiles lists tracked and untracked files, not ignored ones", async () => {
    const root = await fakeCheckout({ "src/a.ts": "export const a = 1;\n" });
    assert.deepEqual(await checkoutFiles(root), [".gitignore", "gone.txt", "src/a.ts", "untracked.txt"]);
  });

  test("copyCheckout copies those files with their modes and links, and no node_modules", async () => {
    const root = await fakeCheckout({ "src/a.ts": "export const a = 1;\n", "bin/run.sh": "#!/bin/sh\necho hi\n" });
    await chmod(join(root, "bin/run.sh"), 0o755);
    await symlink("src/a.ts", join(root, "link.ts"));
    const copy = await copyCheckout(root);
    temps.push(copy);
    assert.deepEqual(execFileSync("find", [".", "-not", "-type", "d"], { cwd: copy, encoding: "utf8" }).split("\n").filter(Boolean).sort(), [
      "./.gitignore",
      "./bin/run.sh",
      "./link.ts",
      "./src/a.ts",
      "./untracked.txt",
    ]);
    assert.equal(statSync(join(copy, "bin/run.sh")).mode & 0o777, 0o755);
    assert.equal(readlinkSync(join(copy, "link.ts")), "src/a.ts");
    assert.equal(nodeModulesAbove(copy), undefined);
  });

  test("copyCheckout links the pinned Node binaries of scripts/node-matrix, and nothing else installed", async () => {
    const root = await fakeCheckout({ "src/a.ts": "export const a = 1;\n" });
    await writeFiles(root, { "scripts/node-matrix/node_modules/node-24/bin/node": "#!/bin/sh\n" });
    const copy = await copyCheckout(root);
    temps.push(copy);
    assert.equal(readlinkSync(join(copy, "scripts/node-matrix/node_modules")), join(root, "scripts/node-matrix/node_modules"));
    assert.equal(existsSync(join(copy, "node_modules")), false);
    assert.equal(nodeModulesAbove(copy), undefined);
  });

  test("nodeModulesAbove finds a node_modules in any folder above", async () => {
    const root = await tempDir("ci-legs-above-");
    await mkdir(join(root, "node_modules"));
    await mkdir(join(root, "a", "b"), { recursive: true });
    assert.equal(nodeModulesAbove(join(root, "a", "b")), join(root, "node_modules"));
  });
});

describe("runLeg on a tiny suite", () => {
  const SUITE = {
    // Proves where it ran: no node_modules beside it, `node` on PATH is this very binary.
    "test/ok.test.mjs": [
      'import test from "node:test";',
      'import assert from "node:assert/strict";',
      'import { existsSync } from "node:fs";',
      'import { execFileSync } from "node:child_process";',
      'test("ok", () => {',
      '  console.log("ran in " + process.cwd());',
      '  assert.equal(existsSync("node_modules"), false);',
      '  assert.equal(execFileSync("node", ["-p", "process.execPath"], { encoding: "utf8" }).trim(), process.execPath);',
      "});",
    ].join("\n"),
    "test/fails.test.mjs": 'import test from "node:test";\ntest("fails", () => { throw new Error("no"); });\n',
  };

  function leg(file: string, copy: boolean): Leg {
    return {
      label: `tiny ${file}`,
      command: process.execPath,
      args: ["--test", "--test-reporter=tap", file],
      env: nativeEnv(process.execPath, { ...process.env, NODE_OPTIONS: "--require /nonexistent/preload.cjs" }),
      copy,
    };
  }

  /** A clock that says 1000 ms at the start and 3500 ms at the end. */
  function clock(): () => number {
    const ticks = [1000, 3500];
    return () => ticks.shift()!;
  }

  test("a passing suite passes in a copy without node_modules, which is removed afterwards", async () => {
    const root = await fakeCheckout(SUITE);
    const result = await runLeg(leg("test/ok.test.mjs", true), { root, output: "capture", clock: clock() });
    const ranIn = /ran in (\S+)/.exec(result.output ?? "")?.[1];
    assert.deepEqual({ ...result, output: undefined }, { label: "tiny test/ok.test.mjs", ok: true, exitCode: 0, signal: null, durationMs: 2500, output: undefined }, result.output);
    assert.ok(ranIn !== undefined && ranIn !== root, `ran in the copy, not the checkout:\n${result.output}`);
    assert.equal(existsSync(ranIn), false);
  });

  test("a failing suite fails the leg with the runner's exit code", async () => {
    const root = await fakeCheckout(SUITE);
    const result = await runLeg(leg("test/fails.test.mjs", true), { root, output: "capture", clock: clock() });
    assert.deepEqual([result.ok, result.exitCode, result.signal], [false, 1, null]);
    assert.match(result.output ?? "", /# fail 1/);
  });

  test("in place, the same suite sees the checkout's node_modules and fails", async () => {
    const root = await fakeCheckout(SUITE);
    const result = await runLeg(leg("test/ok.test.mjs", false), { root, output: "capture", clock: clock() });
    assert.deepEqual([result.ok, result.exitCode], [false, 1]);
    assert.match(result.output ?? "", new RegExp(`ran in ${root}`));
  });
});

test("formatDuration prints minutes and tenths of seconds", () => {
  assert.deepEqual([0, 41_249, 59_960, 137_733, 600_000].map(formatDuration), ["0.0s", "41.2s", "1m 0.0s", "2m 17.7s", "10m 0.0s"]);
});
