/**
 * Judging a conformance run against the expected failures (scripts/conformance-verdict.ts):
 * the list can only shrink, and a scenario never passes on skipped checks alone.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Check } from "../../scripts/conformance-results.ts";
import type { ExpectedFailure } from "../../scripts/conformance-expected.ts";
import { judgeRun, NO_PASSING_CHECK, NO_RESULT, scenarioFailures, worstById, type RunOutcome } from "../../scripts/conformance-verdict.ts";

const RUN = "0.2/server/2026-07-28";

function outcome(results: Record<string, Check[]>, scenarios = Object.keys(results), extra: Partial<RunOutcome> = {}): RunOutcome {
  return { run: RUN, scenarios, results: new Map(Object.entries(results)), ...extra };
}

function entry(scenario: string, check: string, run = RUN): ExpectedFailure {
  return { run, scenario, check, reason: "because" };
}

test("a check id reused by several checks takes the worst of their statuses", () => {
  const worst = worstById([
    { id: "headers", status: "SUCCESS" },
    { id: "headers", status: "FAILURE", errorMessage: "no Mcp-Name" },
    { id: "headers", status: "SKIPPED" },
    { id: "other", status: "SKIPPED" },
    { id: "other", status: "WARNING" },
  ]);
  assert.equal(worst.get("headers")?.status, "FAILURE");
  assert.equal(worst.get("headers")?.errorMessage, "no Mcp-Name");
  assert.equal(worst.get("other")?.status, "WARNING");
});

test("failures and warnings both count; success, skipped and info do not", () => {
  const failures = scenarioFailures(RUN, "s", [
    { id: "a", status: "SUCCESS" },
    { id: "b", status: "FAILURE", errorMessage: "bad" },
    { id: "c", status: "WARNING", description: "meh" },
    { id: "d", status: "SKIPPED" },
    { id: "e", status: "INFO" },
  ]);
  assert.deepEqual(
    failures.map((f) => [f.check, f.status, f.message]),
    [
      ["b", "FAILURE", "bad"],
      ["c", "WARNING", "meh"],
    ],
  );
});

test("a scenario whose checks are all skipped (or none at all) never counts as passed", () => {
  const skipped = scenarioFailures(RUN, "s", [
    { id: "a", status: "SKIPPED" },
    { id: "b", status: "INFO" },
  ]);
  assert.deepEqual(skipped.map((f) => f.check), [NO_PASSING_CHECK]);
  assert.deepEqual(scenarioFailures(RUN, "s", []).map((f) => f.check), [NO_PASSING_CHECK]);
  assert.deepEqual(scenarioFailures(RUN, "s", [{ id: "a", status: "SKIPPED" }, { id: "b", status: "SUCCESS" }]), []);
});

test("a listed scenario without a result is a failure of its own", () => {
  const v = judgeRun(outcome({ ping: [{ id: "ping", status: "SUCCESS" }] }, ["ping", "tools-list"]), []);
  assert.deepEqual(v.unexpected.map((f) => [f.scenario, f.check]), [["tools-list", NO_RESULT]]);
  assert.equal(v.ok, false);
});

test("a run whose failures are all listed passes, and entries of other runs are ignored", () => {
  const run = outcome({ ping: [{ id: "ping", status: "FAILURE" }], list: [{ id: "list", status: "SUCCESS" }] });
  const v = judgeRun(run, [entry("ping", "ping"), entry("ping", "ping", "0.1.16/server")]);
  assert.equal(v.ok, true);
  assert.deepEqual(v.matched, [entry("ping", "ping")]);
  assert.deepEqual(v.unexpected, []);
  assert.deepEqual(v.toRemove, []);
});

test("a failure not listed fails the run", () => {
  const v = judgeRun(outcome({ ping: [{ id: "ping", status: "WARNING", errorMessage: "slow" }] }), []);
  assert.equal(v.ok, false);
  assert.deepEqual(v.unexpected, [{ run: RUN, scenario: "ping", check: "ping", status: "WARNING", message: "slow" }]);
});

test("a listed failure that now passes fails the run, so the list can only shrink", () => {
  const v = judgeRun(outcome({ ping: [{ id: "ping", status: "SUCCESS" }] }), [entry("ping", "ping")]);
  assert.equal(v.ok, false);
  assert.deepEqual(v.toRemove, [{ entry: entry("ping", "ping"), why: "now passes" }]);
});

test("entries for a check or a scenario the run no longer has are to remove too", () => {
  const v = judgeRun(outcome({ ping: [{ id: "ping", status: "SUCCESS" }] }), [entry("ping", "renamed-check"), entry("gone", "x")]);
  assert.deepEqual(
    v.toRemove.map((r) => [r.entry.scenario, r.why]),
    [
      ["ping", "the scenario no longer reports this check"],
      ["gone", "the run no longer has this scenario"],
    ],
  );
});

test("harness-made failures are listed and judged like the suite's", () => {
  const skipped = outcome({ s: [{ id: "a", status: "SKIPPED" }] });
  assert.equal(judgeRun(skipped, [entry("s", NO_PASSING_CHECK)]).ok, true);
  const nowPassing = outcome({ s: [{ id: "a", status: "SUCCESS" }] });
  assert.deepEqual(judgeRun(nowPassing, [entry("s", NO_PASSING_CHECK)]).toRemove.map((r) => r.why), ["now passes"]);
  const extra = outcome({ s: [{ id: "a", status: "SUCCESS" }] }, ["s"], {
    extraFailures: [{ run: RUN, scenario: "s", check: "(client exit)", status: "FAILURE", message: "exit 1" }],
  });
  assert.deepEqual(judgeRun(extra, []).unexpected.map((f) => f.check), ["(client exit)"]);
  assert.equal(judgeRun(extra, [entry("s", "(client exit)")]).ok, true);
});

test("entries of a scenario that wrote no result are kept unjudged, and the missing result still fails", () => {
  const v = judgeRun(outcome({}, ["ping"]), [entry("ping", "ping")]);
  assert.deepEqual(v.unjudged, [entry("ping", "ping")]);
  assert.deepEqual(v.toRemove, []);
  assert.deepEqual(v.unexpected.map((f) => f.check), [NO_RESULT]);
});

test("a fatal problem fails the run whatever the list says", () => {
  const v = judgeRun(outcome({ ping: [{ id: "ping", status: "SUCCESS" }] }, ["ping"], { fatal: ["timed out"] }), []);
  assert.equal(v.ok, false);
  assert.deepEqual(v.fatal, ["timed out"]);
});

test("a result for a scenario the suite did not list is judged too", () => {
  const v = judgeRun(outcome({ extra: [{ id: "x", status: "FAILURE" }] }, []), []);
  assert.deepEqual(v.unexpected.map((f) => f.scenario), ["extra"]);
});
