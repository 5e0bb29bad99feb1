/**
 * The specifier scanner that `mcp-bridge vendor` follows: every form of import the source uses,
 * and none of the look-alikes inside comments, strings, templates and regular expressions.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { moduleReferences, NonLiteralImportError } from "../../src/cli/vendor-imports.ts";
import { ROOT } from "../e2e/helpers.ts";

const specifiers = (source: string) => moduleReferences(source).map((r) => r.specifier);

describe("moduleReferences", () => {
  test("finds static, type-only, re-export, side-effect, dynamic and typeof imports", () => {
    const source = [
      'import { a, type B } from "./a.ts";',
      'import type { C } from "./c.ts";',
      'import d, * as e from "./d.ts";',
      "import {",
      "  f,",
      "  g as h,",
      '} from "./f.ts";',
      'import "./side.ts";',
      'export { x } from "./x.ts";',
      'export type { Y } from "./y.ts";',
      'export * from "./star.ts";',
      'export type * from "./types.ts";',
      'export * as ns from "./ns.ts";',
      'const m = await import("./lazy.ts");',
      'type S = typeof import("../schema/validate.ts");',
      "const t = await import(`./template.ts`);",
      'import { spawn } from "node:child_process";',
    ].join("\n");
    assert.deepEqual(specifiers(source), [
      "./a.ts", "./c.ts", "./d.ts", "./f.ts", "./side.ts", "./x.ts", "./y.ts", "./star.ts",
      "./types.ts", "./ns.ts", "./lazy.ts", "../schema/validate.ts", "./template.ts", "node:child_process",
    ]);
  });

  test("gives the line of each specifier", () => {
    assert.deepEqual(moduleReferences('\n\nimport {\n  a,\n} from "./a.ts";\n'), [{ specifier: "./a.ts", line: 5 }]);
  });

  test("ignores imports inside comments, strings, templates and regular expressions", () => {
    const source = [
      '// import { a } from "./line-comment.ts";',
      '/* import "./block-comment.ts";',
      '   export * from "./block-comment-2.ts"; */',
      'const s = \'import { b } from "./single-quoted.ts"\';',
      "const d = \"import('./double-quoted.ts')\";",
      'const t = `import "./template-text.ts" ${"x"} import("./after-substitution.ts")`;',
      'const r = /import "(.\\/regex.ts)"/g;',
      'const q = [/["\']/, "import(\'./after-regex-with-quotes.ts\')"];',
      'const real = await import("./real.ts");',
    ].join("\n");
    assert.deepEqual(specifiers(source), ["./real.ts"]);
  });

  test("code inside a template's substitution is still code", () => {
    assert.deepEqual(specifiers('const t = `a ${await import("./inside.ts")} b ${`nested ${1}`}`;\nimport "./after.ts";'), ["./inside.ts", "./after.ts"]);
  });

  test("declarations, local export lists, import.meta and .import() are no imports", () => {
    const source = [
      "export const from = 1;",
      "export function f(from: string) { return from; }",
      "export type T = { from: string };",
      "export { f as g };",
      "export default from;",
      "const url = import.meta.url;",
      "loader.import(name);",
      'import x from "./only.ts";',
    ].join("\n");
    assert.deepEqual(specifiers(source), ["./only.ts"]);
  });

  test("a division after a value is not taken for a regular expression", () => {
    assert.deepEqual(specifiers('const half = total / 2; const q = (a) / b / "c";\nimport "./after-division.ts";'), ["./after-division.ts"]);
  });

  test("import() of a computed specifier is an error naming its line", () => {
    assert.throws(() => moduleReferences('\nconst m = await import(name);'), { name: "NonLiteralImportError", line: 2 });
    assert.throws(() => moduleReferences("await import(`./${name}.ts`);"), NonLiteralImportError);
  });

  test("every relative import of src/ is found (the form each file uses is one of the above)", () => {
    // The forms the scanner knows, counted as plainly as possible: a line that names a
    // relative .ts path in quotes after `from`, `import` or `import(`. The scanner must find
    // each of them; comments in src/ hold none.
    const plain = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+\.ts)["']/g;
    for (const file of sourceFiles(join(ROOT, "src"))) {
      const text = readFileSync(file, "utf8");
      const expected = [...text.matchAll(plain)].map((m) => m[1]);
      const found = specifiers(text).filter((s) => s.startsWith("."));
      assert.deepEqual(found, expected, file);
    }
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}
