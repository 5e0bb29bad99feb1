/**
 * `mcp-bridge vendor`: what a copy holds (a subset's import closure, byte for byte, with
 * LICENSE, package.json, verify.mjs and MANIFEST.sha256), how `verify.mjs` and `vendor --verify`
 * report a copy that was edited, and how vendoring over an existing directory behaves.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, describe, test } from "node:test";
import { SUBSET_ENTRIES, SUBSETS } from "../../src/cli/vendor-closure.ts";
import { moduleReferences } from "../../src/cli/vendor-imports.ts";
import { reap, ROOT } from "../e2e/helpers.ts";
import { run } from "./helpers.ts";

const work = mkdtempSync(join(tmpdir(), "mcp-bridge-vendor-"));
const pids: number[] = [];
after(() => {
  for (const pid of pids) reap(pid);
  rmSync(work, { recursive: true, force: true });
});

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
let count = 0;

/** A fresh directory path (not created) under the test's scratch folder. */
function freshDir(): string {
  return join(work, `copy-${++count}`);
}

/** Vendors `subset` into a fresh directory with the in-process CLI; returns the directory. */
async function vendored(subset: string): Promise<string> {
  const dir = freshDir();
  const r = await run(["vendor", dir, "--subset", subset]);
  assert.equal(r.code, 0, r.err);
  return dir;
}

/** Every file below `dir`, relative, `/`-separated, sorted. */
function filesBelow(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => {
      const path = prefix === "" ? e.name : `${prefix}/${e.name}`;
      return e.isDirectory() ? filesBelow(dir, path) : [path];
    })
    .sort();
}

/** `node <dir>/verify.mjs` with the Node running the tests, no loader. */
function verifyScript(dir: string): { code: number | null; out: string; err: string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [join(dir, "verify.mjs")], { encoding: "utf8", env, timeout: 60_000 });
  if (r.pid !== undefined) pids.push(r.pid);
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("vendor", () => {
  test("--subset client copies the client entries' import closure byte for byte, with LICENSE, package.json, verify.mjs and a sorted MANIFEST.sha256", async () => {
    const dir = freshDir();
    const r = await run(["vendor", dir, "--subset", "client"]);
    assert.equal(r.code, 0, r.err);
    const files = filesBelow(dir);
    const sources = files.filter((f) => f.startsWith("src/"));
    assert.match(r.out, new RegExp(`^vendored mcp-bridge ${VERSION}, subset client: ${sources.length} files of src/ \\(\\d+ bytes, \\d+ lines\\) into ${dir}\ncheck it with: node ${dir}/verify.mjs$`));
    for (const entry of SUBSET_ENTRIES.client) assert.ok(sources.includes(`src/${entry}`), `entry ${entry} was copied`);
    // A client needs neither the server side nor anything of the manager, ACP or CLI.
    assert.deepEqual(sources.filter((f) => /^src\/(cli|acp|manager|config)\/|^src\/mcp\/server/.test(f)), []);
    assert.deepEqual(files.filter((f) => !f.startsWith("src/")), ["LICENSE", "MANIFEST.sha256", "package.json", "verify.mjs"]);
    for (const file of sources) assert.deepEqual(readFileSync(join(dir, file)), readFileSync(join(ROOT, file)), file);
    assert.deepEqual(readFileSync(join(dir, "LICENSE")), readFileSync(join(ROOT, "LICENSE")));
    assert.deepEqual(readFileSync(join(dir, "verify.mjs")), readFileSync(join(ROOT, "src/cli/vendor-verify.mjs")));
    assert.deepEqual(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")), {
      name: "mcp-bridge",
      version: VERSION,
      private: true,
      type: "module",
      description: `mcp-bridge ${VERSION}, subset client, copied by \`mcp-bridge vendor\`; check it with \`node verify.mjs\``,
    });
    // One line per file but the manifest itself, `<sha256>  <path>`, sorted by path.
    const expected = files.filter((f) => f !== "MANIFEST.sha256").map((f) => `${sha256(readFileSync(join(dir, f)))}  ${f}\n`).join("");
    assert.equal(readFileSync(join(dir, "MANIFEST.sha256"), "utf8"), expected);
  });

  test("each subset's copy is closed under its imports and holds its entries; all is the whole of src/", async () => {
    for (const subset of SUBSETS) {
      const dir = await vendored(subset);
      const sources = filesBelow(dir).filter((f) => f.startsWith("src/"));
      for (const file of sources.filter((f) => f.endsWith(".ts"))) {
        for (const { specifier } of moduleReferences(readFileSync(join(dir, file), "utf8"))) {
          if (specifier.startsWith("node:")) continue;
          const target = resolve(dirname(join(dir, file)), specifier);
          assert.ok(sources.includes(target.slice(dir.length + 1)), `${subset}: ${file} imports ${specifier}, which was not copied`);
        }
      }
      for (const entry of SUBSET_ENTRIES[subset]) assert.ok(sources.includes(`src/${entry}`), `${subset}: entry ${entry}`);
      if (subset === "all") assert.deepEqual(sources, filesBelow(join(ROOT, "src")).map((f) => `src/${f}`));
      else assert.ok(sources.length < filesBelow(join(ROOT, "src")).length, `${subset} is a subset`);
    }
  });

  test("verify.mjs and vendor --verify pass on a fresh copy; one edited byte fails both, naming the file", async () => {
    const dir = await vendored("client");
    const ok = `verify: ok, ${filesBelow(dir).length - 1} files match MANIFEST.sha256 in ${dir}`;
    assert.deepEqual(verifyScript(dir), { code: 0, out: `${ok}\n`, err: "" });
    assert.deepEqual(await run(["vendor", "--verify", dir]), { code: 0, out: ok, err: "" });

    const file = join(dir, "src/mcp/client.ts");
    const bytes = readFileSync(file);
    bytes[100] = bytes[100]! ^ 1;
    writeFileSync(file, bytes);
    const report = `verify: 1 difference(s) from MANIFEST.sha256 in ${dir}\nchanged  src/mcp/client.ts`;
    assert.deepEqual(verifyScript(dir), { code: 1, out: `${report}\n`, err: "" });
    assert.deepEqual(await run(["vendor", "--verify", dir]), { code: 1, out: report, err: "" });
  });

  test("added and missing files, and a link in place of a file, are reported by both the same way", async () => {
    const dir = await vendored("client");
    unlinkSync(join(dir, "src/jsonrpc/peer.ts"));
    writeFileSync(join(dir, "src/jsonrpc/extra.ts"), "export {};\n");
    mkdirSync(join(dir, "notes"));
    writeFileSync(join(dir, "notes/todo.txt"), "x");
    unlinkSync(join(dir, "src/mcp/types.ts"));
    symlinkSync(join(ROOT, "src/mcp/types.ts"), join(dir, "src/mcp/types.ts"));
    appendFileSync(join(dir, "verify.mjs"), "\n");
    const report = [
      `verify: 5 difference(s) from MANIFEST.sha256 in ${dir}`,
      "changed  src/mcp/types.ts",
      "changed  verify.mjs",
      "missing  src/jsonrpc/peer.ts",
      "added    notes/todo.txt",
      "added    src/jsonrpc/extra.ts",
    ].join("\n");
    assert.deepEqual(verifyScript(dir), { code: 1, out: `${report}\n`, err: "" });
    assert.deepEqual(await run(["vendor", "--verify", dir]), { code: 1, out: report, err: "" });
  });

  test("a manifest line whose path leaves the directory is refused by both, with its line number", async () => {
    const dir = await vendored("client");
    appendFileSync(join(dir, "MANIFEST.sha256"), `${"0".repeat(64)}  ../outside.ts\n`);
    const lines = readFileSync(join(dir, "MANIFEST.sha256"), "utf8").split("\n").length - 1;
    const script = verifyScript(dir);
    assert.equal(script.code, 1);
    assert.equal(script.err, `verify: MANIFEST.sha256 line ${lines} is not "<sha256 hex>  <relative path>": "${"0".repeat(64)}  ../outside.ts"\n`);
    const cli = await run(["vendor", "--verify", dir]);
    assert.equal(cli.code, 1);
    assert.match(cli.err, new RegExp(`MANIFEST\\.sha256 line ${lines} is not .*\\[VENDOR_MANIFEST\\]$`));
  });

  test("a directory without a manifest cannot be verified", async () => {
    const dir = freshDir();
    mkdirSync(dir);
    const cli = await run(["vendor", "--verify", dir]);
    assert.equal(cli.code, 1);
    assert.match(cli.err, /MANIFEST\.sha256 does not exist; is .* a directory made by mcp-bridge vendor\? \[VENDOR_MANIFEST\]$/);
  });

  test("vendoring over an unchanged copy replaces it: files the new subset lacks are gone", async () => {
    const dir = await vendored("manager");
    const r = await run(["vendor", dir, "--subset", "client"]);
    assert.equal(r.code, 0, r.err);
    const client = await vendored("client");
    assert.deepEqual(filesBelow(dir), filesBelow(client));
    assert.equal(readFileSync(join(dir, "MANIFEST.sha256"), "utf8"), readFileSync(join(client, "MANIFEST.sha256"), "utf8"));
  });

  test("vendoring over an edited copy or over other files refuses and changes nothing", async () => {
    const edited = await vendored("client");
    appendFileSync(join(edited, "src/mcp/client.ts"), "// local patch\n");
    const before = filesBelow(edited);
    const refused = await run(["vendor", edited, "--subset", "client"]);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /is an earlier copy with local differences, which an update would lose:\nchanged {2}src\/mcp\/client\.ts\n/);
    assert.deepEqual(filesBelow(edited), before);
    assert.match(readFileSync(join(edited, "src/mcp/client.ts"), "utf8"), /\/\/ local patch\n$/);

    const other = freshDir();
    mkdirSync(other);
    writeFileSync(join(other, "mine.txt"), "keep me");
    const notCopy = await run(["vendor", other]);
    assert.equal(notCopy.code, 2);
    assert.match(notCopy.err, /is not empty and has no MANIFEST\.sha256: vendor writes only into an empty directory or over a copy it made \[VENDOR_TARGET\]$/);
    assert.deepEqual(filesBelow(other), ["mine.txt"]);
  });

  test("usage errors: no directory, an unknown subset, --subset with --verify", async () => {
    for (const argv of [["vendor"], ["vendor", freshDir(), "--subset", "tools"], ["vendor", "--verify", freshDir(), "--subset", "client"], ["vendor", "a", "b"]]) {
      const r = await run(argv);
      assert.equal(r.code, 2, argv.join(" "));
      assert.match(r.err, /^mcp-bridge: /);
    }
    assert.match((await run(["vendor", freshDir(), "--subset", "tools"])).err, /--subset must be one of client, server, manager, acp, all, got "tools"/);
  });

  test("--help lists the vendor command", async () => {
    assert.match((await run(["--help"])).out, /\n {2}vendor <dir> \[--subset client\|server\|manager\|acp\|all\] \| vendor --verify <dir>\n/);
  });
});
