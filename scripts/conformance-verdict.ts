/**
 * Judges one conformance run against the expected failures (docs/decisions.md 47, 99):
 * the run passes only when every failure it shows is listed and every listed failure still
 * fails, so the list can only shrink.
 *
 * A failure is a (scenario, check id) whose worst status is FAILURE or WARNING: the suite
 * reuses one id for several checks of a scenario (one per method, say), and one bad check
 * makes the id fail. Two failures are the harness's own, scenario-wide: the suite wrote no
 * result for a scenario it runs (`(no result)`), and a scenario without one passing check,
 * every check skipped, say (`(no passing check)`), which never counts as passed.
 */
import type { Check, CheckStatus } from "./conformance-results.ts";
import { entryKey, type ExpectedFailure } from "./conformance-expected.ts";

/** Check id of a scenario the suite lists but wrote no `checks.json` for. */
export const NO_RESULT = "(no result)";
/** Check id of a scenario with results none of which passed (all skipped or informational). */
export const NO_PASSING_CHECK = "(no passing check)";

/** One failing (scenario, check id) of a run. */
export interface Failure {
  run: string;
  scenario: string;
  check: string;
  status: "FAILURE" | "WARNING";
  message: string;
}

/** What one run produced, as the verdict reads it. */
export interface RunOutcome {
  run: string;
  /** The scenarios the suite says this run runs; a result for another one is judged too. */
  scenarios: readonly string[];
  /** Those the suite scores (a requirement set runs others too); all of `scenarios` when absent. Figures only. */
  required?: readonly string[];
  results: ReadonlyMap<string, readonly Check[]>;
  /** Failures found outside `checks.json` (the 0.1.16 client's exit code, say). */
  extraFailures?: readonly Failure[];
  /** What went wrong with the run itself (a timeout, a crash); no entry can excuse these. */
  fatal?: readonly string[];
}

export interface Verdict {
  run: string;
  /** Failures no entry lists: add them (with a reason) or fix them. */
  unexpected: Failure[];
  /** Listed failures that failed again. */
  matched: ExpectedFailure[];
  /** Listed failures that no longer fail: remove them. */
  toRemove: { entry: ExpectedFailure; why: string }[];
  /** Listed failures of a scenario that wrote no result this time: neither confirmed nor refuted. */
  unjudged: ExpectedFailure[];
  fatal: string[];
  ok: boolean;
}

const SEVERITY: Record<CheckStatus, number> = { FAILURE: 4, WARNING: 3, SUCCESS: 2, INFO: 1, SKIPPED: 0 };

/** Each check id's worst check (first one on a tie), in first-seen order. */
export function worstById(checks: readonly Check[]): Map<string, Check> {
  const out = new Map<string, Check>();
  for (const c of checks) {
    const seen = out.get(c.id);
    if (seen === undefined || SEVERITY[c.status] > SEVERITY[seen.status]) out.set(c.id, c);
  }
  return out;
}

/** The failures of one scenario (`checks` undefined: the suite wrote no result). */
export function scenarioFailures(run: string, scenario: string, checks: readonly Check[] | undefined): Failure[] {
  if (checks === undefined) {
    return [{ run, scenario, check: NO_RESULT, status: "FAILURE", message: "the suite wrote no checks.json for this scenario" }];
  }
  const failures: Failure[] = [];
  let passed = false;
  for (const c of worstById(checks).values()) {
    if (c.status === "SUCCESS") passed = true;
    if (c.status === "FAILURE" || c.status === "WARNING") {
      failures.push({ run, scenario, check: c.id, status: c.status, message: c.errorMessage ?? c.description ?? "" });
    }
  }
  if (failures.length === 0 && !passed) {
    const message = checks.length === 0 ? "the scenario reported no check" : `all ${checks.length} checks skipped or informational`;
    failures.push({ run, scenario, check: NO_PASSING_CHECK, status: "FAILURE", message });
  }
  return failures;
}

/** Every scenario of a run, listed ones first, then any other the suite wrote results for. */
export function scenariosOf(outcome: RunOutcome): string[] {
  const all = [...outcome.scenarios];
  for (const s of outcome.results.keys()) if (!all.includes(s)) all.push(s);
  return all;
}

/** Every failure of a run. */
export function runFailures(outcome: RunOutcome): Failure[] {
  const failures = scenariosOf(outcome).flatMap((s) => scenarioFailures(outcome.run, s, outcome.results.get(s)));
  return [...failures, ...(outcome.extraFailures ?? [])];
}

/** Judges a run; `expected` may hold entries of other runs (they are ignored here). */
export function judgeRun(outcome: RunOutcome, expected: readonly ExpectedFailure[]): Verdict {
  const failures = runFailures(outcome);
  const failing = new Set(failures.map(entryKey));
  const entries = expected.filter((e) => e.run === outcome.run);
  const listed = new Set(entries.map(entryKey));
  const known = new Set(scenariosOf(outcome));

  const verdict: Verdict = {
    run: outcome.run,
    unexpected: failures.filter((f) => !listed.has(entryKey(f))),
    matched: [],
    toRemove: [],
    unjudged: [],
    fatal: [...(outcome.fatal ?? [])],
    ok: false,
  };
  for (const entry of entries) {
    if (failing.has(entryKey(entry))) verdict.matched.push(entry);
    else if (!known.has(entry.scenario)) verdict.toRemove.push({ entry, why: "the run no longer has this scenario" });
    else if (!outcome.results.has(entry.scenario) && entry.check !== NO_RESULT) verdict.unjudged.push(entry);
    else if (isHarnessCheck(entry.check) || outcome.results.get(entry.scenario)?.some((c) => c.id === entry.check) === true) {
      verdict.toRemove.push({ entry, why: "now passes" });
    } else verdict.toRemove.push({ entry, why: "the scenario no longer reports this check" });
  }
  verdict.ok = verdict.unexpected.length === 0 && verdict.toRemove.length === 0 && verdict.fatal.length === 0;
  return verdict;
}

/** Check ids the harness makes (the two above, `(client exit)`, ...) are in parentheses; the suite's never are. */
function isHarnessCheck(id: string): boolean {
  return id.startsWith("(");
}
