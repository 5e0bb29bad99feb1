/**
 * scripts/conformance-expected-failures.json: the conformance failures we know of, each with
 * its reason (docs/decisions.md 47, 99). One entry names a run, a scenario and a check id.
 * This module reads and writes the file; the comparison with a run is conformance-verdict.ts.
 *
 * The file is kept in one canonical form, one entry per line in a fixed order, so that what
 * the harness prints for the lead ("add these lines", "remove these lines") is exactly what
 * goes in or comes out of it.
 */
import { readFileSync } from "node:fs";
import { BridgeError } from "../src/jsonrpc/errors.ts";

/** One expected failure. `check` is a check id of the suite, or one of the harness's own. */
export interface ExpectedFailure {
  run: string;
  scenario: string;
  check: string;
  reason: string;
}

const ENTRY_KEYS = ["run", "scenario", "check", "reason"] as const;

/** What the file says about itself, kept as its first member. */
export const FILE_COMMENT =
  "Expected conformance failures (docs/decisions.md 47, 99). npm run conformance fails on a failure not listed here " +
  "and on a listed one that passes; it prints the lines to add or remove.";

/** The identity of an entry (and of a failure): run, scenario and check. */
export function entryKey(e: { run: string; scenario: string; check: string }): string {
  return JSON.stringify([e.run, e.scenario, e.check]);
}

function invalid(file: string, what: string, details: Record<string, unknown> = {}): BridgeError {
  return new BridgeError("INVALID_MESSAGE", `${file}: ${what}`, { details: { file, ...details } });
}

/** Parses the file's text; `file` only names it in errors. Strict: unknown keys and duplicates are errors. */
export function parseExpectedFailures(text: string, file: string): ExpectedFailure[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BridgeError("PARSE_ERROR", `${file} is not JSON`, { cause: err, details: { file } });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid(file, "must be an object with a failures array");
  const top = raw as Record<string, unknown>;
  for (const key of Object.keys(top)) {
    if (key !== "$comment" && key !== "failures") throw invalid(file, `unknown member ${JSON.stringify(key)}`, { key });
  }
  if (!Array.isArray(top.failures)) throw invalid(file, "failures must be an array");
  const seen = new Set<string>();
  return top.failures.map((item: unknown, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw invalid(file, `failures[${index}] is not an object`, { index });
    const rec = item as Record<string, unknown>;
    for (const key of Object.keys(rec)) {
      if (!(ENTRY_KEYS as readonly string[]).includes(key)) throw invalid(file, `failures[${index}] has unknown member ${JSON.stringify(key)}`, { index, key });
    }
    for (const key of ENTRY_KEYS) {
      const v = rec[key];
      if (typeof v !== "string" || v.trim() === "") throw invalid(file, `failures[${index}].${key} must be a non-empty string`, { index, key });
    }
    const entry: ExpectedFailure = {
      run: rec.run as string,
      scenario: rec.scenario as string,
      check: rec.check as string,
      reason: rec.reason as string,
    };
    const key = entryKey(entry);
    if (seen.has(key)) throw invalid(file, `failures[${index}] repeats ${key}`, { index });
    seen.add(key);
    return entry;
  });
}

/** Reads and parses the file. */
export function loadExpectedFailures(file: string): ExpectedFailure[] {
  return parseExpectedFailures(readFileSync(file, "utf8"), file);
}

/** Entry order in the file: by run, then scenario, then check. */
export function compareEntries(a: ExpectedFailure, b: ExpectedFailure): number {
  return entryKey(a) < entryKey(b) ? -1 : entryKey(a) > entryKey(b) ? 1 : 0;
}

/** One entry as one line of the file (also how the harness prints it). */
export function formatEntry(e: ExpectedFailure): string {
  const member = (key: keyof ExpectedFailure): string => `"${key}": ${JSON.stringify(e[key])}`;
  return `{ ${member("run")}, ${member("scenario")}, ${member("check")}, ${member("reason")} }`;
}

/** The whole file, canonical: comment first, then the entries sorted, one per line. */
export function formatExpectedFailures(entries: readonly ExpectedFailure[]): string {
  const lines = [...entries].sort(compareEntries).map((e) => `    ${formatEntry(e)}`);
  const body = lines.length === 0 ? "  \"failures\": []" : `  "failures": [\n${lines.join(",\n")}\n  ]`;
  return `{\n  "$comment": ${JSON.stringify(FILE_COMMENT)},\n${body}\n}\n`;
}
