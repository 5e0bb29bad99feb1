/**
 * The build's second step, after `tsc -p tsconfig.build.json`: single-file ES module bundles,
 * made by esbuild, where start-up is the product (docs/decisions.md 45, 79). The
 * per-file `tsc` output under dist/src/ stays the layout of the library's subpaths.
 *
 *   dist/cli/main.js          the `mcp-bridge` bin, in two esbuild builds with code splitting
 *   dist/cli/chunk-*.js       (each command's code loads when it runs). The main build holds
 *   dist/cli/cli-shared.js    main and the commands that talk to one server (inspect, call,
 *                             read, prompt, complete), whose start is the one users wait on.
 *   dist/cli/<command>.js     The other commands (demo, acp-agent, serve, shim, vendor, auth)
 *   dist/cli/demo-server.js   and the demo's servers are entries of a second build, so that
 *                             the modules they share with the first do not split its chunks
 *                             further: every chunk a start loads costs Node ~0.3 ms
 *                             (docs/decisions.md 162). Modules whose identity or state main
 *                             shares with every command (the error classes, the usage error,
 *                             the failure report, the open clients) have one home, the first
 *                             build, and the second imports them from its `cli-shared.js`
 *                             entry; no module is loaded twice by any command (a test checks
 *                             each). dist/cli/ resolves `./demo-server.js` and
 *                             `../cli/main.js` as dist/src/cli/ does.
 *   dist/server-stdio.js      `mcp-bridge/server/stdio`: McpServer and the stdio server
 *                             transport in one file. Two modules stay the package's per-file
 *                             ones: the error classes (dist/src/jsonrpc/errors.js, which every
 *                             subpath shares, so `instanceof RpcError` holds whichever subpath
 *                             made the error), and the schema validator, which the server
 *                             loads with the first tools/call (docs/decisions.md 34), so a
 *                             start does not compile it.
 *   dist/client-stdio.js      `mcp-bridge/client/stdio`: McpClient and the stdio client
 *                             transport in one file, because an agent imports them as it
 *                             starts (docs/decisions.md 170). It imports the same error classes
 *                             from the per-file build, and what McpClient loads with `import()`
 *                             stays there too, loaded when first needed: the `server/discover`
 *                             probe, the stateless client, and the output-schema check (which
 *                             loads the validator in turn).
 *
 *   tsx scripts/build-bundles.ts [--outdir DIR] [--json]
 *     DIR defaults to dist, where tsc must have built DIR/src; --json prints what was written
 *     (each output's file, bytes, modules, static and lazy imports) as one JSON array on stdout.
 */
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

/** Every build's settings: readable output (no minifying), Node 20 syntax, ES modules. */
const COMMON = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning",
  metafile: true,
} satisfies esbuild.BuildOptions;

/**
 * Every output is ASCII (esbuild writes `\u2026` for `…`): one such character makes Node decode
 * the whole file as UTF-8 into a two-byte string, which V8 then scans and compiles as two-byte
 * source. The server bundle was long kept as UTF-8, because its ASCII source was a one-byte
 * string just under V8's largest young-generation object and brought a scavenge into some
 * starts; at 130 KB it is past that size, and ASCII starts it ~2 ms sooner (docs/decisions.md
 * 150, 161).
 */
const CHARSET = "ascii";

/**
 * Modules the stdio bundles import from the per-file build instead of holding them (see the
 * header): the shared error classes, the validator the server loads with its first tools/call,
 * and every module McpClient loads with `import()`.
 */
const PER_FILE = [
  join("src", "jsonrpc", "errors.ts"),
  join("src", "schema", "validate.ts"),
  join("src", "mcp", "client-discover.ts"),
  join("src", "mcp", "client-stateless.ts"),
  join("src", "mcp", "output-check.ts"),
];

/** Commands of src/cli/ that main imports from the CLI's second build (see the header). */
export const APART_COMMANDS = ["demo", "acp-agent", "serve", "shim", "vendor", "auth-command"] as const;

/**
 * The modules both CLI builds use as one instance, re-exported by the main build's
 * `cli-shared.js`: the error classes, the usage error and the failure report (main's report
 * tells them apart with `instanceof`), the open clients (main closes them when stdout breaks),
 * and what those import.
 */
export const CLI_SHARED = ["src/jsonrpc/errors.ts", "src/cli/args.ts", "src/cli/format.ts", "src/cli/report.ts", "src/cli/open-clients.ts"];

/** The `cli-shared` entry: a module made by the build that re-exports {@link CLI_SHARED}. */
const SHARED_ENTRY = "mcp-bridge:cli-shared";

function sharedEntry(root: string): esbuild.Plugin {
  return {
    name: "cli-shared",
    setup(build) {
      build.onResolve({ filter: /^mcp-bridge:cli-shared$/ }, () => ({ path: SHARED_ENTRY, namespace: "cli-shared" }));
      build.onLoad({ filter: /.*/, namespace: "cli-shared" }, () => ({
        contents: CLI_SHARED.map((file) => `export * from ${JSON.stringify(resolve(root, file))};`).join("\n"),
        resolveDir: root,
        loader: "ts",
      }));
    },
  };
}

/** Imports of a module for which `target` names an output file are left as imports of that file. */
function redirect(name: string, target: (path: string) => string | undefined): esbuild.Plugin {
  return {
    name,
    setup(build) {
      build.onResolve({ filter: /\.ts$/ }, (args) => {
        const file = target(resolve(args.resolveDir, args.path));
        return file === undefined ? undefined : { path: file, external: true };
      });
    },
  };
}

/** Each bundle written: its path relative to the output directory, and its size in bytes. */
export interface BundleOutput {
  /** Which esbuild build wrote it: the CLI's main one, the CLI's commands built apart, the server's or the client's. */
  build: "cli-main" | "cli-apart" | "server" | "client";
  file: string;
  bytes: number;
  /** Modules of src/ in this file, relative to the repository. */
  modules: string[];
  /** Files this one imports statically (relative to the output directory), built-ins left out. */
  imports: string[];
  /** Files it imports with `import()`, loaded when first needed. */
  lazyImports: string[];
}

/**
 * Builds the bundles of the repository at `root` into `outDir`, which must already hold the
 * per-file build (`outDir/src/jsonrpc/errors.js` is imported by the stdio bundles).
 */
export async function buildBundles(root: string, outDir: string): Promise<BundleOutput[]> {
  const sharedErrors = join(outDir, "src", "jsonrpc", "errors.js");
  if (!existsSync(sharedErrors)) throw new Error(`${sharedErrors} is missing: run tsc -p tsconfig.build.json first`);
  const perFile = new Map(PER_FILE.map((file) => [resolve(root, file), `./${file.split(sep).join("/").replace(/\.ts$/, ".js")}`]));
  // Chunk names change with their content: chunks of an earlier build must not be packed.
  await rm(join(outDir, "cli"), { recursive: true, force: true });
  const cliDir = join(outDir, "cli");
  const apart = new Map(APART_COMMANDS.map((name) => [resolve(root, "src", "cli", `${name}.ts`), `./${name}.js`]));
  const shared = new Set(CLI_SHARED.map((file) => resolve(root, file)));
  const main = await esbuild.build({
    ...COMMON,
    absWorkingDir: root,
    entryPoints: { main: "src/cli/main.ts", "cli-shared": SHARED_ENTRY },
    charset: CHARSET,
    splitting: true,
    chunkNames: "chunk-[hash]",
    outdir: cliDir,
    plugins: [sharedEntry(root), redirect("commands built apart", (path) => apart.get(path))],
  });
  const commands = await esbuild.build({
    ...COMMON,
    absWorkingDir: root,
    entryPoints: { ...Object.fromEntries(APART_COMMANDS.map((name) => [name, `src/cli/${name}.ts`])), "demo-server": "src/cli/demo-server.ts" },
    charset: CHARSET,
    splitting: true,
    chunkNames: "chunk-[hash]",
    outdir: cliDir,
    plugins: [redirect("shared with the main build", (path) => (shared.has(path) ? "./cli-shared.js" : undefined))],
  });
  const stdio = (entry: "server-stdio" | "client-stdio") =>
    esbuild.build({
      ...COMMON,
      absWorkingDir: root,
      charset: CHARSET,
      entryPoints: { [entry]: `src/${entry}.ts` },
      outdir: outDir,
      plugins: [redirect("per-file", (path) => perFile.get(path))],
    });
  const server = await stdio("server-stdio");
  const client = await stdio("client-stdio");
  return [
    ...describe("cli-main", main.metafile, root, outDir),
    ...describe("cli-apart", commands.metafile, root, outDir),
    ...describe("server", server.metafile, root, outDir),
    ...describe("client", client.metafile, root, outDir),
  ];
}

function describe(build: BundleOutput["build"], meta: esbuild.Metafile, root: string, outDir: string): BundleOutput[] {
  const rel = (file: string): string => relative(outDir, resolve(root, file));
  const files = (imports: esbuild.Metafile["outputs"][string]["imports"]): string[] => [
    ...new Set(imports.filter((i) => !i.path.startsWith("node:")).map((i) => (i.external ? i.path : rel(i.path)))),
  ];
  return Object.entries(meta.outputs).map(([file, out]) => ({
    build,
    file: rel(file),
    bytes: out.bytes,
    modules: Object.keys(out.inputs).filter((m) => m.startsWith("src/")).sort(),
    imports: files(out.imports.filter((i) => i.kind === "import-statement")),
    lazyImports: files(out.imports.filter((i) => i.kind === "dynamic-import")),
  }));
}

function parseArgs(argv: readonly string[], root: string): { outDir: string; json: boolean } {
  const out = { outDir: join(root, "dist"), json: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--json") out.json = true;
    else if (argv[i] === "--outdir" && argv[i + 1] !== undefined) out.outDir = resolve(argv[++i]!);
    else throw new Error(`usage: build-bundles.ts [--outdir DIR] [--json]; got ${argv.join(" ")}`);
  }
  return out;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  try {
    const { outDir, json } = parseArgs(process.argv.slice(2), root);
    const outputs = await buildBundles(root, outDir);
    if (json) process.stdout.write(`${JSON.stringify(outputs)}\n`);
  } catch (err) {
    process.stderr.write(`build-bundles: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    // esbuild's service process would otherwise outlive the build until this process exits.
    await esbuild.stop();
  }
}
