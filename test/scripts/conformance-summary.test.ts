/**
 * What `npm run conformance` prints (scripts/conformance-summary.ts): the figures per run and,
 * for the lead, the exact lines to add to or remove from the expected-failures file.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { formatEntry, parseExpectedFailures, type ExpectedFailure } from "../../scripts/conformance-expected.ts";
import { judgeRun, type RunOutcome } from "../../scripts/conformance-verdict.ts";
import {
  countByReason,
  formatClientErrors,
  formatExpectedByReason,
  formatLeadActions,
  formatRunTable,
  formatWallTime,
  REASON_TO_WRITE,
  runStats,
} from "../../scripts/conformance-summary.ts";

const RUN = "0.2/client/2025-11-25";

const OUTCOME: RunOutcome = {
  run: RUN,
  scenarios: ["tools_call", "auth/basic-cimd", "skipped-only", "missing"],
  results: new Map([
    ["tools_call", [{ id: "tool-add-numbers", status: "SUCCESS" as const }]],
    [
      "auth/basic-cimd",
      [
        { id: "cimd-client-id-used", status: "FAILURE" as const, errorMessage: "no\nauthorization request" },
        { id: "x", status: "SUCCESS" as const },
      ],
    ],
    ["skipped-only", [{ id: "s", status: "SKIPPED" as const }]],
  ]),
};

const LISTED: ExpectedFailure = { run: RUN, scenario: "auth/basic-cimd", check: "cimd-client-id-used", reason: "no OAuth" };
const STALE: ExpectedFailure = { run: RUN, scenario: "tools_call", check: "tool-add-numbers", reason: "was broken" };

test("run figures count scenarios without a failure of their own, and checks by status", () => {
  const s = runStats(OUTCOME);
  assert.equal(s.scenarios, 4);
  assert.equal(s.passedScenarios, 1, "only tools_call: skipped-only and missing never pass");
  assert.deepEqual([s.required, s.passedRequired], [4, 1], "without a required list, every listed scenario is required");
  const scored = runStats({ ...OUTCOME, required: ["auth/basic-cimd", "missing"] });
  assert.deepEqual([scored.required, scored.passedRequired, scored.passedScenarios], [2, 0, 1]);
  assert.deepEqual(s.checks, { SUCCESS: 2, FAILURE: 1, WARNING: 0, SKIPPED: 1, INFO: 0 });
});

test("the lines to add are entries in the file's own format, ready to paste with a real reason", () => {
  const verdict = judgeRun(OUTCOME, [LISTED, STALE]);
  const text = formatLeadActions([verdict], "scripts/conformance-expected-failures.json");
  const added = [...text.matchAll(/^    (\{ "run".*\}),$/gm)].map((m) => m[1] as string);
  const entries = parseExpectedFailures(JSON.stringify({ failures: added.map((l) => JSON.parse(l)) }), "printed");
  assert.deepEqual(
    entries.map((e) => [e.scenario, e.check, e.reason]),
    [
      ["skipped-only", "(no passing check)", REASON_TO_WRITE],
      ["missing", "(no result)", REASON_TO_WRITE],
    ],
  );
  assert.ok(text.includes(`    ${formatEntry(STALE)}  <- now passes`), text);
  assert.ok(!text.includes(formatEntry(LISTED)), "a listed failure that still fails needs no action");
  assert.ok(text.includes("^ FAILURE: all 1 checks skipped or informational"), text);
});

test("nothing to do prints nothing", () => {
  const clean: RunOutcome = { run: RUN, scenarios: ["tools_call"], results: new Map([["tools_call", [{ id: "t", status: "SUCCESS" as const }]]]) };
  assert.equal(formatLeadActions([judgeRun(clean, [])], "f"), "");
});

test("fatal problems are printed with their run", () => {
  const v = judgeRun({ ...OUTCOME, fatal: ["the suite did not finish in 900 s"] }, []);
  assert.match(formatLeadActions([v], "f"), /^FATAL 0\.2\/client\/2025-11-25: the suite did not finish in 900 s$/m);
});

test("expected failures met are grouped by reason, most frequent first", () => {
  const e = (check: string, reason: string): ExpectedFailure => ({ run: RUN, scenario: "s", check, reason });
  assert.deepEqual(countByReason([e("a", "r1"), e("b", "r2"), e("c", "r2")]), [
    ["r2", 2],
    ["r1", 1],
  ]);
  const verdict = judgeRun(OUTCOME, [LISTED]);
  assert.equal(formatExpectedByReason([verdict]), `${RUN}: 1 expected failure(s)\n     1  no OAuth`);
});

test("the run table has one row per run with its verdict", () => {
  const table = formatRunTable([{ outcome: OUTCOME, verdict: judgeRun(OUTCOME, [LISTED]), wallMs: 83_400 }]);
  const row = table.split("\n")[2] ?? "";
  assert.deepEqual(row.split(/\s{2,}/), [RUN, "4", "1", "4", "1", "2", "1", "0", "1", "1", "2", "0", "1 min 23 s", "FAIL"]);
});

test("wall times read as seconds, or minutes and seconds", () => {
  assert.equal(formatWallTime(12_345), "12.3 s");
  assert.equal(formatWallTime(125_000), "2 min 05 s");
});

test("a failing scenario's own error lines are shown from the shared log; passing ones are not", () => {
  const dir = mkdtempSync(join(tmpdir(), "conf-log-"));
  try {
    const log = [
      "Starting scenario: auth/basic-cimd",
      "Stderr:",
      "conformance client [tools_call]: BridgeError: not this one",
      "Stderr:",
      "conformance client [auth/basic-cimd]: OAuthError: the token endpoint answered 500",
      "    at tokenRequest (src/auth/token-request.ts:1:1)",
    ].join("\n");
    writeFileSync(join(dir, "0.2-client.log"), log);
    writeFileSync(join(dir, "notes.txt"), "conformance client [auth/basic-cimd]: not a log");
    const verdict = judgeRun(OUTCOME, []);
    const shown = formatClientErrors([verdict], dir);
    assert.match(shown, /\[auth\/basic-cimd\]: OAuthError: the token endpoint answered 500\n {4} {4}at tokenRequest/);
    assert.doesNotMatch(shown, /not this one|not a log/);
    assert.equal(formatClientErrors([{ ...verdict, unexpected: [] }], dir), "");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
