/**
 * README.md's examples work as written. The rules, by the info string of a fenced block:
 *
 * - ```ts (or typescript): type-checked, then run to completion as a user would, from the
 *   repository root with this Node (`--import tsx` where it cannot strip types). It must exit
 *   0 with nothing on stderr, and no process it started may outlive it. If a ```text output block follows it (blank lines
 *   between allowed), its stdout must equal that block.
 * - ```ts stdio-server: type-checked, then started as an MCP server on stdio: `initialize`,
 *   `tools/list` (at least one tool); then its stdin ends and it must exit 0 by itself, leaving
 *   no process.
 * - ```ts acp-agent: type-checked, then started as an ACP agent on stdio: `initialize`,
 *   `session/new` with the echo fixture as an editor-sent server, `session/prompt`; then its
 *   stdin ends and it must exit 0 by itself, leaving no process.
 * - ```ts illustrative: type-checked only. For a block that needs what a clone does not have
 *   (a network service, a person at a terminal); say in the text around it why.
 * Any other attribute on a ts block fails the test, so a typo cannot quietly skip a check.
 * (The ```json blocks and the links are checked by test/readme.test.ts.)
 *
 * A dev test (docs/decisions.md 74): the type check needs the TypeScript compiler, and
 * the examples start the fixture servers as the README shows, with `--import tsx`.
 *
 * `mcp-bridge/<subpath>` imports are pointed at the source module that package.json's
 * `exports` maps the subpath to (dist/src/x.js, or a bundle dist/x.js, -> src/x.ts), so the
 * blocks are checked against the code in this checkout without a build, and a subpath the
 * package does not export fails.
 * (That the built package resolves the same subpaths is test/package-exports.test.ts's job.)
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { nodeModuleCommand } from "../src/util/node-command.ts";
import { toSourceImports, tsBlocks, writeBlockFiles, type TsBlock } from "./readme/blocks.ts";
import { ExampleProcess, leftovers } from "./readme/processes.ts";
import { typeCheck } from "./readme/type-check.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, { default: string }> };
const blocks = tsBlocks(README);
const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-readme-blocks-"));
const files = writeBlockFiles(blocks, dir, (code) => toSourceImports(code, ROOT, pkg.exports));
const fileOf = new Map(blocks.map((b, i) => [b, files[i]!.path]));
after(() => rmSync(dir, { recursive: true, force: true }));

const ECHO = join(ROOT, "fixtures", "servers", "echo.ts");

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

describe("README.md examples", () => {
  test("every TypeScript block type-checks", () => {
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
        const echo = { name: "echo", ...nodeModuleCommand(ECHO), env: [] };
        const { sessionId } = (await run.request("session/new", { cwd: ROOT, mcpServers: [echo] })) as { sessionId: string };
        const answer = await run.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] });
        assert.deepEqual(answer, { stopReason: "end_turn" });
        return run.endInput();
      })();
      await finish(run, exit);
    });
  }
});
