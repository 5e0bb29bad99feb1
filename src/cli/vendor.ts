/**
 * `mcp-bridge vendor <dir> [--subset client|server|manager|acp|all]` copies the library's
 * TypeScript source, as it is, into `<dir>/src/` with `LICENSE`, a `package.json` that makes
 * the `.ts` files ES modules, `verify.mjs` and `MANIFEST.sha256`; `mcp-bridge vendor --verify
 * <dir>` checks such a copy. The source comes from the copy of mcp-bridge that runs this: the
 * checkout's src/, or the installed package's, which ships it for this. docs/vendoring.md.
 */
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { packageRoot, packageVersion } from "./version.ts";
import { flag, onlyPositionals, UsageError, type ParsedArgs } from "./args.ts";
import type { CliIo } from "./io.ts";
import { CliError, ExitCode } from "./report.ts";
import { isSubset, subsetFiles, SUBSETS, type Subset } from "./vendor-closure.ts";
import { checkVendored, formatCheck, formatManifest, MANIFEST, sha256Hex, type ManifestEntry } from "./vendor-manifest.ts";

const USAGE = `mcp-bridge vendor <dir> [--subset ${SUBSETS.join("|")}]  or  mcp-bridge vendor --verify <dir>`;

/** Where the copy's verify script comes from, relative to src/. */
const VERIFY_TEMPLATE = "cli/vendor-verify.mjs";

export async function runVendor(args: ParsedArgs, io: CliIo): Promise<number> {
  onlyPositionals(args, 2, USAGE);
  const target = args.positionals[1];
  if (target === undefined || args.command.length > 0) throw new UsageError(`vendor needs one directory: ${USAGE}`);
  const dir = resolve(target);
  const subset = flag(args, "subset");
  if (args.flags.has("verify")) {
    if (subset !== undefined) throw new UsageError(`--verify checks a copy as it is; --subset has no meaning there: ${USAGE}`);
    const lines = formatCheck(await checkVendored(dir), dir);
    io.out(lines.join("\n"));
    return lines.length === 1 ? ExitCode.Ok : ExitCode.Failed;
  }
  const chosen = subset ?? "all";
  if (!isSubset(chosen)) throw new UsageError(`--subset must be one of ${SUBSETS.join(", ")}, got ${JSON.stringify(chosen)}`);
  const written = await vendor(sourceDir(), dir, chosen);
  io.out(
    `vendored mcp-bridge ${written.version}, subset ${chosen}: ${written.files} files of src/ (${written.bytes} bytes, ${written.lines} lines) into ${dir}\n` +
      `check it with: node ${join(dir, "verify.mjs")}`,
  );
  return ExitCode.Ok;
}

/**
 * The src/ directory of the mcp-bridge that runs this: beside this file's directory when it is
 * the TypeScript source (a checkout, or a vendored `all`); otherwise (the per-file build or the
 * bundled bin of an installed package) the src/ beside the package's package.json.
 */
function sourceDir(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith(".ts")) return resolve(dirname(here), "..");
  const root = packageRoot();
  return root === undefined ? resolve(dirname(here), "..", "..", "..", "src") : join(root, "src");
}

interface Written {
  version: string;
  files: number;
  bytes: number;
  lines: number;
}

/** Copies `subset` of `srcDir` (and the files beside it) into `dir`; the manifest comes last. */
async function vendor(srcDir: string, dir: string, subset: Subset): Promise<Written> {
  let verifyScript: Uint8Array;
  let license: Uint8Array;
  try {
    verifyScript = await readFile(join(srcDir, VERIFY_TEMPLATE));
    license = await readFile(join(dirname(srcDir), "LICENSE"));
  } catch (e) {
    throw new CliError(ExitCode.Failed, "VENDOR_SOURCE", `vendor: this copy of mcp-bridge does not carry its source beside it (${(e as Error).message}); vendor from a checkout or the installed package`, { cause: e });
  }
  const files = await subsetFiles(srcDir, subset);
  await prepare(dir);
  const version = packageVersion() ?? "(version unknown)";
  const entries: ManifestEntry[] = [];
  const put = async (path: string, bytes: Uint8Array) => {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), bytes, { flag: "wx" });
    entries.push({ path, sha256: sha256Hex(bytes) });
  };
  let bytes = 0;
  let lines = 0;
  for (const file of files) {
    const content = await readFile(join(srcDir, file));
    bytes += content.byteLength;
    for (const byte of content) if (byte === 0x0a) lines++;
    await put(`src/${file}`, content);
  }
  await put("LICENSE", license);
  await put("verify.mjs", verifyScript);
  await put("package.json", new TextEncoder().encode(vendoredPackageJson(version, subset)));
  // Written whole, then renamed: a copy interrupted half-way has no manifest, which verify reports.
  await writeFile(join(dir, `${MANIFEST}.tmp`), formatManifest(entries));
  await rename(join(dir, `${MANIFEST}.tmp`), join(dir, MANIFEST));
  return { version, files: files.length, bytes, lines };
}

/**
 * The copy's package.json: `"type": "module"` makes Node run its `.ts` files as ES modules
 * whatever the enclosing project says, and the name and version say what was vendored.
 */
function vendoredPackageJson(version: string, subset: Subset): string {
  const description = `mcp-bridge ${version}, subset ${subset}, copied by \`mcp-bridge vendor\`; check it with \`node verify.mjs\``;
  return `${JSON.stringify({ name: "mcp-bridge", version, private: true, type: "module", description }, null, 2)}\n`;
}

/**
 * Makes `dir` ready to receive a copy: created when absent, kept when empty, and emptied of its
 * listed files when it is an earlier copy that still matches its manifest (an update). Anything
 * else is refused, so that no file of the user's is ever overwritten or deleted.
 */
async function prepare(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new CliError(ExitCode.Failed, "VENDOR_TARGET", `vendor: cannot use ${dir}: ${(e as Error).message}`, { cause: e });
    await mkdir(dir, { recursive: true });
    return;
  }
  if (names.length === 0) return;
  if (!names.includes(MANIFEST)) {
    throw new CliError(ExitCode.Usage, "VENDOR_TARGET", `vendor: ${dir} is not empty and has no ${MANIFEST}: vendor writes only into an empty directory or over a copy it made`);
  }
  const check = await checkVendored(dir);
  if (check.changed.length + check.missing.length + check.added.length > 0) {
    throw new CliError(
      ExitCode.Failed,
      "VENDOR_MODIFIED",
      `vendor: ${dir} is an earlier copy with local differences, which an update would lose:\n${formatCheck(check, dir).slice(1).join("\n")}\n` +
        "move your changes elsewhere (or delete the directory) and vendor again",
    );
  }
  for (const path of check.listed) await rm(join(dir, path));
  await rm(join(dir, MANIFEST));
  await removeEmptyDirs(dir);
}

/** Removes the directories below `dir` that are (now) empty; `dir` itself stays. */
async function removeEmptyDirs(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const sub = join(dir, entry.name);
    await removeEmptyDirs(sub);
    if ((await readdir(sub)).length === 0) await rmdir(sub);
  }
}
