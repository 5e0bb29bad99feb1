/**
 * README.md's examples work as written. The rules, by the info string of a fenced block:
 *
 * - ```ts (or typescript): type-checked, then run to completion as a user would, from the
 *   repository root (`node --import tsx`). It must exit 0 with nothing on stderr, and no
 *   process it started may outlive it. If a ```text output block follows it (blank lines
 *   between allowed), its stdout must equal that block.
 * - ```ts stdio-server: type-checked, then started as an MCP server on stdio: `initialize`,
 *   `tools/list` (at least one tool); then its stdin ends and it must exit 0 by itself, leaving
 *   no process.
 * - ```ts acp-agent: type-checked, then started as an ACP agent on stdio: `initialize`,
 *   `session/new` with the echo fixture as an editor-sent server, `session/prompt`; then its
 *   stdin ends and it must exit 0 by itself, leaving no process.
 * - ```ts illustrative: type-checked only. For a block that needs what a clone does not have
 *   (a network service, a person at a terminal); say in the text around it why.
 * - ```json: a config file; `parseJsonText` + `parseMcpJsonFile` must find no problem at all.
 *   ```json acp: an ACP `mcpServers` array; `parseAcpMcpServers` must find no problem.
 *   ```json file=<path>: the content of that repository file, exactly.
 * Any other attribute on a ts block fails the test, so a typo cannot quietly skip a check.
 *
 * `mcp-bridge/<subpath>` imports are pointed at the source module that package.json's
 * `exports` maps the subpath to (dist/src/x.js -> src/x.ts), so the blocks are checked against
 * the code in this checkout without a build, and a subpath the package does not export fails.
 * (That the built package resolves the same subpaths is test/package-exports.test.ts's job.)
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { parseAcpMcpServers, parseJsonText, parseMcpJsonFile } from "../src/config/parse.ts";
import { codeBlocks, toSourceImports, tsBlocks, typeCheck, writeBlockFiles, type TsBlock } from "./readme/blocks.ts";
import { ExampleProcess, leftovers } from "./readme/processes.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { default: string }> };
const blocks = tsBlocks(README);
const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-readme-blocks-"));
const files = writeBlockFiles(blocks, dir, (code) => toSourceImports(code, ROOT, pkg.exports));
const fileOf = new Map(blocks.map((b, i) => [b, files[i]!.path]));
after(() => rmSync(dir, { recursive: true, force: true }));

const ECHO = join(ROOT, "fixtures", "servers", "echo.ts");
const TSX = import.meta.resolve("tsx");

/** Starts a block's process; the test that calls it must await `finish`. */
function start(block: TsBlock): ExampleProcess {
  return new ExampleProcess(fileOf.get(block)!, ROOT);
}

/** Its exit as a diffable value, then the check that nothing of the run is left. */
async function finish(run: ExampleProcess, exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>) {
  try {
    assert.deepEqual(await exit, { code: 0, signal: null, stderr: "" });
  } finally {
    run.kill();
    assert.deepEqual(await leftovers(run), [], "processes the example left running");
    rmSync(run.marker, { recursive: true, force: true });
  }
}

describe("README.md", () => {
  test("has blocks of every runnable kind, and every TypeScript block type-checks", () => {
    const kinds = new Set(blocks.map((b) => b.kind));
    for (const kind of ["run", "stdio-server", "acp-agent"] as const) assert.ok(kinds.has(kind), `no \`\`\`ts ${kind} block`);
    assert.deepEqual(typeCheck(files, ROOT), []);
  });

  for (const block of blocks.filter((b) => b.kind === "run")) {
    test(`the example at line ${block.line} runs, prints what the README shows, and leaves no process`, async () => {
      const run = start(block);
      await finish(run, run.exited);
      if (block.expectedOutput !== undefined) assert.equal(run.stdout, block.expectedOutput);
    });
  }

  for (const block of blocks.filter((b) => b.kind === "stdio-server")) {
    test(`the MCP server at line ${block.line} answers initialize and tools/list, and exits when stdin ends`, async () => {
      const run = start(block);
      const exit = (async () => {
        const init = (await run.request("initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "readme-test", version: "0.0.0" },
        })) as { protocolVersion: string };
        assert.equal(init.protocolVersion, "2025-11-25");
        run.notify("notifications/initialized");
        const { tools } = (await run.request("tools/list", {})) as { tools: { name: string }[] };
        assert.ok(tools.length > 0, "the server lists no tool");
        return run.endInput();
      })();
      await finish(run, exit);
    });
  }

  for (const block of blocks.filter((b) => b.kind === "acp-agent")) {
    test(`the ACP agent at line ${block.line} opens a session with a server, answers a prompt, and exits when stdin ends`, async () => {
      const run = start(block);
      const exit = (async () => {
        const init = (await run.request("initialize", { protocolVersion: 1, clientCapabilities: {} })) as { protocolVersion: number };
        assert.equal(init.protocolVersion, 1);
        const echo = { name: "echo", command: process.execPath, args: ["--import", TSX, ECHO], env: [] };
        const { sessionId } = (await run.request("session/new", { cwd: ROOT, mcpServers: [echo] })) as { sessionId: string };
        const answer = await run.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
        assert.deepEqual(answer, { stopReason: "end_turn" });
        return run.endInput();
      })();
      await finish(run, exit);
    });
  }

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
