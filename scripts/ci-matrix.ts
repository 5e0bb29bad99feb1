/**
 * The CI Node matrix (docs/decisions.md 44, 82): the suite on Node 20 through
 * `npm test` (tsx), then natively on the pinned Node 22, 24 and 26, each native leg in a fresh
 * copy of the checkout's files with no node_modules in reach. Prints each leg's duration and a
 * summary; exits 1 when a leg (or, with `--coverage`, the coverage gate) fails. Every leg runs
 * even after one fails, so one CI run shows them all.
 *
 * ```
 * node scripts/ci-matrix.ts [20] [22] [24] [26] [test files...]   (default: all four, whole suite)
 *   --coverage     the Node 24 leg also measures src/ and applies the gate of scripts/coverage.ts
 *   --in-place     run the native legs in the checkout instead of a copy
 *   --repeat N     run the legs N times (flake hunting)
 *   --busy N       keep N busy-loop processes running beside the legs (a loaded machine)
 * ```
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { COVERAGE_NODE_MAJOR, coverageArgs, gateLcovFile } from "./coverage.ts";
import {
  formatDuration,
  matrixNode,
  matrixNodeVersion,
  NATIVE_MAJORS,
  nativeEnv,
  nativeTestArgs,
  REPO_ROOT,
  runLeg,
  TEST_SUFFIX,
  testFiles,
} from "./ci-legs.ts";
import type { Leg, LegResult } from "./ci-legs.ts";

/** The Node line `npm test` runs on: the machine's own `node`, with tsx. */
export const TSX_MAJOR = "20";

/** What to run; see the usage in this file's header. */
export interface MatrixPlan {
  majors: string[];
  /** Test files to run instead of the whole suite (for flake hunting); empty: the suite. */
  files: string[];
  coverage: boolean;
  inPlace: boolean;
  repeat: number;
  busy: number;
}

/** Parses the command line; throws a usage message on anything it does not know. */
export function parseMatrixArgs(argv: readonly string[]): MatrixPlan {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      coverage: { type: "boolean", default: false },
      "in-place": { type: "boolean", default: false },
      repeat: { type: "string", default: "1" },
      busy: { type: "string", default: "0" },
    },
  });
  const known = [TSX_MAJOR, ...NATIVE_MAJORS];
  const files = positionals.filter((p) => p.endsWith(TEST_SUFFIX));
  for (const p of positionals) {
    if (!known.includes(p) && !files.includes(p)) {
      throw new Error(`unknown Node line "${p}": the matrix has ${known.join(", ")} (or name *${TEST_SUFFIX} files)`);
    }
  }
  const lines = positionals.filter((p) => known.includes(p));
  const count = (name: string, text: string, min: number): number => {
    if (!/^\d+$/.test(text) || Number(text) < min) throw new Error(`--${name} wants a whole number >= ${min}, got "${text}"`);
    return Number(text);
  };
  return {
    majors: lines.length === 0 ? known : known.filter((m) => lines.includes(m)),
    files,
    coverage: values.coverage,
    inPlace: values["in-place"],
    repeat: count("repeat", values.repeat, 1),
    busy: count("busy", values.busy, 0),
  };
}

/** Options of {@link planLeg}. */
export interface PlanLegOptions {
  /** The test files; the whole suite unless `selected`. */
  files: readonly string[];
  /** `files` is a selection, not the whole suite: Node 20 then runs `npm test`'s command on it. */
  selected?: boolean;
  /** Native legs run in the checkout rather than in a copy. */
  inPlace?: boolean;
  /** This (native) leg also writes an lcov report of src/ here. */
  lcovPath?: string;
}

/** The leg of one Node line. */
export function planLeg(root: string, major: string, options: PlanLegOptions): Leg {
  const { files, lcovPath } = options;
  if (major === TSX_MAJOR) {
    const version = execFileSync("node", ["--version"], { encoding: "utf8" }).trim();
    if (options.selected !== true) {
      return { label: `node ${version} (npm test, tsx)`, command: "npm", args: ["test"], env: process.env, copy: false };
    }
    // npm test's command line on the selection.
    return { label: `node ${version} (tsx)`, command: "node", args: ["--import", "tsx", ...nativeTestArgs(files)], env: process.env, copy: false };
  }
  const node = matrixNode(root, major);
  const where = options.inPlace === true ? "in place" : "copy without node_modules";
  // Node 22 prints TAP when its output is not a terminal; spec reads better in a CI log.
  const reporter = lcovPath === undefined ? ["--test-reporter=spec"] : coverageArgs(lcovPath);
  return {
    label: `node ${matrixNodeVersion(root, major)} (native, ${where}${lcovPath === undefined ? "" : ", coverage"})`,
    command: node,
    args: [...reporter, ...nativeTestArgs(files)],
    env: nativeEnv(node, process.env),
    copy: options.inPlace !== true,
  };
}

/** The summary table: one line per leg run. */
export function summaryLines(results: readonly LegResult[]): string[] {
  const hows = results.map((r) => (r.ok ? "passed" : r.signal !== null ? `FAILED (${r.signal})` : `FAILED (exit ${r.exitCode})`));
  const labelWidth = Math.max(0, ...results.map((r) => r.label.length));
  const howWidth = Math.max(0, ...hows.map((h) => h.length));
  return results.map((r, i) => `${r.label.padEnd(labelWidth)}  ${hows[i]!.padEnd(howWidth)}  ${formatDuration(r.durationMs)}`);
}

/**
 * Starts `n` processes that spin on a CPU each; the caller stops them by pid. Each also ends
 * itself once this process is gone (its parent changes), so a killed runner leaves none behind.
 */
function startBusyLoops(n: number): number[] {
  const spin = "const parent = process.ppid; for (;;) if (process.ppid !== parent) process.exit();";
  return Array.from({ length: n }, () => spawn(process.execPath, ["-e", spin], { stdio: "ignore" }).pid!);
}

async function main(): Promise<void> {
  const plan = parseMatrixArgs(process.argv.slice(2));
  const files = plan.files.length > 0 ? plan.files : await testFiles(REPO_ROOT);
  const results: LegResult[] = [];
  const gates: string[] = [];
  let gatesOk = true;
  const busy = startBusyLoops(plan.busy);
  const stopBusy = () => {
    for (const pid of busy.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  process.on("exit", stopBusy);
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-matrix-"));
  try {
    for (let round = 1; round <= plan.repeat; round++) {
      for (const major of plan.majors) {
        const lcov = plan.coverage && major === COVERAGE_NODE_MAJOR ? join(dir, `lcov-${round}.info`) : undefined;
        const leg = planLeg(REPO_ROOT, major, { files, selected: plan.files.length > 0, inPlace: plan.inPlace, lcovPath: lcov });
        const heading = plan.repeat > 1 ? `${leg.label}, round ${round} of ${plan.repeat}` : leg.label;
        console.log(`\n--- ${heading}${plan.busy > 0 ? ` beside ${plan.busy} busy loop${plan.busy === 1 ? "" : "s"}` : ""}`);
        const result = await runLeg(leg, { root: REPO_ROOT });
        results.push(result);
        console.log(`--- ${heading}: ${result.ok ? "passed" : "FAILED"} in ${formatDuration(result.durationMs)}`);
        if (lcov !== undefined) {
          const gate = await gateLcovFile(lcov, result.ok);
          gates.push(...gate.lines);
          gatesOk &&= gate.ok;
          for (const line of gate.lines) console.log(line);
        }
      }
    }
  } finally {
    stopBusy();
    await rm(dir, { recursive: true, force: true });
  }
  console.log("\n=== Node matrix ===");
  for (const line of [...summaryLines(results), ...gates]) console.log(line);
  if (results.some((r) => !r.ok) || !gatesOk) process.exitCode = 1;
}

const invokedAs = process.argv[1];
if (invokedAs !== undefined && resolve(invokedAs) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(`ci-matrix: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  });
}
