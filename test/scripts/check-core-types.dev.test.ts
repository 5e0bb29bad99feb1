// Runs the TypeScript compiler (a dev package), hence .dev.test.ts.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const tempDirs: string[] = [];

after(async () => {
  for (const d of tempDirs) await rm(d, { recursive: true, force: true });
});

async function prepend(root: string, path: string, line: string): Promise<void> {
  const file = join(root, path);
  await writeFile(file, `${line}\n${await readFile(file, "utf8")}`);
}

describe("tsconfig.core.json", () => {
  it("fails to compile Node in the core, and in what the core imports from util/", async () => {
    const root = await mkdtemp(join(tmpdir(), "check-core-types-"));
    tempDirs.push(root);
    for (const path of ["package.json", "src", "tsconfig.json", "tsconfig.core.json"]) {
      await cp(join(repoRoot, path), join(root, path), { recursive: true });
    }
    // Exported, so that noUnusedLocals has nothing to say about it: only the Node import fails.
    await prepend(root, "src/mcp/versions.ts", 'export { readFile } from "node:fs/promises";');
    // util/ is not a core folder: only the mcp/client.ts import brings emitter.ts in.
    await prepend(root, "src/util/emitter.ts", "export const pid = process.pid;");
    const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.core.json")], { cwd: root, encoding: "utf8", timeout: 120_000 });
    assert.equal(r.error, undefined);
    const errors = r.stdout.split("\n").filter((l) => l.includes("error TS")).map((l) => l.replace(/: error (TS\d+).*/, " $1"));
    assert.deepEqual({ status: r.status, errors }, {
      status: 2,
      errors: ["src/mcp/versions.ts(1,26) TS2307", "src/util/emitter.ts(1,20) TS2591"],
    });
  });
});
