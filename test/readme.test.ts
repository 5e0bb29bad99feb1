/**
 * README.md and the other Markdown files, checked with no dev dependency installed (the
 * TypeScript blocks are type-checked and run by test/readme-examples.dev.test.ts, whose header
 * gives the rules of their info strings):
 *
 * - ```json: a config file; `parseJsonText` + `parseMcpJsonFile` must find no problem at all.
 *   ```json acp: an ACP `mcpServers` array; `parseAcpMcpServers` must find no problem.
 *   ```json file=<path>: the content of that repository file, exactly.
 * - Every TypeScript block has a known info string, and each runnable kind is shown.
 * - Links and repository paths in every Markdown file point at files a clone has.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAcpMcpServers, parseJsonText, parseMcpJsonFile } from "../src/config/parse.ts";
import { codeBlocks, tsBlocks } from "./readme/blocks.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

describe("README.md", () => {
  test("has TypeScript blocks of every runnable kind, each with a known info string", () => {
    const kinds = new Set(tsBlocks(README).map((b) => b.kind));
    for (const kind of ["run", "stdio-server", "acp-agent"] as const) assert.ok(kinds.has(kind), `no \`\`\`ts ${kind} block`);
  });

  test("every json block is a config the parsers read without a problem, or the file it names", () => {
    const jsonBlocks = codeBlocks(README).filter((b) => b.lang === "json");
    assert.ok(jsonBlocks.length >= 4, "the config formats are shown");
    for (const block of jsonBlocks) {
      const at = `README.md:${block.line}`;
      const file = block.attrs.find((a) => a.startsWith("file="))?.slice("file=".length);
      if (file !== undefined) {
        assert.equal(block.text, readFileSync(join(ROOT, file), "utf8"), `${at} differs from ${file}`);
        continue;
      }
      const decoded = parseJsonText(block.text, at);
      assert.ok(decoded.ok, `${at}: ${decoded.ok ? "" : decoded.problem.message}`);
      const parsed = block.attrs.includes("acp") ? parseAcpMcpServers(decoded.value) : parseMcpJsonFile(decoded.value, at);
      assert.deepEqual(parsed.problems, [], at);
      assert.ok(parsed.servers.length > 0, `${at} holds no server`);
    }
  });
});

/** Every Markdown file of the repository (not dependencies or build output). */
function markdownFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (["node_modules", ".git", "dist"].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith(".md")) out.push(path);
  }
  return out;
}

describe("the documentation", () => {
  const docs = markdownFiles();

  test("points only at files a clone has", () => {
    assert.ok(docs.some((f) => f.endsWith("SECURITY.md")) && docs.some((f) => f.endsWith("CHANGELOG.md")));
    const missing: string[] = [];
    for (const file of docs) {
      const text = readFileSync(file, "utf8");
      const where = relative(ROOT, file);
      // Relative Markdown links, and `src/...`-style paths in code spans (placeholders and globs aside).
      const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
      for (const target of links) if (!existsSync(join(dirname(file), target))) missing.push(`${where}: link ${target}`);
      const paths = [...text.matchAll(/`((?:src|test|fixtures|scripts|docs)\/[^`\s]*)`/g)].map((m) => m[1]!);
      for (const path of paths.filter((p) => !/[<>*{}]/.test(p))) {
        if (!existsSync(join(ROOT, path))) missing.push(`${where}: path ${path}`);
      }
      // Notes and trackers that live outside the repository.
      const outside = [/\.\.\/shared|\/work\/|DECISIONS\.md|ARCHITECTURE\.md|[a-z]+-digest\.md/g, /\bissue \d+|\bseed\b/gi];
      for (const m of outside.flatMap((re) => [...text.matchAll(re)])) missing.push(`${where}: mentions ${m[0]}`);
    }
    assert.deepEqual(missing, []);
  });
});
