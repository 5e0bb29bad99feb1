/**
 * The type check of README blocks written out as modules, with the TypeScript compiler: a dev
 * dependency, so only the `*.dev.test.ts` files use this module (docs/decisions.md 74).
 */
import { join } from "node:path";
import ts from "typescript";
import type { BlockFile } from "./blocks.ts";

/**
 * Type-checks the block files with the repository's compiler options (strict, NodeNext).
 * Returns one line per diagnostic, located in README.md where it came from a block.
 */
export function typeCheck(files: readonly BlockFile[], root: string): string[] {
  const configPath = join(root, "tsconfig.json");
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    declaration: false,
    // The blocks import absolute .ts paths; nothing is emitted, so nothing needs rewriting.
    rewriteRelativeImportExtensions: false,
    // A block is a fragment to copy: it may name a value only to show where it comes from.
    noUnusedLocals: false,
    noUnusedParameters: false,
    typeRoots: [join(root, "node_modules", "@types")],
  };
  delete options.rootDir;
  delete options.outDir;
  const program = ts.createProgram(
    files.map((f) => f.path),
    options,
  );
  const lineOf = new Map(files.map((f) => [f.path, f.line]));
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
    if (d.file === undefined || d.start === undefined) return `TS${d.code}: ${message}`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const first = lineOf.get(d.file.fileName);
    const where = first === undefined ? `${d.file.fileName}:${line + 1}` : `README.md:${first + line}`;
    return `${where}:${character + 1}: TS${d.code}: ${message}`;
  });
}
