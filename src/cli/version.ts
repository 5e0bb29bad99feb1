/**
 * The version of mcp-bridge, read from its package.json. The CLI runs from `src/cli/` in a
 * checkout and from `dist/src/cli/` when installed, so the file is looked for upwards rather
 * than at a fixed relative path. No relative imports: this file must work wherever it is copied.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Not an `import` of node:fs: that loads ~30 more of Node's modules (docs/decisions.md 98).
const { readFileSync } = process.getBuiltinModule("node:fs");

/** How many directories above this file are searched (dist/src/cli/ is three below the root). */
const MAX_LEVELS = 4;

/**
 * The `version` of the nearest package.json named `mcp-bridge` above this module, or
 * `undefined` when there is none (the source was vendored into another project).
 */
export function packageVersion(): string | undefined {
  return findPackage()?.version;
}

/**
 * The folder of the nearest package.json named `mcp-bridge` above this module (a checkout's
 * root, or the installed package's), or `undefined` when there is none. The CLI runs from
 * `src/cli/`, `dist/src/cli/` or the bundle's `dist/cli/`, so no fixed relative path fits all.
 */
export function packageRoot(): string | undefined {
  return findPackage()?.root;
}

function findPackage(): { root: string; version: string } | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level <= MAX_LEVELS; level++) {
    const pkg = readPackage(join(dir, "package.json"));
    if (pkg?.name === "mcp-bridge" && typeof pkg.version === "string") return { root: dir, version: pkg.version };
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

function readPackage(path: string): { name?: unknown; version?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return typeof value === "object" && value !== null ? (value as { name?: unknown; version?: unknown }) : undefined;
  } catch {
    return undefined; // missing or unreadable: look further up
  }
}
