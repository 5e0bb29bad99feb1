/**
 * Strips the types from the repository's TypeScript into a temporary tree of `.js` files, so
 * the benchmark can run our code under plain `node` (as users of the built package do) and
 * see the cost of the `tsx` loader apart from the cost of the library.
 *
 * Uses `typescript.transpileModule` (a devDependency): one file at a time, no type check,
 * relative `.ts` imports rewritten to `.js`, the same per-file view tsx has.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";

async function listTs(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listTs(path)));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/**
 * Transpiles every `.ts` file under `dirs` (relative to `root`) to the same relative path
 * under `outDir`, and marks `outDir` as ESM. Returns how many files it wrote.
 */
export async function transpileTree(root: string, dirs: readonly string[], outDir: string): Promise<number> {
  const ts = (await import("typescript")).default;
  const compilerOptions = {
    module: ts.ModuleKind.ESNext,
    target: ts.ScriptTarget.ES2022,
    rewriteRelativeImportExtensions: true,
  };
  let written = 0;
  for (const dir of dirs) {
    for (const file of await listTs(join(root, dir))) {
      const { outputText } = ts.transpileModule(await readFile(file, "utf8"), { fileName: file, compilerOptions });
      const dest = join(outDir, relative(root, file)).replace(/\.ts$/, ".js");
      await mkdir(dirname(dest), { recursive: true });
      await writeFile(dest, outputText);
      written++;
    }
  }
  await writeFile(join(outDir, "package.json"), '{ "type": "module" }\n');
  return written;
}
