/**
 * The package's `exports` map and `bin`: every subpath points at a source module that exists
 * (its `types` beside its `default`), the narrow stdio subpaths really are narrow, and the CLI
 * loads a command only when it runs, since a process that loads modules it does not use
 * (the client transport in a server, the whole CLI in the shim) starts measurably slower.
 * The run-time import graph is read from the source's static imports, leaving out the
 * type-only statements (`import type`, `export type ... from`) that type stripping and `tsc`
 * erase; an `import { type A } from` stays, as it does in both (verbatimModuleSyntax). Dynamic
 * `import()` loads lazily and costs no start-up. No compiler is needed (the offline suite runs
 * without dev dependencies, docs/decisions.md 74).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  exports: Record<string, { types: string; default: string }>;
  bin: Record<string, string>;
};

/**
 * `./dist/src/a/b.js` -> `src/a/b.ts`; a bundle `./dist/a/b.js` (scripts/build-bundles.ts) ->
 * its entry `src/a/b.ts`, whose run-time imports are what the bundle holds.
 */
function sourceOf(distPath: string): string {
  assert.match(distPath, /^(\.\/)?dist\/.+\.js$/, `${distPath} is not under ./dist/`);
  return distPath.replace(/^(\.\/)?dist\/(src\/)?/, "src/").replace(/\.js$/, ".ts");
}

/** Where tsc puts the declarations of a subpath's source: `src/a/b.ts` -> `./dist/src/a/b.d.ts`. */
function typesOf(src: string): string {
  return `./dist/${src.replace(/\.ts$/, ".d.ts")}`;
}

const importsOf = new Map<string, string[]>();

/**
 * Static run-time imports of one source file, as repository-relative `.ts` paths or `node:`
 * names; each file is read once, however many closures walk through it. A statement starts a
 * line (doc comments start theirs with `*`), and one starting `import type` or `export type`
 * is erased at run time.
 */
function runtimeImports(file: string): string[] {
  const known = importsOf.get(file);
  if (known !== undefined) return known;
  const source = readFileSync(join(ROOT, file), "utf8");
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^;"']*?\sfrom\s*)?["']([^"']+)["']/gm)) {
    const spec = m[1]!;
    out.push(spec.startsWith(".") ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : spec);
  }
  importsOf.set(file, out);
  return out;
}

/** Every module (and `node:` built-in) `entry` loads before its code runs. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    if (!file.startsWith("node:")) for (const dep of runtimeImports(file)) visit(dep);
  };
  visit(entry);
  return seen;
}

test("every subpath maps to an existing source module, types beside code", () => {
  assert.ok(Object.keys(pkg.exports).length >= 10);
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const src = sourceOf(target.default);
    assert.ok(existsSync(join(ROOT, src)), `${subpath}: ${src} does not exist`);
    assert.equal(target.types, typesOf(src), `${subpath}: types and code differ`);
  }
});

test("the stdio server subpath loads no client transport, no child_process and no HTTP", () => {
  const loaded = closure(sourceOf(pkg.exports["./transport/stdio-server"]!.default));
  assert.ok(loaded.has("src/transport/stdio-server.ts"));
  assert.ok(loaded.has("src/jsonrpc/ndjson.ts"), "the graph walk found the framing module");
  for (const unwanted of ["src/transport/stdio-client.ts", "node:child_process", "src/transport/http.ts", "src/mcp/client.ts"]) {
    assert.ok(!loaded.has(unwanted), `./transport/stdio-server loads ${unwanted}`);
  }
});

test("the stdio client subpath loads no server transport", () => {
  const loaded = closure(sourceOf(pkg.exports["./transport/stdio-client"]!.default));
  assert.ok(loaded.has("src/transport/stdio-client.ts"));
  assert.ok(!loaded.has("src/transport/stdio-server.ts"), "./transport/stdio-client loads the server transport");
  assert.ok(!loaded.has("src/mcp/server.ts"));
});

test("the bundled stdio client subpath holds the client side only, and the schema validator is not in it", () => {
  const loaded = closure(sourceOf(pkg.exports["./client/stdio"]!.default));
  for (const wanted of ["src/mcp/client.ts", "src/transport/stdio-client.ts", "src/jsonrpc/errors.ts"]) assert.ok(loaded.has(wanted), wanted);
  for (const unwanted of ["src/transport/stdio-server.ts", "src/mcp/server.ts", "node:http", "src/transport/http-client.ts", "src/schema/validate.ts"]) {
    assert.ok(!loaded.has(unwanted), `./client/stdio loads ${unwanted}`);
  }
});

test("a server written with ./server and ./transport/stdio-server loads a small part of the library", () => {
  const server = closure(sourceOf(pkg.exports["./server"]!.default));
  const transport = closure(sourceOf(pkg.exports["./transport/stdio-server"]!.default));
  const both = new Set([...server, ...transport].filter((m) => m.startsWith("src/")));
  const everything = [...closure(sourceOf(pkg.exports["."]!.default))].filter((m) => m.startsWith("src/"));
  assert.ok(!both.has("src/mcp/client.ts"), "./server loads the client");
  assert.ok(!both.has("src/schema/validate.ts"), "./server loads the schema validator at start (it is loaded on the first call)");
  // The root entry re-exports everything; the two narrow subpaths must stay a fraction of it.
  assert.ok(both.size * 4 < everything.length, `${both.size} modules of ${everything.length}`);
});

test("the CLI entry loads no command before it runs (the shim is started per session)", () => {
  const main = sourceOf(`./${pkg.bin["mcp-bridge"]!}`);
  const loaded = [...closure(main)].filter((m) => m.startsWith("src/"));
  for (const command of ["src/cli/demo.ts", "src/cli/inspect.ts", "src/cli/acp-agent.ts", "src/cli/shim.ts", "src/manager/manager.ts"]) {
    assert.ok(!loaded.includes(command), `${main} loads ${command} at start`);
  }
  assert.ok(loaded.length <= 4, `the CLI entry loads ${loaded.join(", ")}`);
  // What `mcp-bridge shim` then adds stays small too.
  const shim = [...closure("src/cli/shim.ts")].filter((m) => m.startsWith("src/"));
  assert.ok(!shim.includes("src/manager/manager.ts") && !shim.includes("src/acp/agent.ts"), `shim loads ${shim.join(", ")}`);
});

test("a CLI command against a stdio server loads no HTTP (node:http costs Node 24 its undici too)", () => {
  for (const command of ["src/cli/inspect.ts", "src/cli/call.ts", "src/cli/demo.ts"]) {
    const loaded = closure(command);
    assert.ok(loaded.has("src/transport/stdio-client.ts"), `${command} reaches the stdio transport`);
    for (const unwanted of ["node:http", "node:https", "src/transport/http-client.ts", "src/transport/sse-client.ts"]) {
      assert.ok(!loaded.has(unwanted), `${command} loads ${unwanted} before it knows the target is remote`);
    }
  }
});
