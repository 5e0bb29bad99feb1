/**
 * `MANIFEST.sha256` of a vendored copy: one line per file, `<sha256 hex>  <path>`, sorted by
 * path, the format `sha256sum -c` reads. Checking a copy lists every file that was changed,
 * is missing, or was added (anything not in the manifest, the manifest itself excepted).
 * `vendor-verify.mjs` does the same in plain JavaScript beside the copy; this one is the CLI's,
 * which does not trust the copy's own script.
 */
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { CliError, ExitCode } from "./report.ts";

export const MANIFEST = "MANIFEST.sha256";

export interface ManifestEntry {
  /** Relative to the vendored directory, `/`-separated. */
  path: string;
  /** SHA-256 of the file's bytes, lowercase hex. */
  sha256: string;
}

/** What {@link checkVendored} found; every list sorted. */
export interface VendorCheck {
  /** The paths the manifest lists, in its order. */
  listed: string[];
  changed: string[];
  missing: string[];
  added: string[];
}

const LINE = /^([0-9a-f]{64}) {2}(.+)$/;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The manifest's text: sorted by path, one line each, ending in a newline. */
export function formatManifest(entries: readonly ManifestEntry[]): string {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sorted.map((e) => `${e.sha256}  ${e.path}\n`).join("");
}

/**
 * Reads `text` as a manifest. A line that is not `<64 hex>  <path>`, or a path that is absolute,
 * has `.`/`..` or empty segments or a backslash, makes the whole manifest malformed: a path
 * must never lead the check outside the directory.
 */
function parseManifest(text: string, where: string): ManifestEntry[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line, i) => {
    const match = LINE.exec(line);
    const path = match?.[2];
    if (match === null || path === undefined || !safePath(path)) {
      throw new CliError(ExitCode.Failed, "VENDOR_MANIFEST", `vendor: ${where} line ${i + 1} is not "<sha256 hex>  <relative path>": ${JSON.stringify(line.slice(0, 120))}`);
    }
    return { sha256: match[1]!, path };
  });
}

function safePath(path: string): boolean {
  return !path.startsWith("/") && !path.includes("\\") && path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

/**
 * Compares `dir` with its `MANIFEST.sha256`. Fails with a `CliError` when the manifest is
 * missing or malformed; differences are the result, not a failure. A symbolic link or any
 * other non-regular file counts as changed when listed and as added when not.
 */
export async function checkVendored(dir: string): Promise<VendorCheck> {
  const where = join(dir, MANIFEST);
  let text: string;
  try {
    text = await readFile(where, "utf8");
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : `cannot be read: ${(e as Error).message}`;
    throw new CliError(ExitCode.Failed, "VENDOR_MANIFEST", `vendor: ${where} ${reason}; is ${dir} a directory made by mcp-bridge vendor?`, { cause: e });
  }
  const listed = parseManifest(text, where);
  const present = await walk(dir);
  present.delete(MANIFEST);
  const check: VendorCheck = { listed: listed.map((e) => e.path), changed: [], missing: [], added: [] };
  for (const { path, sha256 } of listed) {
    const regular = present.get(path);
    present.delete(path);
    if (regular === undefined) check.missing.push(path);
    else if (!regular || sha256Hex(await readFile(join(dir, path))) !== sha256) check.changed.push(path);
  }
  check.added.push(...present.keys());
  for (const list of [check.changed, check.missing, check.added]) list.sort();
  return check;
}

/** Every non-directory entry below `dir` by relative path: true for a regular file. */
async function walk(dir: string, prefix = "", out = new Map<string, boolean>()): Promise<Map<string, boolean>> {
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) await walk(dir, path, out);
    else out.set(path, entry.isFile());
  }
  return out;
}

/** The lines a person reads: one summary, then `changed|missing|added  <path>` per difference. */
export function formatCheck(check: VendorCheck, dir: string): string[] {
  const rows = [
    ...check.changed.map((p) => `changed  ${p}`),
    ...check.missing.map((p) => `missing  ${p}`),
    ...check.added.map((p) => `added    ${p}`),
  ];
  if (rows.length === 0) return [`verify: ok, ${check.listed.length} files match ${MANIFEST} in ${dir}`];
  return [`verify: ${rows.length} difference(s) from ${MANIFEST} in ${dir}`, ...rows];
}
