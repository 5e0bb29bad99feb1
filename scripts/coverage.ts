/**
 * Coverage gate: `npm run coverage` runs the suite natively on the pinned Node 24 with Node's
 * built-in coverage of src/, prints line, branch and function coverage, and exits 1 below
 * {@link COVERAGE_THRESHOLDS} (or when a test fails). The CI matrix's Node 24 leg measures the
 * same way and applies the same gate (docs/decisions.md 83).
 *
 * The figures are summed from the lcov report Node writes (`LH/LF`, `BRH/BRF`, `FNH/FNF` of each
 * file), which are the counts behind the "all files" row of Node's own table.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { matrixNode, matrixNodeVersion, nativeEnv, nativeTestArgs, REPO_ROOT, runLeg, testFiles, formatDuration } from "./ci-legs.ts";
import type { Leg } from "./ci-legs.ts";

/** The minimum coverage of src/ in percent; the one place these live. Raise them, never lower them. */
export const COVERAGE_THRESHOLDS: CoverageFigures = { lines: 97, branches: 90, functions: 94 };

/** The Node line the gate measures with (coverage of type-stripped source needs Node 22.5+). */
export const COVERAGE_NODE_MAJOR = "24";

/** What is measured, in the order it is printed. */
export const COVERAGE_METRICS = ["lines", "branches", "functions"] as const;
export type CoverageMetric = (typeof COVERAGE_METRICS)[number];
export type CoverageFigures = Record<CoverageMetric, number>;

/** Covered out of total, for one metric. */
export interface CoverageCount {
  covered: number;
  total: number;
}

/** The sums over every file of an lcov report. */
export interface CoverageTotals {
  files: number;
  lines: CoverageCount;
  branches: CoverageCount;
  functions: CoverageCount;
}

const LCOV_KEYS: Record<string, [CoverageMetric, keyof CoverageCount]> = {
  LF: ["lines", "total"],
  LH: ["lines", "covered"],
  BRF: ["branches", "total"],
  BRH: ["branches", "covered"],
  FNF: ["functions", "total"],
  FNH: ["functions", "covered"],
};

/** Sums an lcov report's per-file counts. Throws on a malformed count, naming its line. */
export function lcovTotals(text: string): CoverageTotals {
  const totals: CoverageTotals = {
    files: 0,
    lines: { covered: 0, total: 0 },
    branches: { covered: 0, total: 0 },
    functions: { covered: 0, total: 0 },
  };
  const lines = text.split(/\r?\n/);
  lines.forEach((line, i) => {
    const colon = line.indexOf(":");
    const key = colon === -1 ? line : line.slice(0, colon);
    if (key === "SF") totals.files++;
    const target = LCOV_KEYS[key];
    if (target === undefined) return;
    const value = line.slice(colon + 1);
    if (!/^\d+$/.test(value)) throw new Error(`lcov line ${i + 1}: ${key} is not a count: ${JSON.stringify(value)}`);
    totals[target[0]][target[1]] += Number(value);
  });
  return totals;
}

/** One metric against its threshold. */
export interface CoverageVerdict {
  metric: CoverageMetric;
  percent: number;
  min: number;
  ok: boolean;
}

/**
 * Each metric against its minimum. Compared on the exact counts (`covered * 100 >= min *
 * total`), so 97.00% passes 97 whatever the floating-point rounding of the percentage. A
 * metric with nothing to count is 100%.
 */
export function judgeCoverage(totals: CoverageTotals, thresholds: CoverageFigures = COVERAGE_THRESHOLDS): CoverageVerdict[] {
  return COVERAGE_METRICS.map((metric) => {
    const { covered, total } = totals[metric];
    const min = thresholds[metric];
    return { metric, percent: total === 0 ? 100 : (covered * 100) / total, min, ok: covered * 100 >= min * total };
  });
}

/**
 * The gate's printout: one line per metric, then the verdict. A report with no file in it
 * fails: the tests then loaded nothing from src/, which no threshold should pass.
 */
export function coverageReport(totals: CoverageTotals, thresholds: CoverageFigures = COVERAGE_THRESHOLDS): { ok: boolean; lines: string[] } {
  if (totals.files === 0) {
    return { ok: false, lines: ["coverage: the report has no file of src/ in it; were the tests run with coverage of src/?"] };
  }
  const verdicts = judgeCoverage(totals, thresholds);
  const out = [`coverage of src/ (${totals.files} files):`];
  for (const v of verdicts) {
    const { covered, total } = totals[v.metric];
    const mark = v.ok ? "ok" : `BELOW the minimum of ${v.min}%`;
    // Truncated, not rounded: 96.999% must not print as the 97% it fails to reach.
    const shown = (total === 0 ? 100 : Math.floor((covered * 10_000) / total) / 100).toFixed(2);
    out.push(`  ${v.metric.padEnd(9)} ${shown.padStart(6)}%  (${covered}/${total}; min ${v.min}%)  ${mark}`);
  }
  const failed = verdicts.filter((v) => !v.ok).map((v) => v.metric);
  out.push(
    failed.length === 0
      ? "coverage: ok"
      : `coverage: ${failed.join(", ")} below the minimum; cover the new code with tests (scripts/coverage.ts has the minimums, which only go up)`,
  );
  return { ok: failed.length === 0, lines: out };
}

/**
 * The preload that keeps one child's cut-short profile from voiding the report
 * (scripts/coverage-children.ts), as an absolute URL: runs start in copies and scratch folders.
 */
export const COVERAGE_CHILDREN_GUARD = new URL("./coverage-children.ts", import.meta.url).href;

/** The `node --test` options that measure src/ and write an lcov report to `lcovPath`. */
export function coverageArgs(lcovPath: string): string[] {
  return [
    "--import",
    COVERAGE_CHILDREN_GUARD,
    "--experimental-test-coverage",
    "--test-coverage-include=src/**",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=lcov",
    `--test-reporter-destination=${lcovPath}`,
  ];
}

/**
 * Reads the lcov report of a test run and applies the gate. A missing report (the run died
 * first) fails, and so does a run whose tests failed, whatever its figures.
 */
export async function gateLcovFile(
  lcovPath: string,
  testsPassed: boolean,
  thresholds: CoverageFigures = COVERAGE_THRESHOLDS,
): Promise<{ ok: boolean; lines: string[] }> {
  let text: string;
  try {
    text = await readFile(lcovPath, "utf8");
  } catch {
    return { ok: false, lines: [`coverage: no report at ${lcovPath} (the test run ended before writing it)`] };
  }
  const report = coverageReport(lcovTotals(text), thresholds);
  if (testsPassed) return report;
  return { ok: false, lines: [...report.lines, "coverage: a test failed, so these figures do not count"] };
}

async function main(): Promise<void> {
  const version = matrixNodeVersion(REPO_ROOT, COVERAGE_NODE_MAJOR);
  const node = matrixNode(REPO_ROOT, COVERAGE_NODE_MAJOR);
  const dir = await mkdtemp(join(tmpdir(), "mcp-bridge-coverage-"));
  try {
    const lcov = join(dir, "lcov.info");
    const leg: Leg = {
      label: `node ${version} (native, coverage)`,
      command: node,
      args: [...coverageArgs(lcov), ...nativeTestArgs(await testFiles(REPO_ROOT))],
      env: nativeEnv(node, process.env),
      copy: false,
    };
    const result = await runLeg(leg, { root: REPO_ROOT });
    console.log(`\n${leg.label}: ${result.ok ? "passed" : "FAILED"} in ${formatDuration(result.durationMs)}`);
    const gate = await gateLcovFile(lcov, result.ok);
    for (const line of gate.lines) console.log(line);
    if (!gate.ok) process.exitCode = 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const invokedAs = process.argv[1];
if (invokedAs !== undefined && resolve(invokedAs) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
