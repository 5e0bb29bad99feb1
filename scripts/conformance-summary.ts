/**
 * What `npm run conformance` prints: one line of figures per run, the expected failures it met
 * grouped by reason, and, for the lead, the exact lines to add to or remove from
 * scripts/conformance-expected-failures.json. Pure formatting of data already judged.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { clientErrorMarker } from "../fixtures/clients/conformance.ts";
import type { Check } from "./conformance-results.ts";
import { formatEntry, type ExpectedFailure } from "./conformance-expected.ts";
import { scenarioFailures, scenariosOf, type RunOutcome, type Verdict } from "./conformance-verdict.ts";

/** Formats rows as an aligned text table. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** The figures of one run. */
export interface RunStats {
  scenarios: number;
  /** Scenarios without a single failure of their own (expected or not). */
  passedScenarios: number;
  /** The same two figures for the scenarios the suite scores. */
  required: number;
  passedRequired: number;
  checks: Record<Check["status"], number>;
}

export function runStats(outcome: RunOutcome): RunStats {
  const checks: RunStats["checks"] = { SUCCESS: 0, FAILURE: 0, WARNING: 0, SKIPPED: 0, INFO: 0 };
  let passedScenarios = 0;
  let passedRequired = 0;
  const scenarios = scenariosOf(outcome);
  const required = new Set(outcome.required ?? outcome.scenarios);
  for (const s of scenarios) {
    const results = outcome.results.get(s);
    for (const c of results ?? []) checks[c.status]++;
    if (scenarioFailures(outcome.run, s, results).length > 0) continue;
    passedScenarios++;
    if (required.has(s)) passedRequired++;
  }
  return { scenarios: scenarios.length, passedScenarios, required: required.size, passedRequired, checks };
}

/** Counts entries by reason, most frequent first (ties by reason). */
export function countByReason(entries: readonly ExpectedFailure[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.reason, (counts.get(e.reason) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
}

/** Formats a duration in ms as "12.3 s" or "2 min 05 s". */
export function formatWallTime(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** One row per run: figures, expected failures met, and the verdict. */
export function formatRunTable(runs: readonly { outcome: RunOutcome; verdict: Verdict; wallMs: number }[]): string {
  return formatTable(
    ["run", "scenarios", "passing", "required", "req. passing", "checks ok", "failed", "warnings", "skipped", "expected", "unexpected", "to remove", "wall time", "result"],
    runs.map(({ outcome, verdict, wallMs }) => {
      const s = runStats(outcome);
      return [
        outcome.run,
        String(s.scenarios),
        String(s.passedScenarios),
        String(s.required),
        String(s.passedRequired),
        String(s.checks.SUCCESS),
        String(s.checks.FAILURE),
        String(s.checks.WARNING),
        String(s.checks.SKIPPED),
        String(verdict.matched.length),
        String(verdict.unexpected.length),
        String(verdict.toRemove.length),
        formatWallTime(wallMs),
        verdict.ok ? "PASS" : "FAIL",
      ];
    }),
  );
}

/** The expected failures each run met, grouped by reason. */
export function formatExpectedByReason(verdicts: readonly Verdict[]): string {
  const lines: string[] = [];
  for (const v of verdicts) {
    if (v.matched.length === 0) continue;
    lines.push(`${v.run}: ${v.matched.length} expected failure(s)`);
    for (const [reason, n] of countByReason(v.matched)) lines.push(`  ${String(n).padStart(4)}  ${reason}`);
  }
  return lines.join("\n");
}

/** Placeholder reason of a line to add: the lead writes the real one. */
export const REASON_TO_WRITE = "TODO: why this fails";

/**
 * What the lead must change, as file lines: failures to add (after fixing what can be fixed),
 * entries to remove, and what no entry can excuse. Empty when every run passed.
 */
export function formatLeadActions(verdicts: readonly Verdict[], file: string): string {
  const out: string[] = [];
  const unexpected = verdicts.flatMap((v) => v.unexpected);
  if (unexpected.length > 0) {
    out.push(`Failures not in ${file} (fix them, or add these lines with the real reason):`);
    for (const f of unexpected) {
      out.push(`    ${formatEntry({ run: f.run, scenario: f.scenario, check: f.check, reason: REASON_TO_WRITE })},`);
      out.push(`      ^ ${f.status}: ${f.message.replace(/\s+/g, " ").slice(0, 300)}`);
    }
  }
  const toRemove = verdicts.flatMap((v) => v.toRemove);
  if (toRemove.length > 0) {
    out.push(`Entries of ${file} that no longer fail (remove these lines):`);
    for (const { entry, why } of toRemove) out.push(`    ${formatEntry(entry)}  <- ${why}`);
  }
  const unjudged = verdicts.flatMap((v) => v.unjudged);
  if (unjudged.length > 0) {
    out.push(`Entries not judged this time (their scenario wrote no result; kept):`);
    for (const e of unjudged) out.push(`    ${formatEntry(e)}`);
  }
  for (const v of verdicts) for (const f of v.fatal) out.push(`FATAL ${v.run}: ${f}`);
  return out.join("\n");
}

/**
 * The client's own error lines (its marker and the stack under it) for each scenario that
 * failed unexpectedly, from the run logs in `resultsDir`: the suite's summary says only that a
 * check is missing, the client's stderr says why.
 */
export function formatClientErrors(verdicts: readonly Verdict[], resultsDir: string): string {
  const scenarios = new Set(verdicts.flatMap((v) => v.unexpected.map((f) => f.scenario)));
  if (scenarios.size === 0) return "";
  const logs = readdirSync(resultsDir).filter((f) => f.endsWith(".log")).map((f) => readFileSync(join(resultsDir, f), "utf8").split("\n"));
  const out: string[] = [];
  for (const scenario of scenarios) {
    const marker = clientErrorMarker(scenario);
    for (const lines of logs) {
      const at = lines.findIndex((l) => l.startsWith(marker));
      if (at >= 0) out.push(...lines.slice(at, at + 8).map((l) => `    ${l}`));
    }
  }
  return out.length === 0 ? "" : `The client's errors in the failing scenarios:\n${out.join("\n")}`;
}
