/**
 * The coverage gate: summing an lcov report, the thresholds at their exact edges, the printout,
 * and agreement with the "all files" row Node itself prints for a real coverage run.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { after, describe, test } from "node:test";
import { nativeEnv } from "../../scripts/ci-legs.ts";
import { loaderArgs } from "../../src/util/node-command.ts";
import { COVERAGE_THRESHOLDS, coverageArgs, coverageReport, gateLcovFile, judgeCoverage, lcovTotals } from "../../scripts/coverage.ts";
import type { CoverageTotals } from "../../scripts/coverage.ts";

const temps: string[] = [];
after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

/** Two files in the shape Node's lcov reporter writes. */
const LCOV = [
  "TN:",
  "SF:src/a.ts",
  "FN:1,a",
  "FNDA:1,a",
  "FNF:3",
  "FNH:2",
  "BRDA:1,0,0,1",
  "BRF:4",
  "BRH:3",
  "DA:1,1",
  "LH:90",
  "LF:100",
  "end_of_record",
  "TN:",
  "SF:src/b.ts",
  "FNF:7",
  "FNH:7",
  "BRF:6",
  "BRH:6",
  "LH:50",
  "LF:50",
  "end_of_record",
  "",
].join("\n");

function totals(lines: [number, number], branches: [number, number], functions: [number, number]): CoverageTotals {
  const count = ([covered, total]: [number, number]) => ({ covered, total });
  return { files: 1, lines: count(lines), branches: count(branches), functions: count(functions) };
}

describe("lcovTotals", () => {
  test("sums each file's found and hit counts", () => {
    assert.deepEqual(lcovTotals(LCOV), {
      files: 2,
      lines: { covered: 140, total: 150 },
      branches: { covered: 9, total: 10 },
      functions: { covered: 9, total: 10 },
    });
  });

  test("reads CRLF reports and an empty report", () => {
    assert.deepEqual(lcovTotals(LCOV.replaceAll("\n", "\r\n")).lines, { covered: 140, total: 150 });
    assert.deepEqual(lcovTotals(""), { files: 0, lines: { covered: 0, total: 0 }, branches: { covered: 0, total: 0 }, functions: { covered: 0, total: 0 } });
  });

  test("a count that is not a number is an error naming its line", () => {
    assert.throws(() => lcovTotals("SF:src/a.ts\nLF:12\nLH:x\n"), { message: 'lcov line 3: LH is not a count: "x"' });
  });
});

describe("the thresholds", () => {
  test("are 97 / 90 / 94 (lines / branches / functions)", () => {
    assert.deepEqual(COVERAGE_THRESHOLDS, { lines: 97, branches: 90, functions: 94 });
  });

  test("exactly at the minimum passes, one count below fails", () => {
    const at = judgeCoverage(totals([970, 1000], [900, 1000], [94, 100]));
    assert.deepEqual(at.map((v) => [v.metric, v.ok]), [["lines", true], ["branches", true], ["functions", true]]);
    const below = judgeCoverage(totals([969, 1000], [899, 1000], [93, 100]));
    assert.deepEqual(below.map((v) => [v.metric, v.ok]), [["lines", false], ["branches", false], ["functions", false]]);
  });

  test("a hair below the minimum fails and is not printed as the minimum", () => {
    // 2909 of 2999 is 96.9990%, which rounding would print as 97.00.
    const report = coverageReport(totals([2909, 2999], [1, 1], [1, 1]));
    assert.equal(report.ok, false);
    assert.equal(report.lines[1], "  lines      96.99%  (2909/2999; min 97%)  BELOW the minimum of 97%");
  });

  test("a metric with nothing to count is 100%", () => {
    assert.deepEqual(judgeCoverage(totals([1, 1], [0, 0], [1, 1]))[1], { metric: "branches", percent: 100, min: 90, ok: true });
  });
});

describe("coverageReport", () => {
  test("prints each metric with its counts and minimum, and passes", () => {
    assert.deepEqual(coverageReport(totals([981, 1000], [923, 1000], [953, 1000])), {
      ok: true,
      lines: [
        "coverage of src/ (1 files):",
        "  lines      98.10%  (981/1000; min 97%)  ok",
        "  branches   92.30%  (923/1000; min 90%)  ok",
        "  functions  95.30%  (953/1000; min 94%)  ok",
        "coverage: ok",
      ],
    });
  });

  test("names what is below its minimum and fails", () => {
    const report = coverageReport(totals([981, 1000], [899, 1000], [939, 1000]));
    assert.equal(report.ok, false);
    assert.deepEqual(report.lines.slice(2), [
      "  branches   89.90%  (899/1000; min 90%)  BELOW the minimum of 90%",
      "  functions  93.90%  (939/1000; min 94%)  BELOW the minimum of 94%",
      "coverage: branches, functions below the minimum; cover the new code with tests (scripts/coverage.ts has the minimums, which only go up)",
    ]);
  });

  test("a report without files fails instead of passing on nothing", () => {
    assert.deepEqual(coverageReport(lcovTotals("")), {
      ok: false,
      lines: ["coverage: the report has no file of src/ in it; were the tests run with coverage of src/?"],
    });
  });

  test("a missing report fails, saying the run ended first", async () => {
    const dir = await mkdtemp(join(tmpdir(), "coverage-missing-"));
    temps.push(dir);
    const missing = join(dir, "lcov.info");
    assert.deepEqual(await gateLcovFile(missing, true), { ok: false, lines: [`coverage: no report at ${missing} (the test run ended before writing it)`] });
  });

  test("figures above every minimum fail when a test failed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "coverage-failed-"));
    temps.push(dir);
    await writeFile(join(dir, "lcov.info"), "SF:src/a.ts\nLF:10\nLH:10\nBRF:1\nBRH:1\nFNF:1\nFNH:1\nend_of_record\n");
    assert.deepEqual(await gateLcovFile(join(dir, "lcov.info"), true), coverageReport(totals([10, 10], [1, 1], [1, 1])));
    const failed = await gateLcovFile(join(dir, "lcov.info"), false);
    assert.deepEqual([failed.ok, failed.lines.at(-1)], [false, "coverage: a test failed, so these figures do not count"]);
  });
});

/** Writes `files` into a fresh scratch folder; resolves with its path. */
async function scratchProject(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "coverage-real-"));
  temps.push(root);
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  return root;
}

const major = Number(process.versions.node.split(".")[0]);

/**
 * Runs `node --test <testFile>` in `root` with the gate's options writing `root/lcov.info`.
 * Node 20 (the npm test leg) has no --test-coverage-include, and loads the guard (a .ts module)
 * through tsx; everything else is the gate's own. Resolves with the exit code and output.
 */
async function coverageRun(root: string, testFile: string, options: { guard: boolean }): Promise<{ code: number; out: string }> {
  let args = coverageArgs(join(root, "lcov.info")).filter((a) => major >= 22 || !a.startsWith("--test-coverage-include="));
  if (!options.guard) args = args.filter((a, i) => a !== "--import" && args[i - 1] !== "--import");
  const loader = major >= 22 || !options.guard ? [] : loaderArgs("guard.ts");
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...loader, ...args, "--test", testFile], {
      cwd: root,
      env: nativeEnv(process.execPath, process.env),
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

/** The files an lcov report measured. */
async function measuredFiles(root: string): Promise<string[]> {
  return [...(await readFile(join(root, "lcov.info"), "utf8")).matchAll(/^SF:(.*)$/gm)].map((m) => m[1]!);
}

test("a real coverage run: our totals are the 'all files' row Node prints", async () => {
  const root = await scratchProject({
    "src/m.mjs": "export function a(x) {\n  if (x) return 1;\n  return 2;\n}\nexport function b() {\n  return 3;\n}\n",
    "lib/other.mjs": "export const other = (x) => (x ? 1 : 2);\n",
    "test/m.test.mjs": 'import test from "node:test";\nimport { a } from "../src/m.mjs";\nimport { other } from "../lib/other.mjs";\ntest("t", () => { a(1); other(0); });\n',
  });
  const { code, out } = await coverageRun(root, "test/m.test.mjs", { guard: true });
  assert.equal(code, 0, out);
  const row = /all files\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)/.exec(out);
  assert.ok(row !== null, `no "all files" row in:\n${out}`);
  const sums = lcovTotals(await readFile(join(root, "lcov.info"), "utf8"));
  const ours = (["lines", "branches", "functions"] as const).map((m) => ((sums[m].covered * 100) / sums[m].total).toFixed(2));
  assert.deepEqual(ours, [row[1], row[2], row[3]]);
  const measured = await measuredFiles(root);
  assert.ok(measured.includes("src/m.mjs"), `src/m.mjs measured: ${measured.join(", ")}`);
  if (major >= 22) assert.deepEqual(measured, ["src/m.mjs"]);
});

test("a child stopped while it writes its profile costs its own figures, not the whole report", async () => {
  // The child leaves what a server killed in the middle of writing its profile leaves: an empty
  // file in the coverage directory it inherited. The second child is an ordinary one, and its
  // code (src/child.mjs) must still be measured.
  const root = await scratchProject({
    "src/m.mjs": "export const m = () => 1;\n",
    "src/child.mjs": "export const ran = 1;\n",
    "test/m.test.mjs": [
      'import test from "node:test";',
      'import { execFileSync } from "node:child_process";',
      'import { m } from "../src/m.mjs";',
      'const cut = "require(\\"node:fs\\").writeFileSync(process.env.NODE_V8_COVERAGE + \\"/coverage-1-1000000000000-0.json\\", \\"\\")";',
      'test("t", () => {',
      "  m();",
      '  execFileSync(process.execPath, ["-e", cut]);',
      '  execFileSync(process.execPath, ["--input-type=module", "-e", "await import(\\"./src/child.mjs\\")"]);',
      "});",
      "",
    ].join("\n"),
  });
  const unguarded = await coverageRun(root, "test/m.test.mjs", { guard: false });
  assert.equal(unguarded.code, 1, "without the guard Node voids the report");
  assert.match(unguarded.out, /Could not report code coverage/);

  const guarded = await coverageRun(root, "test/m.test.mjs", { guard: true });
  assert.equal(guarded.code, 0, guarded.out);
  assert.match(guarded.out, /coverage: dropped 1 unreadable profile\(s\)/);
  assert.deepEqual((await measuredFiles(root)).filter((f) => f.startsWith("src/")).sort(), ["src/child.mjs", "src/m.mjs"]);
});
