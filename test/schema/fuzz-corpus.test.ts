// The adversarial corpus of scripts/bench/schema-corpus.ts (the benchmark times the same pairs):
// every pair must end, with the outcome the corpus expects and a well-formed result. No timing
// is asserted here; the budget guarantees an end, and the outcomes show what was decided.
import { it } from "node:test";
import assert from "node:assert/strict";
import { compileSchema, MAX_ERRORS } from "../../src/schema/validate.ts";
import { schemaCorpus } from "../../scripts/bench/schema-corpus.ts";

it("every pair of the fuzz corpus ends with the expected outcome", () => {
  const corpus = schemaCorpus();
  assert.ok(corpus.length > 250, `${corpus.length} pairs`);
  const outcomes = new Map<string, number>();
  const wrong: string[] = [];
  for (const c of corpus) {
    const r = compileSchema(c.schema)(c.value);
    const outcome = r.undecided ? "undecided" : r.valid ? "valid" : "invalid";
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    const expected = c.expect === "any" || c.expect === outcome || (c.expect === "decided" && outcome !== "undecided");
    if (!expected) wrong.push(`${c.name}: expected ${c.expect}, got ${outcome} (${JSON.stringify(r.errors[0])})`);
    // Well formed: errors exactly when not valid, one error when undecided, within the cap.
    assert.equal(r.valid, r.errors.length === 0, c.name);
    if (r.undecided) assert.deepEqual([r.valid, r.errors.length, ["budget", "pattern", "patternProperties"].includes(r.errors[0]!.keyword)], [false, 1, true], c.name);
    assert.ok(r.errors.length <= MAX_ERRORS + 1, c.name); // + the note that the error list was cut
  }
  assert.deepEqual(wrong, []);
  // The random pairs exercise all three outcomes.
  for (const o of ["valid", "invalid", "undecided"]) assert.ok((outcomes.get(o) ?? 0) > 0, `some pairs are ${o}`);
});
