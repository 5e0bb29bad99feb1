/**
 * The fenced code blocks of a Markdown file and what their info strings ask of the README tests
 * (see the rules at the top of test/readme-examples.dev.test.ts). Needs no dev dependency: the
 * offline suite reads the blocks too (test/readme.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

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
 * package's `exports` map the subpath to (`./dist/src/mcp/client.js` -> `<root>/src/mcp/client.ts`;
 * a bundle, `./dist/client-stdio.js`, -> its entry `<root>/src/client-stdio.ts`). A subpath the
 * map does not export is left as written, so it fails to resolve.
 */
export function toSourceImports(code: string, root: string, exportsMap: Record<string, { default: string }>): string {
  return code.replace(/(["'])mcp-bridge(\/[^"']*)?\1/g, (whole, quote: string, sub: string | undefined) => {
    const target = exportsMap[sub === undefined ? "." : `.${sub}`];
    if (target === undefined) return whole;
    const source = join(root, target.default.replace(/^\.\/dist\/(src\/)?/, "src/").replace(/\.js$/, ".ts"));
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
