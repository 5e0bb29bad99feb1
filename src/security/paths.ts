/**
 * Confinement of user-supplied paths to a root directory, symlinks included.
 *
 * The check is done on the canonical path (every symlink resolved), and the canonical path is
 * what is returned: the caller opens exactly the file that was checked, not a path the kernel
 * would resolve differently (`link/../x`). A race with someone swapping a directory for a
 * symlink after the check is outside what a path check can prevent.
 */
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { BridgeError, type BridgeErrorOptions, type PathErrorCode } from "../jsonrpc/errors.ts";

export type { PathErrorCode };

/**
 * - `NUL_BYTE`: the root or the path contains U+0000.
 * - `ROOT_NOT_FOUND`: the root does not exist (or cannot be resolved).
 * - `ESCAPES_ROOT`: a relative path leaves the root through `..`.
 * - `OUTSIDE_ROOT`: an absolute path is not under the root.
 * - `SYMLINK_ESCAPE`: a symlink on the way leads outside the root.
 * - `BROKEN_SYMLINK`: a dangling or looping symlink on the way (refused, since writing through
 *   a dangling link creates its target, wherever that is).
 * - `IO_ERROR`: the file system refused to tell (e.g. EACCES).
 */

/**
 * A path refused by {@link resolveWithin}. The message says which rule and what to do;
 * `details` holds `path` (as the user gave it) and `root`.
 */
export class PathError extends BridgeError {
  declare readonly code: PathErrorCode;
  /** The path as the user gave it. */
  readonly path: string;
  readonly root: string;

  constructor(
    code: PathErrorCode,
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & { details: { path: string; root: string } },
  ) {
    super(code, message, options);
    this.name = "PathError";
    this.path = options.details.path;
    this.root = options.details.root;
  }
}

/**
 * Resolves `userPath` (relative to `root`, or absolute) and returns its canonical absolute
 * path, which is guaranteed to be `realpath(root)` or below it.
 *
 * Components that do not exist yet are allowed (for writes, including `mkdir -p`): then the
 * deepest existing ancestor is canonicalised and must be inside the root, and the missing
 * components are appended to it. Rejects with {@link PathError}.
 *
 * ```ts
 * await resolveWithin("/srv/data", "notes/a.txt")  // "/srv/data/notes/a.txt"
 * await resolveWithin("/srv/data", "../etc/passwd") // PathError ESCAPES_ROOT
 * ```
 */
export async function resolveWithin(root: string, userPath: string): Promise<string> {
  const shown = JSON.stringify(userPath);
  if (root.includes("\0") || userPath.includes("\0")) {
    throw new PathError("NUL_BYTE", `path ${shown} contains a NUL byte; remove it`, { details: { path: userPath, root } });
  }
  const lexicalRoot = resolve(root);
  let realRoot: string;
  try {
    realRoot = await realpath(lexicalRoot);
  } catch (err) {
    throw new PathError(
      "ROOT_NOT_FOUND",
      `root directory ${JSON.stringify(root)} cannot be resolved (${codeOf(err)}); create it or fix the configured root`,
      { cause: err, details: { path: userPath, root } },
    );
  }

  const absolute = isAbsolute(userPath);
  const candidate = absolute ? resolve(userPath) : resolve(lexicalRoot, userPath);
  // Lexical check first, for a precise message; a path given relative to a symlinked root
  // may be spelt either way.
  if (!isInside(lexicalRoot, candidate) && !isInside(realRoot, candidate)) {
    throw absolute
      ? new PathError("OUTSIDE_ROOT", `path ${shown} is outside the root ${JSON.stringify(root)}; use a path inside it`, { details: { path: userPath, root } })
      : new PathError("ESCAPES_ROOT", `path ${shown} leaves the root ${JSON.stringify(root)} through ".."; use a path inside it`, { details: { path: userPath, root } });
  }

  // Walk up to the deepest component that exists (as anything, a dangling link included).
  let existing = candidate;
  const missing: string[] = [];
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (err) {
      const code = codeOf(err);
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        throw new PathError("IO_ERROR", `path ${shown} cannot be checked (${code})`, { cause: err, details: { path: userPath, root } });
      }
      const parent = dirname(existing);
      // Unreachable in practice: the root exists and the candidate is under it.
      if (parent === existing) throw new PathError("ROOT_NOT_FOUND", `path ${shown}: no existing ancestor`, { cause: err, details: { path: userPath, root } });
      missing.unshift(basename(existing));
      existing = parent;
    }
  }

  let real: string;
  try {
    real = await realpath(existing);
  } catch (err) {
    const code = codeOf(err);
    if (code === "ENOENT" || code === "ELOOP") {
      throw new PathError(
        "BROKEN_SYMLINK",
        `path ${shown} goes through a dangling or looping symlink; remove the link or use another path`,
        { cause: err, details: { path: userPath, root } },
      );
    }
    throw new PathError("IO_ERROR", `path ${shown} cannot be resolved (${code})`, { cause: err, details: { path: userPath, root } });
  }
  if (!isInside(realRoot, real)) {
    throw new PathError(
      "SYMLINK_ESCAPE",
      `path ${shown} leads outside the root ${JSON.stringify(root)} through a symlink; use a path inside it`,
      { details: { path: userPath, root } },
    );
  }
  return missing.length === 0 ? real : join(real, ...missing);
}

/** True when `path` is `dir` or below it. Both must be absolute and normalised. */
function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  if (rel === "") return true;
  // `..foo` is a name inside; only a whole `..` segment leaves.
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "unknown error";
}
