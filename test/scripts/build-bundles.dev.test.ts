/**
 * The bundles of `npm run build` (scripts/build-bundles.ts), built into a scratch directory as
 * the package build does (tsc, then esbuild): each exports exactly what its `.d.ts` declares,
 * the CLI keeps every command out of its start-up, a server on the bundled
 * `mcp-bridge/server/stdio` recognises the error classes of the per-file subpaths, and a client
 * on the bundled `mcp-bridge/client/stdio` makes errors of those classes and loads what it
 * loads lazily from the per-file build.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { resourceNotFoundCode } from "../helpers/era.ts";
import ts from "typescript";
import { McpClient } from "../../src/mcp/client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { APART_COMMANDS, type BundleOutput } from "../../scripts/build-bundles.ts";
import { fixture, reap, ROOT, waitGone } from "../e2e/helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "mcp-bridge-bundles-"));
const dist = join(dir, "dist");

function run(args: string[]): string {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", timeout: 180_000 });
  assert.equal(r.status, 0, `node ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/**
 * The value exports a declaration file declares (classes, functions, constants), followed
 * through `export *` and re-exports; types and interfaces left out.
 */
function declaredValues(dts: string): string[] {
  const program = ts.createProgram([dts], { noEmit: true, skipLibCheck: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: [] });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(dts)!)!;
  const isValue = (symbol: ts.Symbol): boolean => {
    let s = symbol;
    while (s.flags & ts.SymbolFlags.Alias) {
      // `export { type X }` and `export type { X }` are types at run time, whatever X is.
      if (s.declarations?.some((d) => ts.isTypeOnlyImportOrExportDeclaration(d))) return false;
      s = checker.getImmediateAliasedSymbol(s) ?? checker.getAliasedSymbol(s);
      if (s === symbol) break;
    }
    return (s.flags & ts.SymbolFlags.Value) !== 0;
  };
  return checker.getExportsOfModule(moduleSymbol).filter(isValue).map((s) => s.name).sort();
}

let outputs: BundleOutput[] = [];

before(() => {
  run([join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "tsconfig.build.json"), "--outDir", dist]);
  outputs = JSON.parse(run(["--import", "tsx", join(ROOT, "scripts", "build-bundles.ts"), "--outdir", dist, "--json"])) as BundleOutput[];
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe("the bundles of npm run build", { timeout: 300_000 }, () => {
  test("each bundle exports exactly the values its .d.ts declares", async () => {
    for (const [bundle, dts] of [
      ["server-stdio.js", "src/server-stdio.d.ts"],
      ["client-stdio.js", "src/client-stdio.d.ts"],
      ["cli/main.js", "src/cli/main.d.ts"],
    ] as const) {
      const exported = Object.keys((await import(pathToFileURL(join(dist, bundle)).href)) as object).sort();
      assert.deepEqual(exported, declaredValues(join(dist, dts)), bundle);
    }
    // Not vacuous: the server entry declares the classes a stdio server is written with.
    for (const name of ["McpServer", "StdioServerTransport", "RpcError", "ErrorCode"]) assert.ok(declaredValues(join(dist, "src/server-stdio.d.ts")).includes(name), name);
    const client = declaredValues(join(dist, "src/client-stdio.d.ts"));
    for (const name of ["McpClient", "StdioClientTransport", "UrlElicitationRequiredError", "BridgeError", "RpcError", "ErrorCode"]) assert.ok(client.includes(name), name);
  });

  test("the CLI starts with no command loaded; every module is in exactly one chunk of its build, and no command loads a module twice", () => {
    const cli = outputs.filter((o) => o.file.startsWith("cli/"));
    const byFile = new Map(cli.map((o) => [o.file, o]));
    // A file of dist/cli/ as a path of the outputs: the commands built apart are imported as `./x.js`.
    const output = (ref: string): string => (ref.startsWith("./") ? `cli/${ref.slice(2)}` : ref);
    const closure = (files: readonly string[], lazy: boolean, skip: (file: string) => boolean = () => false): Set<string> => {
      const seen = new Set<string>();
      const visit = (file: string): void => {
        if (seen.has(file) || skip(file)) return;
        seen.add(file);
        const o = byFile.get(file);
        assert.ok(o, `${file} is imported but was not written`);
        for (const next of [...o.imports, ...(lazy ? o.lazyImports : [])]) visit(output(next));
      };
      for (const f of files) visit(f);
      return seen;
    };
    const modulesOf = (files: Iterable<string>): string[] => [...files].flatMap((f) => byFile.get(f)!.modules);
    const atStart = modulesOf(closure(["cli/main.js"], false));
    assert.ok(atStart.includes("src/cli/main.ts") && atStart.includes("src/cli/args.ts"), atStart.join(", "));
    for (const command of ["inspect", "call", "demo", "acp-agent", "shim", "serve", "vendor", "auth-command", "read", "prompt", "complete"]) {
      assert.ok(!atStart.includes(`src/cli/${command}.ts`), `${command} is loaded at start`);
    }
    for (const build of ["cli-main", "cli-apart"] as const) {
      const homes = new Map<string, string[]>();
      for (const o of cli.filter((c) => c.build === build)) for (const m of o.modules) homes.set(m, [...(homes.get(m) ?? []), o.file]);
      assert.deepEqual([...homes].filter(([, files]) => files.length > 1), [], `modules in more than one chunk of ${build}`);
    }
    // A command built apart runs beside what main loads (its start, the failure report, the
    // open clients, cli-shared.js): together they must not hold a module twice, or an error
    // class or the open clients would exist twice in one process.
    const mainBuild = cli.filter((o) => o.build === "cli-main");
    const homeOf = (module: string): string => mainBuild.find((o) => o.modules.includes(module))!.file;
    const mainSide = closure(["cli/main.js", homeOf("src/cli/report.ts"), homeOf("src/cli/open-clients.ts"), "cli/cli-shared.js"], false);
    for (const command of APART_COMMANDS) {
      const own = closure([`cli/${command}.js`], true, (file) => mainSide.has(file));
      assert.ok([...own].every((f) => byFile.get(f)!.build === "cli-apart"), `${command} loads a file of the main build beyond cli-shared.js`);
      const all = modulesOf([...mainSide, ...own]);
      assert.deepEqual(all.filter((m, i) => all.indexOf(m) !== i), [], `${command} loads a module twice`);
      assert.ok(all.includes(`src/cli/${command}.ts`), command);
    }
    assert.ok(byFile.has("cli/demo-server.js"), "the demo's servers are built beside the CLI");
  });

  test("inspect loads what spawning a stdio server needs with its chunks: not the client, the peer, the config parsers, the output-schema check or the stateless client; the CLI's chunks are ASCII", () => {
    const cli = outputs.filter((o) => o.build === "cli-main");
    const byModule = new Map(cli.flatMap((o) => o.modules.map((m) => [m, o] as const)));
    const byFile = new Map(cli.map((o) => [o.file, o]));
    const loaded = new Set<string>();
    const visit = (file: string): void => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const next of byFile.get(file)?.imports ?? []) visit(next);
    };
    visit(byModule.get("src/cli/inspect.ts")!.file);
    const modules = [...loaded].flatMap((f) => byFile.get(f)!.modules);
    assert.ok(modules.includes("src/transport/stdio-client.ts") && modules.includes("src/config/secrets.ts"), modules.join(", "));
    // The client, the peer and the rest load while the server boots (docs/decisions.md 151).
    const late = ["src/mcp/client.ts", "src/jsonrpc/peer.ts", "src/mcp/versions.ts", "src/cli/version.ts", "src/mcp/output-check.ts", "src/mcp/client-stateless.ts"];
    for (const absent of [...late, "src/config/parse-common.ts", "src/config/parse.ts", "src/schema/validate.ts"]) {
      assert.ok(!modules.includes(absent), `${absent} is loaded with inspect`);
    }
    // One non-ASCII character makes Node decode a whole chunk as UTF-16 (docs/decisions.md 150).
    const nonAscii = [...loaded].filter((f) => /[^\x00-\x7f]/.test(readFileSync(join(dist, f), "utf8")));
    assert.deepEqual(nonAscii, []);
  });

  test("the early spawn loads the spawn and the argument checks, not the stdio transport or the command's modules; the stateless client loads only after the era probe", () => {
    const cli = outputs.filter((o) => o.build === "cli-main");
    const byModule = new Map(cli.flatMap((o) => o.modules.map((m) => [m, o] as const)));
    const byFile = new Map(cli.map((o) => [o.file, o]));
    /** The modules of the chunk holding `module` and of every chunk it imports statically. */
    const closure = (module: string): string[] => {
      const seen = new Set<string>();
      const visit = (file: string): void => {
        if (seen.has(file)) return;
        seen.add(file);
        for (const next of byFile.get(file)?.imports ?? []) visit(next);
      };
      visit(byModule.get(module)!.file);
      return [...seen].flatMap((f) => byFile.get(f)!.modules);
    };
    const early = closure("src/cli/early-process.ts");
    assert.ok(early.includes("src/transport/stdio-spawn.ts") && early.includes("src/cli/server-command-args.ts"), early.join(", "));
    // The transport that takes the process over loads while the server boots (docs/decisions.md 177).
    const transport = ["src/transport/stdio-client.ts", "src/jsonrpc/ndjson.ts", "src/jsonrpc/message.ts", "src/transport/lifecycle.ts", "src/cli/connect.ts"];
    for (const later of [...transport, "src/cli/open.ts", "src/cli/inspect.ts", "src/config/secrets.ts", "src/security/redact.ts", "src/cli/report.ts", "src/mcp/client.ts"]) {
      assert.ok(!early.includes(later), `${later} is loaded before the early spawn`);
    }
    const probe = closure("src/mcp/client-discover.ts");
    for (const later of ["src/mcp/client-stateless.ts", "src/mcp/client-listen.ts", "src/mcp/param-headers.ts"]) {
      assert.ok(!probe.includes(later), `${later} is loaded with the server/discover probe`);
    }
  });

  test("the server bundle imports the shared error classes, and the validator when first needed, from the per-file build; it is ASCII", () => {
    const server = outputs.find((o) => o.file === "server-stdio.js")!;
    // Written as ASCII, a start decodes it as one-byte source (docs/decisions.md 161).
    assert.ok(!/[^\x00-\x7f]/.test(readFileSync(join(dist, server.file), "utf8")), "server-stdio.js has a non-ASCII character");
    assert.ok(server.modules.includes("src/mcp/server.ts") && server.modules.includes("src/transport/stdio-server.ts"));
    assert.deepEqual(server.modules.filter((m) => m.startsWith("src/jsonrpc/errors") || m.startsWith("src/schema/")), []);
    assert.deepEqual({ imports: server.imports, lazyImports: server.lazyImports }, { imports: ["./src/jsonrpc/errors.js"], lazyImports: ["./src/schema/validate.js"] });
  });

  test("an RpcError from the per-file jsonrpc subpath, thrown in a bundled server, reaches the client as itself", async () => {
    const script = join(dir, "server.mjs");
    const url = (file: string): string => JSON.stringify(pathToFileURL(join(dist, file)).href);
    writeFileSync(
      script,
      `import { McpServer, StdioServerTransport, RpcError as Bundled } from ${url("server-stdio.js")};
import { RpcError } from ${url("src/jsonrpc/index.js")};
const server = new McpServer({ name: "bundled", version: "1.0.0" }, { instructions: "same class: " + (Bundled === RpcError) });
server.resource({ uri: "test://missing", name: "missing" }, () => { throw new RpcError(-32002, "nothing at test://missing", { uri: "test://missing" }); });
server.tool({ name: "add", inputSchema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] } }, (args) => ({ content: [{ type: "text", text: String(args.a) }] }));
const session = await server.connect(new StdioServerTransport());
session.onclose = () => void server.close();
`,
    );
    const transport = new StdioClientTransport({ command: process.execPath, args: [script], name: "bundled" });
    const client = new McpClient({ clientInfo: { name: "test", version: "1.0.0" } });
    const init = await client.connect(transport);
    const pid = transport.pid!;
    try {
      assert.equal(init.instructions, "same class: true");
      // A foreign RpcError would be answered -32603 (internal error) instead; the era's own
      // "not found" code otherwise (-32602 in the stateless era).
      await assert.rejects(client.readResource("test://missing"), { code: resourceNotFoundCode(client.era), data: { uri: "test://missing" } });
      // The first call loads the per-file validator, which checks the arguments.
      assert.deepEqual(await client.callTool("add", { a: 2 }), { content: [{ type: "text", text: "2" }] });
      assert.equal((await client.callTool("add", { a: "two" })).isError, true);
    } finally {
      await client.close();
    }
    assert.equal(await waitGone(pid), true, `server ${pid} outlived the test`);
  });

  test("the client bundle imports the shared error classes, and every module McpClient loads with import(), from the per-file build; it is ASCII", () => {
    const client = outputs.find((o) => o.file === "client-stdio.js")!;
    assert.ok(!/[^\x00-\x7f]/.test(readFileSync(join(dist, client.file), "utf8")), "client-stdio.js has a non-ASCII character");
    assert.ok(client.modules.includes("src/mcp/client.ts") && client.modules.includes("src/transport/stdio-client.ts"), client.modules.join(", "));
    const unwanted = (m: string): boolean => /^src\/(mcp\/server|transport\/stdio-server|jsonrpc\/errors|schema\/)/.test(m);
    assert.deepEqual(client.modules.filter(unwanted), []);
    // What a start does not need: the probe loads with connect, the stateless client once the
    // probe found that era, the output-schema check (and the validator) with the first result it checks.
    const lazy = ["src/mcp/client-discover.ts", "src/mcp/client-stateless.ts", "src/mcp/output-check.ts"];
    const asImport = (m: string): string => `./${m.replace(/\.ts$/, ".js")}`;
    assert.deepEqual({ imports: client.imports, lazyImports: client.lazyImports }, { imports: ["./src/jsonrpc/errors.js"], lazyImports: lazy.map(asImport) });
    // Read from the source, so that a lazy import added later cannot be inlined unnoticed.
    const loadedLazily = client.modules.flatMap((m) =>
      [...readFileSync(join(ROOT, m), "utf8").matchAll(/(?<!typeof\s*)\bimport\(\s*["'](\.[^"']+)["']\s*\)/g)].map((i) => relative(ROOT, resolve(ROOT, dirname(m), i[1]!))),
    );
    assert.deepEqual([...new Set(loadedLazily)].sort(), lazy);
    assert.deepEqual(lazy.filter((m) => client.modules.includes(m)), []);
  });

  test("a McpClient of the bundled client entry talks to the echo fixture in both eras, with the per-file subpaths' error classes", async () => {
    const script = join(dir, "client.mjs");
    const url = (file: string): string => JSON.stringify(pathToFileURL(join(dist, file)).href);
    writeFileSync(
      script,
      `import { McpClient, StdioClientTransport, BridgeError, RpcError } from ${url("client-stdio.js")};
import * as jsonrpc from ${url("src/jsonrpc/index.js")};
import { McpClient as PerFileClient } from ${url("src/mcp/client.js")};
const out = { sameClasses: BridgeError === jsonrpc.BridgeError && RpcError === jsonrpc.RpcError, eras: {} };
// Each client's error is an instance of the other's class.
out.perFileMadeBundled = await new PerFileClient().callTool("echo").catch((err) => err instanceof BridgeError && err.code);
out.bundledMadePerFile = await new McpClient().callTool("echo").catch((err) => err instanceof jsonrpc.BridgeError && err.code);
for (const era of ["auto", "legacy"]) {
  const transport = new StdioClientTransport(${JSON.stringify(fixture("echo.ts"))});
  const client = new McpClient({ clientInfo: { name: "bundled", version: "1.0.0" }, era });
  await client.connect(transport);
  // At once, one line each: the test stops the server even if this script fails later.
  process.stdout.write(\`pid \${transport.pid}\\n\`);
  try {
    const tools = (await client.listTools()).map((tool) => tool.name);
    // A tool with an outputSchema: its result is checked by the per-file output check.
    const { structuredContent } = await client.callTool("structured", { label: "bundled" });
    const missing = await client.readResource("echo://missing").catch((err) => ({ perFileClass: err instanceof jsonrpc.RpcError, code: err.code }));
    out.eras[era] = { era: client.era, listed: tools.includes("structured"), structuredContent, missing };
  } finally {
    await client.close();
  }
}
process.stdout.write(JSON.stringify(out));
`,
    );
    const r = spawnSync(process.execPath, [script], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    const lines = r.stdout.split("\n");
    const pids = lines.filter((l) => l.startsWith("pid ")).map((l) => Number(l.slice(4)));
    try {
      assert.equal(r.status, 0, r.stderr);
      assert.equal(pids.length, 2);
      const structuredContent = { origin: { x: 0, y: 0 }, meta: { label: "bundled", tags: ["a", "b"] } };
      // auto: the probe finds the stateless era (the per-file probe and stateless client load);
      // legacy: the 2025 handshake, with no probe.
      const era = (name: "modern" | "legacy") => ({ era: name, listed: true, structuredContent, missing: { perFileClass: true, code: resourceNotFoundCode(name) } });
      assert.deepEqual(JSON.parse(lines.at(-1)!), {
        sameClasses: true,
        perFileMadeBundled: "NOT_CONNECTED",
        bundledMadePerFile: "NOT_CONNECTED",
        eras: { auto: era("modern"), legacy: era("legacy") },
      });
      for (const pid of pids) assert.equal(await waitGone(pid), true, `server ${pid} outlived the client`);
    } finally {
      for (const pid of pids) reap(pid);
    }
  });
});
