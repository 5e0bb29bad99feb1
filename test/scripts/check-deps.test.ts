import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkProject } from "../../scripts/check-deps.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const scriptPath = join(repoRoot, "scripts", "check-deps.ts");
const tempDirs: string[] = [];

after(async () => {
  for (const d of tempDirs) await rm(d, { recursive: true, force: true });
});

const GOOD_PACKAGE = {
  name: "fixture",
  type: "module",
  devDependencies: { "@types/node": "20.19.43", tsx: "4.23.15", typescript: "5.9.3" },
};

/** Writes a project into a fresh temp dir. `package.json` defaults to a passing one. */
async function makeProject(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "check-deps-"));
  tempDirs.push(root);
  const all: Record<string, string> = { "package.json": JSON.stringify(GOOD_PACKAGE, null, 2), ...files };
  for (const [rel, text] of Object.entries(all)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  await mkdir(join(root, "src"), { recursive: true });
  return root;
}

async function problemsFor(files: Record<string, string>): Promise<string[]> {
  return checkProject(await makeProject(files));
}

function pkg(extra: Record<string, unknown>): string {
  return JSON.stringify({ ...GOOD_PACKAGE, ...extra }, null, 2);
}

/** 1-based line of the first line containing `needle`. */
function lineOf(text: string, needle: string): number {
  const i = text.split("\n").findIndex((l) => l.includes(needle));
  assert.notEqual(i, -1, `fixture has no line with ${needle}`);
  return i + 1;
}

describe("checkProject: package.json", () => {
  it("passes a project with only the allowed, exactly pinned devDependencies", async () => {
    assert.deepEqual(await problemsFor({ "src/index.ts": 'export { x } from "./x.ts";\n', "src/x.ts": "export const x = 1;\n" }), []);
  });

  it("passes empty dependency fields", async () => {
    const text = pkg({ dependencies: {}, peerDependencies: {}, optionalDependencies: {}, bundleDependencies: [] });
    assert.deepEqual(await problemsFor({ "package.json": text }), []);
  });

  for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
    it(`fails a non-empty ${field}, naming each package at its line`, async () => {
      const text = pkg({ [field]: { "left-pad": "1.3.0", zod: "^3.0.0" } });
      const problems = await problemsFor({ "package.json": text });
      assert.equal(problems.length, 2);
      assert.match(problems[0]!, new RegExp(`^package\\.json:${lineOf(text, '"left-pad"')}: ${field} .*"left-pad"`));
      assert.match(problems[1]!, new RegExp(`^package\\.json:${lineOf(text, '"zod"')}: ${field} .*"zod"`));
    });
  }

  for (const field of ["bundleDependencies", "bundledDependencies"]) {
    it(`fails a non-empty ${field} array`, async () => {
      const text = pkg({ [field]: ["bundled-thing"] });
      const problems = await problemsFor({ "package.json": text });
      assert.deepEqual(problems.length, 1);
      assert.match(problems[0]!, new RegExp(`^package\\.json:${lineOf(text, '"bundled-thing"')}: ${field} .*"bundled-thing"`));
    });
  }

  it("fails bundleDependencies: true", async () => {
    const problems = await problemsFor({ "package.json": pkg({ bundleDependencies: true }) });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^package\.json:\d+: bundleDependencies/);
  });

  it("fails a devDependency outside typescript, tsx and @types/node", async () => {
    const text = pkg({ devDependencies: { ...GOOD_PACKAGE.devDependencies, eslint: "9.0.0" } });
    const problems = await problemsFor({ "package.json": text });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, new RegExp(`^package\\.json:${lineOf(text, '"eslint"')}: .*"eslint" is not allowed`));
  });

  it("fails devDependency versions that are ranges, tags or URLs", async () => {
    const bad = ["^5.9.3", "~5.9.3", ">=5.0.0", "5.x", "*", "latest", "5.9", "npm:typescript@5.9.3", "git+https://example.com/t.git", ""];
    for (const version of bad) {
      const text = pkg({ devDependencies: { ...GOOD_PACKAGE.devDependencies, typescript: version } });
      const problems = await problemsFor({ "package.json": text });
      assert.equal(problems.length, 1, `version ${JSON.stringify(version)}: ${problems.join("; ")}`);
      assert.match(problems[0]!, new RegExp(`^package\\.json:${lineOf(text, '"typescript"')}: .*exact version`));
    }
  });

  it("accepts an exact prerelease version", async () => {
    const text = pkg({ devDependencies: { ...GOOD_PACKAGE.devDependencies, typescript: "6.0.0-beta.1" } });
    assert.deepEqual(await problemsFor({ "package.json": text }), []);
  });

  it("reports an unparseable package.json", async () => {
    const problems = await problemsFor({ "package.json": "{ not json" });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^package\.json:1: cannot read or parse/);
  });

  it("reports a missing src directory", async () => {
    const root = await mkdtemp(join(tmpdir(), "check-deps-"));
    tempDirs.push(root);
    await writeFile(join(root, "package.json"), JSON.stringify(GOOD_PACKAGE));
    assert.deepEqual(await checkProject(root), ["src:1: directory not found or unreadable"]);
  });
});

describe("checkProject: imports in src/", () => {
  it("allows relative imports and node: built-ins outside the core directories", async () => {
    const text = [
      'import { spawn } from "node:child_process";',
      'import * as path from "node:path";',
      'import type { Transport } from "./transport.ts";',
      'export { x } from "../util/x.ts";',
      'const os = await import("node:os");',
      "",
    ].join("\n");
    assert.deepEqual(await problemsFor({ "src/transport/stdio.ts": text, "src/util/x.ts": "export const x = 1;\n" }), []);
  });

  const forms: [string, string][] = [
    ["default import", 'import leftPad from "left-pad";'],
    ["named import", "import { a, b } from 'left-pad';"],
    ["namespace import", 'import * as lp from "left-pad";'],
    ["type import", 'import type { T } from "left-pad";'],
    ["default and named", 'import lp, { a } from "left-pad";'],
    ["export star", 'export * from "left-pad";'],
    ["export star as", 'export * as lp from "left-pad";'],
    ["export named", 'export { a as b } from "left-pad";'],
    ["export type", 'export type { T } from "left-pad";'],
    ["side-effect import", 'import "left-pad";'],
    ["dynamic import", 'const m = await import("left-pad");'],
    ["dynamic import, spaced", "const m = await import ( 'left-pad' );"],
    ["dynamic import, template", "const m = await import(`left-pad`);"],
    ["require", 'const m = require("left-pad");'],
    ["import-equals require", 'import lp = require("left-pad");'],
    ["typeof import type", 'type M = typeof import("left-pad");'],
  ];
  for (const [name, line] of forms) {
    it(`fails a package imported by ${name}`, async () => {
      const text = `export const before = 1;\n${line}\n`;
      const problems = await problemsFor({ "src/cli/x.ts": text });
      assert.deepEqual(problems, [
        `src/cli/x.ts:2: imports "left-pad"; only relative paths and node: built-ins are allowed`,
      ]);
    });
  }

  it("finds a multi-line import and reports the line of its specifier", async () => {
    const text = ["import {", "  alpha,", "  beta,", '} from "some-package";', ""].join("\n");
    const problems = await problemsFor({ "src/cli/multi.ts": text });
    assert.deepEqual(problems, [`src/cli/multi.ts:4: imports "some-package"; only relative paths and node: built-ins are allowed`]);
  });

  it("hints at the node: prefix for a bare built-in", async () => {
    const problems = await problemsFor({ "src/cli/fs.ts": 'import { readFile } from "fs";\n' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^src\/cli\/fs\.ts:1: imports "fs".*write "node:fs"/);
  });

  it("fails relative imports that leave src/", async () => {
    const problems = await problemsFor({
      "src/a.ts": [
        'import { x } from "../scripts/x.ts";',
        'import y from "../node_modules/y/index.js";',
        'import z from "./deep/../z.ts";',
        'import root from "..";',
        'import here from ".";',
        "",
      ].join("\n"),
    });
    assert.deepEqual(problems, [
      'src/a.ts:1: relative import "../scripts/x.ts" leaves src/',
      'src/a.ts:2: relative import "../node_modules/y/index.js" leaves src/',
      'src/a.ts:4: relative import ".." leaves src/',
    ]);
  });

  it("fails dynamic imports and requires whose specifier is not a literal", async () => {
    const text = ["const name = 'x';", "await import(name);", "require(name);", "await import(`./${name}.ts`);", ""].join("\n");
    const problems = await problemsFor({ "src/cli/dyn.ts": text });
    assert.deepEqual(problems, [
      "src/cli/dyn.ts:2: dynamic import() with a non-literal specifier cannot be checked",
      "src/cli/dyn.ts:3: require() with a non-literal specifier cannot be checked",
      "src/cli/dyn.ts:4: dynamic import() with a non-literal specifier cannot be checked",
    ]);
  });

  it("checks every source extension in nested directories", async () => {
    const problems = await problemsFor({
      "src/a/b/c.mjs": 'import x from "pkg-a";\n',
      "src/d.cjs": 'const y = require("pkg-b");\n',
      "src/e.js": 'export * from "pkg-c";\n',
      "src/notes.md": 'import x from "not-code";\n',
    });
    assert.deepEqual(
      problems.map((p) => p.split(":")[0]),
      ["src/a/b/c.mjs", "src/d.cjs", "src/e.js"],
    );
  });

  it("ignores imports inside comments, strings, templates and regex literals", async () => {
    const text = [
      '// import x from "commented-out";',
      '/* require("block-comment");',
      '   import "still-comment"; */',
      "const s = \"import y from 'in-a-string'\";",
      "const t = `import(\"in-a-template\") ${1 + 1} require('x')`;",
      "const quote = /[\"'`]/g; // a regex holding quotes must not start a string",
      "const half = 10 / 2 / 1; // division, not a regex",
      "const re = /import \"in-a-regex\"/;",
      "const url = import.meta.url;",
      "const reimport = 1; const importer = reimport;",
      "const inSub = `${/'/.test(s) ? 'import(\"in-substitution-string\")' : `${'\"'}`}`;",
      'import { real } from "./real.ts";',
      'import bad from "found-after-all-that";',
      "",
    ].join("\n");
    const problems = await problemsFor({ "src/cli/tricky.ts": text });
    assert.deepEqual(problems, [
      `src/cli/tricky.ts:13: imports "found-after-all-that"; only relative paths and node: built-ins are allowed`,
    ]);
  });

  it("sees code inside template substitutions", async () => {
    const text = "const t = `a ${await import(\"hidden-pkg\")} b`;\n";
    const problems = await problemsFor({ "src/cli/t.ts": text });
    assert.deepEqual(problems, [`src/cli/t.ts:1: imports "hidden-pkg"; only relative paths and node: built-ins are allowed`]);
  });

  it("ignores a declared function named require", async () => {
    assert.deepEqual(await problemsFor({ "src/cli/r.ts": "declare function require(id: string): unknown;\n" }), []);
  });
});

describe("checkProject: core directories", () => {
  for (const dir of ["jsonrpc", "mcp", "schema", "bridge"]) {
    it(`fails a node: import under src/${dir}/`, async () => {
      const problems = await problemsFor({ [`src/${dir}/a.ts`]: 'import { EventEmitter } from "node:events";\n' });
      assert.equal(problems.length, 1);
      assert.match(problems[0]!, new RegExp(`^src/${dir}/a\\.ts:1: core code must not import "node:events"`));
    });
  }

  it("fails type-only, re-exported and dynamic node: imports in core code", async () => {
    const text = [
      'import type { Readable } from "node:stream";',
      'export { EventEmitter } from "node:events";',
      'const fs = await import("node:fs");',
      'import "node:process";',
      "",
    ].join("\n");
    const problems = await problemsFor({ "src/mcp/b.ts": text });
    assert.deepEqual(
      problems.map((p) => p.replace(/ \(no node:.*$/, "")),
      [
        'src/mcp/b.ts:1: core code must not import "node:stream"',
        'src/mcp/b.ts:2: core code must not import "node:events"',
        'src/mcp/b.ts:3: core code must not import "node:fs"',
        'src/mcp/b.ts:4: core code must not import "node:process"',
      ],
    );
  });

  it("fails references to the globals Buffer and process", async () => {
    const text = [
      "const a = Buffer.from('x');",
      "const b = process.env.HOME;",
      "const c = typeof process;",
      "const d = globalThis.process;",
      "const e = { ...process.env };",
      "const f = { process };",
      "const g = flag ? process : null;",
      "const h: Buffer = a;",
      "",
    ].join("\n");
    const problems = await problemsFor({ "src/schema/g.ts": text });
    assert.deepEqual(problems, [
      'src/schema/g.ts:1: core code must not use the Node global "Buffer"',
      'src/schema/g.ts:2: core code must not use the Node global "process"',
      'src/schema/g.ts:3: core code must not use the Node global "process"',
      'src/schema/g.ts:4: core code must not use the Node global "process"',
      'src/schema/g.ts:5: core code must not use the Node global "process"',
      'src/schema/g.ts:6: core code must not use the Node global "process"',
      'src/schema/g.ts:7: core code must not use the Node global "process"',
      'src/schema/g.ts:8: core code must not use the Node global "Buffer"',
    ]);
  });

  it("does not mistake comments, strings, property names or longer identifiers for the globals", async () => {
    const text = [
      "// process and Buffer are fine in comments",
      "/* Buffer.from(process.env) */",
      'const s = "process.env and Buffer.from";',
      "const t = `process ${1} Buffer`;",
      "const o = { process: 1, Buffer: 2 };",
      "interface I { process?: number; Buffer: string }",
      "const p = o.process + o.Buffer;",
      "class C { #process = 1; get x() { return this.#process; } }",
      "const ab = new ArrayBuffer(8); const sab = SharedArrayBuffer; const processLine = 1;",
      "const re = /process|Buffer/;",
      "class P { process(x: number): number { return x; } run() { return this.process(1); } }",
      "const myself = { process: 1 }; const n = myself.process;",
      "",
    ].join("\n");
    assert.deepEqual(await problemsFor({ "src/bridge/ok.ts": text }), []);
  });

  it("allows node: imports and the Node globals outside the core directories", async () => {
    const text = 'import { argv } from "node:process";\nconst b = Buffer.from(process.env.X ?? "");\n';
    assert.deepEqual(await problemsFor({ "src/transport/stdio.ts": text, "src/cli/main.ts": text }), []);
  });

  it("reports every problem across files, each with its file and line", async () => {
    const problems = await problemsFor({
      "package.json": pkg({ dependencies: { chalk: "5.0.0" } }),
      "src/jsonrpc/x.ts": '\n\nimport "node:util";\nconst y = process.pid;\n',
      "src/cli/z.ts": 'import c from "chalk";\n',
    });
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /^package\.json:\d+: dependencies/);
    assert.match(problems[1]!, /^src\/cli\/z\.ts:1: imports "chalk"/);
    assert.match(problems[2]!, /^src\/jsonrpc\/x\.ts:3: core code must not import "node:util"/);
    assert.match(problems[3]!, /^src\/jsonrpc\/x\.ts:4: core code must not use the Node global "process"/);
  });
});

describe("the real repository", () => {
  it("passes checkProject", async () => {
    assert.deepEqual(await checkProject(repoRoot), []);
  });
});

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a script with this Node and waits for it; kills it if it hangs, and checks its pid is gone. */
async function runScript(path: string): Promise<RunResult> {
  const { command, args } = nodeModuleCommand(path);
  const child = spawn(command, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await new Promise<number | null>((resolveExit, reject) => {
    child.once("error", reject);
    child.once("close", (c) => resolveExit(c));
  });
  clearTimeout(timer);
  const pid = child.pid;
  assert.ok(pid !== undefined);
  assert.throws(() => process.kill(pid, 0), { code: "ESRCH" }, "child process is gone");
  return { code, stdout, stderr };
}

describe("scripts/check-deps.ts as a program", () => {
  it("exits 0 on the real repository", async () => {
    const r = await runScript(scriptPath);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /check-deps: ok/);
  });

  it("exits 1 and prints every problem with file:line when run inside a failing project", async () => {
    const root = await makeProject({
      "package.json": pkg({ dependencies: { chalk: "5.0.0" } }),
      "src/jsonrpc/x.ts": 'import "node:util";\n',
    });
    await mkdir(join(root, "scripts"), { recursive: true });
    const copy = join(root, "scripts", "check-deps.ts");
    await copyFile(scriptPath, copy);
    await copyFile(join(repoRoot, "scripts", "check-layers.ts"), join(root, "scripts", "check-layers.ts"));
    const r = await runScript(copy);
    assert.equal(r.code, 1);
    const lines = r.stderr.trim().split("\n");
    assert.match(lines[0]!, /^package\.json:\d+: dependencies .*"chalk"/);
    assert.match(lines[1]!, /^src\/jsonrpc\/x\.ts:1: core code must not import "node:util"/);
    assert.match(lines[2]!, /2 problem/);
  });
});
