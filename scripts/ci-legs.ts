/**
 * The pieces of the CI Node matrix (docs/decisions.md 44, 82): which files the
 * suite is, the command that runs it natively, the pinned Node binaries, a copy of the
 * checkout without node_modules, and a runner that times one leg. `scripts/ci-matrix.ts` puts
 * them together; `scripts/coverage.ts` reuses them for the coverage gate.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { copyFile, lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The repository root (this file is `scripts/ci-legs.ts`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Where the pinned Node binaries are installed (`npm ci` there; `.ci/run` does it). */
export const NODE_MATRIX_DIR = join("scripts", "node-matrix");

/** The Node lines that run the suite natively, by type stripping, with no tsx. */
export const NATIVE_MAJORS = ["22", "24", "26"] as const;

/** The suite: the same rule as `npm test` (`find test -name '*.test.ts' | sort`). Change both together. */
export const TEST_DIR = "test";
export const TEST_SUFFIX = ".test.ts";

/** Tests that need a dev dependency by their nature (README: the offline command leaves them out). */
export const DEV_TEST_SUFFIX = ".dev.test.ts";

/**
 * The runner's default timeout, ms, so that no test can only hang: one that waits forever fails
 * after this. Node 20 counts it for a whole suite and a whole file, not per test, so it is
 * above the longest file's run on a loaded machine (the bench tests allow 180 s each); tests
 * that need less say so themselves. `npm test` repeats it (a test compares the two).
 * docs/decisions.md 102.
 */
export const TEST_TIMEOUT_MS = 600_000;

/**
 * The arguments after `node` of the offline command, for a list of test files: the same runner
 * options as `npm test`, without the tsx loader and without the `*.dev.test.ts` files, as the
 * README's `node --test 'test/**\/!(*.dev).test.ts'` selects. The one place to adjust the
 * native selection.
 */
export function nativeTestArgs(files: readonly string[]): string[] {
  return ["--test", "--test-concurrency=2", `--test-timeout=${TEST_TIMEOUT_MS}`, ...files.filter((f) => !f.endsWith(DEV_TEST_SUFFIX))];
}

/** The suite's test files under `root`, relative (with `/`), sorted, as `npm test` finds them. */
export async function testFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && entry.name.endsWith(TEST_SUFFIX)) out.push(relative(root, path).split(sep).join("/"));
    }
  };
  await walk(join(root, TEST_DIR));
  return out.sort();
}

/** The pinned binary of one Node line; `npm ci` in {@link NODE_MATRIX_DIR} installs it. */
export function matrixNode(root: string, major: string): string {
  return join(root, NODE_MATRIX_DIR, "node_modules", `node-${major}`, "bin", "node");
}

/** The exact version of a pinned binary, from its package (no process started). */
export function matrixNodeVersion(root: string, major: string): string {
  const pkg = join(root, NODE_MATRIX_DIR, "node_modules", `node-${major}`, "package.json");
  if (!existsSync(pkg)) {
    throw new Error(`Node ${major} is not installed in ${NODE_MATRIX_DIR}: run \`npm ci --prefix ${NODE_MATRIX_DIR}\` first`);
  }
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

/**
 * The environment of a native leg: `node` on PATH is the leg's binary (tests and fixtures that
 * start `node` by name get the same version), nothing can preload a package into it
 * (`NODE_OPTIONS`, `NODE_PATH` are dropped), and an outer test run's `NODE_TEST_CONTEXT`, which
 * would make `node --test` skip its files, does not leak in.
 */
export function nativeEnv(node: string, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, PATH: [dirname(node), base.PATH ?? ""].filter((p) => p !== "").join(delimiter) };
  delete env.NODE_OPTIONS;
  delete env.NODE_PATH;
  delete env.NODE_TEST_CONTEXT;
  return env;
}

/** The files of a checkout: tracked and untracked-but-not-ignored, as git lists them. */
export async function checkoutFiles(root: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(stdout.split("\0").filter((f) => f !== ""))].sort();
}

/**
 * Copies `files` (relative to `from`) to `to`, keeping modes and symlinks. A listed file that is
 * gone (deleted but not yet committed) is left out, as the working tree has it.
 */
export async function copyFiles(from: string, to: string, files: readonly string[]): Promise<void> {
  for (const file of files) {
    const source = join(from, file);
    const target = join(to, file);
    const stat = await lstat(source).catch(() => undefined);
    if (stat === undefined || stat.isDirectory()) continue;
    await mkdir(dirname(target), { recursive: true });
    if (stat.isSymbolicLink()) await symlink(await readlink(source), target);
    else await copyFile(source, target);
  }
}

/**
 * The first `node_modules` directory at or above `dir`, or undefined. Node resolves bare
 * imports through every one of them, so a native leg proves nothing while one exists.
 */
export function nodeModulesAbove(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const candidate = join(d, "node_modules");
    if (existsSync(candidate)) return candidate;
    if (dirname(d) === d) return undefined;
  }
}

/** A fresh copy of the checkout's files in a temporary directory, with no node_modules in reach. */
export async function copyCheckout(root: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-ci-"));
  try {
    await copyFiles(root, dir, await checkoutFiles(root));
    // The pinned Node binaries are the CI machine's tools, not packages: tests that need a
    // given Node line (the vendored copy run by Node 24) find them where a checkout has them.
    // No test file resolves a bare import through this folder (it is not above test/).
    const binaries = join(root, NODE_MATRIX_DIR, "node_modules");
    if (existsSync(binaries)) {
      await mkdir(join(dir, NODE_MATRIX_DIR), { recursive: true });
      await symlink(binaries, join(dir, NODE_MATRIX_DIR, "node_modules"), "dir");
    }
    const found = nodeModulesAbove(dir);
    if (found !== undefined) {
      throw new Error(`${found} is in reach of the copy in ${dir}: a native leg would not prove the suite needs no package; remove it or point TMPDIR elsewhere`);
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return dir;
}

/** One run of the suite. */
export interface Leg {
  /** How the log and the summary name it, e.g. `node 24.21.0 (native)`. */
  label: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Run in a fresh copy of the checkout without node_modules (removed afterwards), not in place. */
  copy: boolean;
}

/** How a leg ended. */
export interface LegResult {
  label: string;
  ok: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Wall time of the whole leg, the copy included. */
  durationMs: number;
  /** What the leg printed (stdout and stderr interleaved); only with `output: "capture"`. */
  output?: string;
}

/** Options of {@link runLeg}. */
export interface RunLegOptions {
  /** The checkout to run in (or to copy). */
  root: string;
  /** `inherit`: the leg prints straight to this process's output (CI); `capture`: kept in the result. */
  output?: "inherit" | "capture";
  /** Milliseconds since some origin; a seam for tests. */
  clock?: () => number;
}

/** Runs one leg to its end: copy if asked, spawn, wait, clean the copy up. */
export async function runLeg(leg: Leg, options: RunLegOptions): Promise<LegResult> {
  const clock = options.clock ?? (() => performance.now());
  const capture = options.output === "capture";
  const started = clock();
  const cwd = leg.copy ? await copyCheckout(options.root) : options.root;
  try {
    const child = spawn(leg.command, leg.args, { cwd, env: leg.env, stdio: capture ? ["ignore", "pipe", "pipe"] : "inherit" });
    let output = "";
    if (capture) {
      child.stdout!.setEncoding("utf8").on("data", (s: string) => (output += s));
      child.stderr!.setEncoding("utf8").on("data", (s: string) => (output += s));
    }
    const [exitCode, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
    const result: LegResult = { label: leg.label, ok: exitCode === 0, exitCode, signal, durationMs: clock() - started };
    if (capture) result.output = output;
    return result;
  } finally {
    if (leg.copy) await rm(cwd, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** `2m 17.7s`, `41.2s`. */
export function formatDuration(ms: number): string {
  const tenths = Math.round(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1);
  return minutes > 0 ? `${minutes}m ${seconds}s` : `${seconds}s`;
}
