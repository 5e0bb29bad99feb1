/**
 * The fenced code blocks of a Markdown file, what their info strings ask of the README test,
 * and the type check of the TypeScript ones (see the rules at the top of test/readme.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** One fenced block: its info string split into language and attributes, its text, and where it starts. */
export interface CodeBlock {
  lang: string;
  attrs: string[];
  text: string;
  /** 1-based line of the first line of code (the line after the opening fence). */
  line: number;
}

/** How the README test treats a TypeScript block; from the word after `ts` in its info string. */
export type TsKind = "run" | "stdio-server" | "acp-agent" | "illustrative";

const TS_KINDS: Record<string, TsKind> = { "": "run", "stdio-server": "stdio-server", "acp-agent": "acp-agent", illustrative: "illustrative" };

export interface TsBlock extends CodeBlock {
  kind: TsKind;
  /** `run` blocks: the text of a ```text output block that directly follows, if any. */
  expectedOutput?: string;
}

/** Every fenced block (```` ``` ```` fences at the start of a line), in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (open === null) continue;
    const [lang = "", ...attrs] = open[1]!.trim().split(/\s+/).filter((w) => w !== "");
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== "```") end++;
    if (end === lines.length) throw new Error(`line ${i + 1}: code block is never closed`);
    blocks.push({ lang, attrs, text: lines.slice(start, end).join("\n") + "\n", line: start + 1 });
    i = end;
  }
  return blocks;
}

/**
 * The TypeScript blocks with their kinds. An unknown attribute is an error, so that a typo
 * (```ts ilustrative) cannot quietly change what is checked.
 */
export function tsBlocks(markdown: string): TsBlock[] {
  const all = codeBlocks(markdown);
  const lines = markdown.split("\n");
  const out: TsBlock[] = [];
  all.forEach((block, i) => {
    if (block.lang !== "ts" && block.lang !== "typescript") return;
    const kind = TS_KINDS[block.attrs.join(" ")];
    if (kind === undefined) throw new Error(`README.md:${block.line - 1}: unknown info string "${block.lang} ${block.attrs.join(" ")}"`);
    const next = all[i + 1];
    const closeLine = block.line + block.text.split("\n").length - 1; // 1-based line of the closing fence
    const between = next === undefined ? [] : lines.slice(closeLine, next.line - 2);
    const follows = next !== undefined && between.every((l) => l.trim() === "");
    const isOutput = follows && next.lang === "text" && next.attrs.join(" ") === "output";
    if (isOutput && kind !== "run") throw new Error(`README.md:${next.line - 1}: only a runnable block can have an output block`);
    out.push(isOutput ? { ...block, kind, expectedOutput: next.text } : { ...block, kind });
  });
  return out;
}

/**
 * `mcp-bridge` and `mcp-bridge/<subpath>` specifiers replaced by the source module that the
 * package's `exports` map the subpath to (`./dist/src/mcp/client.js` -> `<root>/src/mcp/client.ts`).
 * A subpath the map does not export is left as written, so it fails to resolve.
 */
export function toSourceImports(code: string, root: string, exportsMap: Record<string, { default: string }>): string {
  return code.replace(/(["'])mcp-bridge(\/[^"']*)?\1/g, (whole, quote: string, sub: string | undefined) => {
    const target = exportsMap[sub === undefined ? "." : `.${sub}`];
    if (target === undefined) return whole;
    const source = join(root, target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"));
    return `${quote}${source}${quote}`;
  });
}

/** A README block written out as a module: where it is, and the README line its first line came from. */
export interface BlockFile {
  path: string;
  line: number;
}

/** Writes each block as `<dir>/readme-<line>.mts` (ESM, so top-level await works). */
export function writeBlockFiles(blocks: readonly CodeBlock[], dir: string, rewrite: (code: string) => string): BlockFile[] {
  mkdirSync(dir, { recursive: true });
  return blocks.map((block) => {
    const path = join(dir, `readme-${block.line}.mts`);
    writeFileSync(path, rewrite(block.text));
    return { path, line: block.line };
  });
}

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
