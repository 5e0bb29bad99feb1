/**
 * Which source files a vendored subset needs: the import closure of the subset's entry files,
 * followed through every relative import (static, dynamic and type-only) that
 * {@link moduleReferences} finds. Nothing here is listed by hand but the entries.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { CliError, ExitCode } from "./report.ts";
import { moduleReferences, NonLiteralImportError } from "./vendor-imports.ts";

/**
 * The entry files of each subset, relative to src/ (docs/vendoring.md says why these). `all`
 * is every file of src/, the CLI and its verify.mjs template included, rather than a closure,
 * so that a vendored `all` can vendor again.
 */
export const SUBSET_ENTRIES = {
  /** McpClient with every client transport: stdio, Streamable HTTP, legacy SSE, and the fallback between the two. */
  client: ["mcp/client.ts", "transport/stdio-client.ts", "transport/http-client.ts", "transport/sse-client.ts", "transport/http-auto.ts"],
  /** McpServer with every server transport: stdio, Streamable HTTP, legacy SSE. */
  server: ["mcp/server.ts", "transport/stdio-server.ts", "transport/http-server.ts", "transport/sse-server.ts"],
  /** McpManager with config parsing and discovery (it brings the client transports itself). */
  manager: ["manager/manager.ts", "config/parse.ts", "config/discovery.ts"],
  /** The ACP agent side: everything `src/acp/index.ts` exports. */
  acp: ["acp/index.ts"],
  all: [],
} as const satisfies Record<string, readonly string[]>;

export type Subset = keyof typeof SUBSET_ENTRIES;

export const SUBSETS = Object.keys(SUBSET_ENTRIES) as Subset[];

export function isSubset(name: string): name is Subset {
  return Object.hasOwn(SUBSET_ENTRIES, name);
}

/**
 * The files of `subset`, relative to `srcDir` with `/` separators, sorted. Fails with a
 * `CliError` naming the importing file and line when an import cannot be followed: a computed
 * `import()`, a relative path that leaves src/ or names no file, or a package import.
 */
export async function subsetFiles(srcDir: string, subset: Subset): Promise<string[]> {
  if (subset === "all") return (await listFiles(srcDir)).sort();
  const seen = new Set<string>();
  const queue: string[] = SUBSET_ENTRIES[subset].map((entry) => resolve(srcDir, entry));
  while (queue.length > 0) {
    const file = queue.pop()!;
    const name = relative(srcDir, file).split(sep).join("/");
    if (seen.has(name)) continue;
    seen.add(name);
    for (const target of await importsOf(srcDir, file, name)) queue.push(target);
  }
  return [...seen].sort();
}

/** The absolute paths of the source files `file` imports. */
async function importsOf(srcDir: string, file: string, name: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    throw new CliError(ExitCode.Failed, "VENDOR_SOURCE", `vendor: cannot read src/${name}: ${(e as Error).message}`, { cause: e });
  }
  let references;
  try {
    references = moduleReferences(text);
  } catch (e) {
    if (!(e instanceof NonLiteralImportError)) throw e;
    throw new CliError(ExitCode.Failed, "VENDOR_SOURCE", `vendor: src/${name} ${e.message}`, { cause: e });
  }
  const out: string[] = [];
  for (const { specifier, line } of references) {
    if (specifier.startsWith("node:")) continue;
    const at = `src/${name}:${line}`;
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
      throw new CliError(ExitCode.Failed, "VENDOR_SOURCE", `vendor: ${at} imports the package "${specifier}"; the library imports only its own files and node: modules`);
    }
    const target = resolve(dirname(file), specifier);
    const inside = relative(srcDir, target);
    if (inside.startsWith(`..${sep}`) || !(await isFile(target))) {
      throw new CliError(ExitCode.Failed, "VENDOR_SOURCE", `vendor: ${at} imports "${specifier}", which is not a file of src/`);
    }
    out.push(target);
  }
  return out;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Every file below `dir`, relative to it with `/` separators. */
async function listFiles(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const name = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(...(await listFiles(dir, name)));
    else if (entry.isFile()) out.push(name);
  }
  return out;
}
