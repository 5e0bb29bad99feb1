/**
 * scripts/conformance-expected-failures.json: its format (scripts/conformance-expected.ts),
 * with real files, and the committed file itself.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import {
  formatEntry,
  formatExpectedFailures,
  loadExpectedFailures,
  parseExpectedFailures,
  type ExpectedFailure,
} from "../../scripts/conformance-expected.ts";
import { EXPECTED_FAILURES_FILE } from "../../scripts/conformance.ts";
import { RUNS } from "../../scripts/conformance-runs.ts";

const temps: string[] = [];
after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

const A: ExpectedFailure = { run: "0.2/server/2026-07-28", scenario: "tools-list", check: "tools-list", reason: "not built yet" };
const B: ExpectedFailure = { run: "0.2/client/2025-11-25", scenario: "auth/metadata-default", check: "token-request", reason: "no OAuth" };

function isCode(code: string): (err: unknown) => boolean {
  return (err) => err instanceof BridgeError && err.code === code;
}

test("the canonical form parses back to the same entries, sorted by run, scenario and check", async () => {
  const dir = await mkdtemp(join(tmpdir(), "conformance-expected-"));
  temps.push(dir);
  const file = join(dir, "expected.json");
  const text = formatExpectedFailures([A, B]);
  await writeFile(file, text);
  assert.deepEqual(loadExpectedFailures(file), [B, A]);
  assert.equal(formatExpectedFailures(loadExpectedFailures(file)), text);
  // One entry per line, exactly as the harness prints lines to add.
  assert.ok(text.includes(`    ${formatEntry(B)},\n    ${formatEntry(A)}\n`));
});

test("an empty list is valid", () => {
  assert.deepEqual(parseExpectedFailures(formatExpectedFailures([]), "f"), []);
});

test("bad files are typed errors naming what is wrong", () => {
  assert.throws(() => parseExpectedFailures("{", "f"), isCode("PARSE_ERROR"));
  assert.throws(() => parseExpectedFailures("[]", "f"), isCode("INVALID_MESSAGE"));
  assert.throws(() => parseExpectedFailures(JSON.stringify({ failures: {} }), "f"), isCode("INVALID_MESSAGE"));
  assert.throws(() => parseExpectedFailures(JSON.stringify({ failures: [], extra: 1 }), "f"), /unknown member "extra"/);
  assert.throws(() => parseExpectedFailures(JSON.stringify({ failures: [{ ...A, note: "x" }] }), "f"), /failures\[0\] has unknown member "note"/);
  assert.throws(() => parseExpectedFailures(JSON.stringify({ failures: [{ ...A, reason: " " }] }), "f"), /failures\[0\]\.reason must be a non-empty string/);
  const { check: _dropped, ...noCheck } = A;
  assert.throws(() => parseExpectedFailures(JSON.stringify({ failures: [noCheck] }), "f"), /failures\[0\]\.check/);
});

test("the same failure listed twice is an error (two reasons for one failure)", () => {
  assert.throws(
    () => parseExpectedFailures(JSON.stringify({ failures: [A, { ...A, reason: "other" }] }), "f"),
    (err: unknown) => isCode("INVALID_MESSAGE")(err) && /failures\[1\] repeats/.test((err as Error).message),
  );
});

test("the committed file parses, is in canonical form and names only runs the harness has", () => {
  const text = readFileSync(EXPECTED_FAILURES_FILE, "utf8");
  const entries = parseExpectedFailures(text, EXPECTED_FAILURES_FILE);
  assert.equal(formatExpectedFailures(entries), text, "rewrite it with formatExpectedFailures (sorted, one entry per line)");
  const runs = new Set(RUNS.map((r) => r.id));
  for (const e of entries) assert.ok(runs.has(e.run), `unknown run ${e.run}`);
});
