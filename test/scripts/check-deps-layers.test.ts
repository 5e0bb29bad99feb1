import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkProject } from "../../scripts/check-deps.ts";
import { LAYERS, layerProblem } from "../../scripts/check-layers.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const tempDirs: string[] = [];

after(async () => {
  for (const d of tempDirs) await rm(d, { recursive: true, force: true });
});

/** A temp copy of what check-deps reads: package.json, src/ and the two scripts. */
async function copyOfRepository(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "check-layers-"));
  tempDirs.push(root);
  for (const path of ["package.json", "src", "scripts/check-deps.ts", "scripts/check-layers.ts"]) {
    await cp(join(repoRoot, path), join(root, path), { recursive: true });
  }
  return root;
}

/** Puts `line` first in `path` of the copy (above its doc comment) and returns its line number. */
async function plant(root: string, path: string, line: string): Promise<number> {
  const file = join(root, path);
  const lines = (await readFile(file, "utf8")).split("\n");
  await writeFile(file, [line, ...lines].join("\n"));
  return 1;
}

describe("layerProblem", () => {
  it("refuses each import the layer order forbids, naming both folders and what is allowed", () => {
    assert.deepEqual(
      [
        layerProblem("jsonrpc/peer.ts", "transport/transport.ts"),
        layerProblem("security/policy.ts", "bridge/glob.ts"),
        layerProblem("mcp/client.ts", "transport/stdio.ts"),
        layerProblem("util/glob.ts", "jsonrpc/errors.ts"),
      ],
      [
        'jsonrpc/ must not import transport/ (layer order: jsonrpc/ may import util/; see README "Layout")',
        'security/ must not import bridge/ (layer order: security/ may import config/, jsonrpc/, transport/, util/; see README "Layout")',
        'mcp/ must not import transport/ (layer order: mcp/ may import jsonrpc/, schema/, util/; see README "Layout")',
        'util/ must not import jsonrpc/ (layer order: util/ may import nothing else; see README "Layout")',
      ],
    );
  });

  it("allows imports down the order, within a folder, and anything from the top of src/", () => {
    assert.deepEqual(
      [
        layerProblem("transport/http-server.ts", "mcp/versions.ts"),
        layerProblem("security/command.ts", "transport/spawn-env.ts"),
        layerProblem("jsonrpc/peer.ts", "jsonrpc/transport.ts"),
        layerProblem("index.ts", "cli/main.ts"),
        layerProblem("client-stdio.ts", "transport/stdio-client.ts"),
      ],
      [undefined, undefined, undefined, undefined, undefined],
    );
  });

  it("refuses a folder that has no place in the order, and a layer importing the top of src/", () => {
    assert.deepEqual(
      [layerProblem("plugins/x.ts", "jsonrpc/errors.ts"), layerProblem("mcp/x.ts", "extras/y.ts"), layerProblem("cli/main.ts", "index.ts")],
      [
        'plugins/ has no place in the layer order (add it to LAYERS in scripts/check-layers.ts and to README "Layout")',
        'extras/ has no place in the layer order (add it to LAYERS in scripts/check-layers.ts and to README "Layout")',
        'cli/ must not import "index.ts" from the top of src/ (it re-exports the layers)',
      ],
    );
  });

  it("is the table README's Layout section writes down", async () => {
    const readme = await readFile(join(repoRoot, "README.md"), "utf8");
    const layout = readme.slice(readme.indexOf("\n## Layout"));
    const blocks = [...layout.matchAll(/```\n([\s\S]*?)```/g)].map((m) => m[1]!);
    const table = blocks.find((b) => b.startsWith("util/"));
    assert.ok(table !== undefined, 'README "Layout" has no block starting with util/');
    const written: Record<string, string[]> = {};
    for (const row of table.trim().split("\n")) {
      const [folder, ...allowed] = row.trim().split(/\s+/);
      written[folder!.replace(/\/$/, "")] = allowed[0] === "nothing" ? [] : allowed.map((a) => a.replace(/\/$/, ""));
    }
    assert.deepEqual(written, LAYERS);
  });
});

describe("check-deps keeps the layer order of the real source", () => {
  it("reports an import against the order planted in a copy of src/, at its line", async () => {
    const root = await copyOfRepository();
    const typeLine = await plant(root, "src/jsonrpc/peer.ts", 'import type { StdioClientTransport } from "../transport/stdio-client.ts";');
    const valueLine = await plant(root, "src/security/policy.ts", 'export { toolNameFor } from "../bridge/naming.ts";');
    assert.deepEqual(await checkProject(root), [
      `src/jsonrpc/peer.ts:${typeLine}: jsonrpc/ must not import transport/ (layer order: jsonrpc/ may import util/; see README "Layout")`,
      `src/security/policy.ts:${valueLine}: security/ must not import bridge/ (layer order: security/ may import config/, jsonrpc/, transport/, util/; see README "Layout")`,
    ]);
  });

  it("fails as a program (what npm run check runs) on that copy, and passes the copy untouched", async () => {
    const root = await copyOfRepository();
    const run = () => {
      const { command, args } = nodeModuleCommand(join(root, "scripts", "check-deps.ts"));
      const r = spawnSync(command, args, { cwd: root, encoding: "utf8", timeout: 60_000 });
      assert.equal(r.error, undefined);
      return { status: r.status, stderr: r.stderr.split("\n").filter((l) => l !== "") };
    };
    assert.deepEqual(run(), { status: 0, stderr: [] });
    const line = await plant(root, "src/mcp/server.ts", 'import { StdioServerTransport } from "../transport/stdio-server.ts";');
    assert.deepEqual(run(), {
      status: 1,
      stderr: [
        `src/mcp/server.ts:${line}: mcp/ must not import transport/ (layer order: mcp/ may import jsonrpc/, schema/, util/; see README "Layout")`,
        "check-deps: 1 problem(s)",
      ],
    });
  });
});
