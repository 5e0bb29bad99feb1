/**
 * The package as the start-up sections use it: built into the benchmark's scratch directory
 * the way `npm run build` builds dist/ (tsc, then scripts/build-bundles.ts), installed as
 * `node_modules/mcp-bridge` of a scratch app (a symlink), and the stdio servers a user would
 * write against it. Each of those servers registers exactly the tools the raw baseline server
 * lists (read from that server at build time), so both sides of a spawn send the same bytes.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildBundles } from "../build-bundles.ts";
import { benchEnv } from "./env.ts";

/** What the start-up sections run. */
export interface BuiltPackage {
  /** The bin as packed (the bundled CLI, dist/cli/main.js). */
  cliBundle: string;
  /** The per-file CLI (dist/src/cli/main.js), shown for comparison. */
  cliPerFile: string;
  /** The scratch app that has the package installed: a module written there imports its subpaths by name. */
  app: string;
  /** Stdio servers serving the raw server's tools, written against: */
  servers: {
    /** `mcp-bridge/server/stdio` (the bundled entry) of the installed package; */
    bundle: string;
    /** `mcp-bridge/server` + `mcp-bridge/transport/stdio-server` (per-file) of the installed package; */
    dist: string;
    /** the repository's `src/` as TypeScript (run under tsx, or by Node's type stripping). */
    source: string;
  };
}

/** The text of the raw CLI's output: the server's tool list, among others. */
function rawTools(rawCli: string, rawServer: string): unknown[] {
  const r = spawnSync(process.execPath, [rawCli, "--", process.execPath, rawServer], { encoding: "utf8", env: benchEnv(), timeout: 30_000 });
  if (r.status !== 0) throw new Error(`listing the raw server's tools failed (${r.status ?? r.signal}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { tools: unknown[] }).tools;
}

/** A stdio server module: `imports`, then the raw server's tools, `echo` echoing, the others naming themselves. */
function serverModule(imports: string, tools: unknown[]): string {
  return `// Written by scripts/bench/package.ts: a user's stdio server, serving the raw baseline's tools.
${imports}
const TOOLS = ${JSON.stringify(tools)};
const server = new McpServer({ name: "bench-echo", version: "1.0.0" });
for (const tool of TOOLS) {
  server.tool(tool, tool.name === "echo" ? (args) => ({ content: [{ type: "text", text: String(args.text) }] }) : () => ({ content: [{ type: "text", text: tool.name }] }));
}
const session = await server.connect(new StdioServerTransport());
session.onclose = () => void server.close();
`;
}

/**
 * Builds the package of the repository at `root` into `work/package`, links it into the app
 * `work/app`, and writes the servers. `rawCli` and `rawServer` are the baseline's scripts.
 */
export async function buildPackage(root: string, work: string, rawCli: string, rawServer: string): Promise<BuiltPackage> {
  const pkg = join(work, "package");
  const dist = join(pkg, "dist");
  const tsc = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", join(root, "tsconfig.build.json"), "--outDir", dist], {
    encoding: "utf8",
  });
  if (tsc.status !== 0) throw new Error(`tsc failed (${tsc.status ?? tsc.signal}): ${tsc.stdout}${tsc.stderr}`);
  try {
    await buildBundles(root, dist);
  } finally {
    await (await import("esbuild")).stop();
  }
  copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
  const app = join(work, "app");
  mkdirSync(join(app, "node_modules"), { recursive: true });
  writeFileSync(join(app, "package.json"), '{ "private": true, "type": "module" }\n');
  symlinkSync(pkg, join(app, "node_modules", "mcp-bridge"), "dir");

  const tools = rawTools(rawCli, rawServer);
  const servers = {
    bundle: join(app, "server-bundle.mjs"),
    dist: join(app, "server-dist.mjs"),
    source: join(work, "server-source.ts"),
  };
  writeFileSync(servers.bundle, serverModule('import { McpServer, StdioServerTransport } from "mcp-bridge/server/stdio";', tools));
  writeFileSync(
    servers.dist,
    serverModule('import { McpServer } from "mcp-bridge/server";\nimport { StdioServerTransport } from "mcp-bridge/transport/stdio-server";', tools),
  );
  const src = (file: string): string => JSON.stringify(pathToFileURL(join(root, "src", file)).href);
  writeFileSync(
    servers.source,
    serverModule(`import { McpServer } from ${src("mcp/server.ts")};\nimport { StdioServerTransport } from ${src("transport/stdio-server.ts")};`, tools),
  );
  return { cliBundle: join(dist, "cli", "main.js"), cliPerFile: join(dist, "src", "cli", "main.js"), app, servers };
}
