/**
 * Source comments cite only what a clone has: `docs/decisions.md N` (an entry that exists),
 * never shared notes (`DECISIONS.md 8`), issues (`issue 4`) or the design seed.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function sources(dir: string, deep: boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (deep ? sources(join(dir, e.name), deep) : []) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const files = [...sources(join(root, "src"), true), ...sources(join(root, "scripts"), false)];

/** `path:line: text` of every line that matches `pattern`. */
function lines(pattern: RegExp): string[] {
  const out: string[] = [];
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (pattern.test(line)) out.push(`${relative(root, file).split("\\").join("/")}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

test("src/ and scripts/ cite no shared notes, issues or the seed", () => {
  assert.deepEqual(lines(/(?<!docs\/)DECISIONS\.md|\bissues? \d|\bseed\b(?!ed)/i), []);
});

test("every docs/decisions.md citation names an entry the file has", () => {
  const decisions = readFileSync(join(root, "docs", "decisions.md"), "utf8");
  const entries = new Set([...decisions.matchAll(/^(\d+(?:-[a-z]+)?)\. \*\*/gm)].map((m) => m[1]));
  const missing = lines(/docs\/decisions\.md \d/).filter((at) =>
    [...at.matchAll(/docs\/decisions\.md (\d+(?:-[a-z]+)?)/g)].some((m) => !entries.has(m[1])),
  );
  assert.deepEqual(missing, []);
});
