/**
 * Section 10 of the benchmark: the JSON Schema validator on untrusted schemas.
 *
 * (a) The fuzz corpus of scripts/bench/schema-corpus.ts: each schema/value pair is compiled
 *     and validated, after one warm-up pass over the whole corpus and a minor garbage
 *     collection before each pair (so a pair does not pay for the garbage of the one before). The figure
 *     is the slowest pair against the target of 50 ms, each pair timed by its best round: the
 *     work it takes, as other processes on a shared machine only ever add to a round. The
 *     slowest median and the slowest single run are shown beside it.
 * (b) Ordinary schemas, the kind tools declare: microseconds per validation of a compiled
 *     validator (median of rounds), to see that bounding the work did not slow the common case.
 * (c) What a step of the budget costs, by kind of work: steps a validation needs (found by
 *     halving `maxSteps`) against its time. The prices in `COST` (src/schema/runtime.ts) are set
 *     so that every kind costs about the same per step; this table is how to check them.
 *
 * Runs in its own plain-node process (scripts/bench/schema-runner.ts, transpiled), started with
 * `--expose-gc`; `--validator FILE --ordinary` there measures another build of the validator
 * (say, an older commit's src/schema/validate.js) on the ordinary schemas alone.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { refChain, schemaCorpus, type Expectation } from "./schema-corpus.ts";

/** The slowest pair may take at most this long. */
export const PAIR_TARGET_MS = 50;

export interface SchemaBenchResult {
  pairs: number;
  rounds: number;
  /** The slowest pair, each pair timed by its best round, ms. */
  maxMs: number;
  /** The slowest pair, each pair timed by the median of its rounds, ms. */
  maxMedianMs: number;
  /** The slowest single run of any pair, ms. */
  maxSingleMs: number;
  pass: boolean;
  slowest: Array<{ name: string; ms: number; outcome: string }>;
  outcomes: Record<string, number>;
  /** Pairs whose outcome is not what the corpus expects (should be none). */
  unexpected: string[];
  ordinary: Array<{ name: string; usPerValidation: number }>;
  /** Nanoseconds per step of the budget, by kind of work (empty for an older validator). */
  stepCost: Array<{ name: string; steps: number; ms: number; nsPerStep: number }>;
}

type Compile = (schema: unknown, options?: { maxSteps?: number }) => (value: unknown) => { valid: boolean; undecided?: boolean };

function outcomeOf(r: { valid: boolean; undecided?: boolean }): "valid" | "invalid" | "undecided" {
  return r.undecided === true ? "undecided" : r.valid ? "valid" : "invalid";
}

function meets(expect: Expectation, got: string): boolean {
  return expect === "any" || expect === got || (expect === "decided" && got !== "undecided");
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Typical tool schemas and values: arguments of a file tool, a search tool, a list result. */
function ordinaryCases(): Array<{ name: string; schema: unknown; value: unknown }> {
  const file = {
    type: "object",
    properties: {
      path: { type: "string", minLength: 1 },
      encoding: { enum: ["utf8", "base64"] },
      offset: { type: "integer", minimum: 0 },
    },
    required: ["path"],
    additionalProperties: false,
  };
  const search = {
    type: "object",
    properties: {
      query: { type: "string", pattern: "^[\\w\\s.-]{1,200}$" },
      limit: { type: "integer", minimum: 1, maximum: 100 },
      tags: { type: "array", items: { type: "string", pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$" }, uniqueItems: true, maxItems: 20 },
    },
    required: ["query"],
  };
  const list = {
    type: "object",
    $defs: {
      Item: {
        type: "object",
        properties: { id: { type: "integer" }, name: { type: "string" }, price: { type: "number", multipleOf: 0.01 }, tags: { type: "array", items: { type: "string" } } },
        required: ["id", "name"],
      },
    },
    properties: { items: { type: "array", items: { $ref: "#/$defs/Item" } } },
  };
  const union = {
    oneOf: [
      { properties: { kind: { const: "a" }, x: { type: "number" } }, required: ["kind", "x"] },
      { properties: { kind: { const: "b" }, y: { type: "string" } }, required: ["kind", "y"] },
    ],
  };
  const items = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item ${i}`, price: i + 0.25, tags: ["a", "b"] }));
  return [
    { name: "file tool arguments", schema: file, value: { path: "/tmp/x.txt", encoding: "utf8", offset: 10 } },
    { name: "file tool arguments, invalid (error report)", schema: file, value: { path: 1, extra: true } },
    { name: "search tool arguments (patterns, uniqueItems)", schema: search, value: { query: "json schema bounds", limit: 10, tags: ["mcp", "json-schema"] } },
    { name: "oneOf union", schema: union, value: { kind: "b", y: "hi" } },
    { name: "list of 100 items via $defs/$ref", schema: list, value: { items } },
  ];
}

/**
 * Measures `compile` (compileSchema of some build of the validator). `quick`: one round.
 * `ordinaryOnly`: skips the corpus (for a validator that would hang on it: an older build).
 */
export function measureSchema(compile: Compile, gc: () => void, quick: boolean, ordinaryOnly = false): SchemaBenchResult {
  const corpus = ordinaryOnly ? [] : schemaCorpus();
  const rounds = quick ? 1 : 5;
  if (!quick) for (const c of corpus) compile(c.schema)(c.value); // warm-up: JIT, lazy RegExp compilation
  const times: number[][] = corpus.map(() => []);
  const outcomes: string[] = [];
  for (let r = 0; r < rounds; r++) {
    corpus.forEach((c, i) => {
      gc();
      const t0 = performance.now();
      const result = compile(c.schema)(c.value);
      times[i]!.push(performance.now() - t0);
      outcomes[i] = outcomeOf(result);
    });
  }
  const best = times.map((t) => Math.min(...t));
  const order = best.map((ms, i) => ({ ms, i })).sort((a, b) => b.ms - a.ms);
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  const maxMs = order[0]?.ms ?? 0;
  return {
    pairs: corpus.length,
    rounds,
    maxMs,
    maxMedianMs: Math.max(0, ...times.map(median)),
    maxSingleMs: Math.max(0, ...times.flat()),
    pass: maxMs <= PAIR_TARGET_MS,
    slowest: order.slice(0, 5).map(({ ms, i }) => ({ name: corpus[i]!.name, ms, outcome: outcomes[i]! })),
    outcomes: counts,
    unexpected: corpus.flatMap((c, i) => (meets(c.expect, outcomes[i]!) ? [] : [`${c.name}: expected ${c.expect}, got ${outcomes[i]}`])),
    ordinary: ordinaryCases().map(({ name, schema, value }) => ({ name, usPerValidation: perValidationUs(compile(schema), value, quick) })),
    stepCost: ordinaryOnly || quick ? [] : stepCosts(compile, quick),
  };
}

/** One case per kind of work that the budget prices, each a few to tens of milliseconds, each
 * valid (one pass, whose steps the halving finds). */
function stepCostCases(): Array<{ name: string; schema: unknown; value: unknown }> {
  const names = Array.from({ length: 20_000 }, (_, i) => `p${i}`);
  const wide = Object.fromEntries(names.map((n) => [n, 1]));
  const ints = Array.from({ length: 300_000 }, (_, i) => i);
  return [
    { name: "nodes (items of type integer)", schema: { items: { type: "integer" } }, value: ints },
    { name: "property lookups (required)", schema: { items: { required: names } }, value: Array.from({ length: 20 }, () => wide) },
    { name: "Object.keys of big objects (minProperties)", schema: { items: { minProperties: 1 } }, value: Array.from({ length: 20 }, () => wide) },
    { name: "uniqueItems of numbers", schema: { uniqueItems: true }, value: ints },
    { name: "comparison keys (uniqueItems of objects)", schema: { uniqueItems: true }, value: Array.from({ length: 30_000 }, (_, i) => ({ i, t: [1, 2] })) },
    { name: "long strings sorted (uniqueItems)", schema: { uniqueItems: true }, value: Array.from({ length: 300 }, (_, i) => "x".repeat(20_000) + String(i).padStart(4, "0")) },
    { name: "safe pattern on V8 (1 MiB)", schema: { pattern: "^[a-z]+$" }, value: "a".repeat(1 << 20) },
    { name: "risky pattern on the linear matcher", schema: { pattern: "^(a+)+$" }, value: "a".repeat(100_000) },
    { name: "risky pattern, more threads", schema: { pattern: "^\\d+\\.?\\d*$" }, value: "1".repeat(100_000) },
    { name: "code points (maxLength)", schema: { maxLength: 1 << 20 }, value: "😀".repeat(1 << 20) },
    { name: "big decimals (multipleOf 1e-300)", schema: { items: { multipleOf: 1e-300 } }, value: Array.from({ length: 30_000 }, (_, i) => i * 1.5e-200) },
    { name: "remembered shared nodes", schema: { $defs: { a: { allOf: [{ $ref: "#/$defs/b" }, { $ref: "#/$defs/b" }] }, b: { type: "integer" } }, items: { $ref: "#/$defs/a" } }, value: ints },
    { name: "a chain of $refs on a long string", schema: refChain(17, { type: "string" }, "allOf"), value: "s".repeat(5000) },
    { name: "contains (quiet evaluations)", schema: { contains: { const: "needle" } }, value: [...Array.from({ length: 300_000 }, () => "hay"), "needle"] },
  ];
}

function stepCosts(compile: Compile, quick: boolean): SchemaBenchResult["stepCost"] {
  return stepCostCases().map(({ name, schema, value }) => {
    const check = compile(schema, { maxSteps: 1e12 });
    const runs: number[] = [];
    for (let r = 0; r < (quick ? 1 : 5); r++) {
      const t0 = performance.now();
      check(value);
      runs.push(performance.now() - t0);
    }
    const ms = Math.min(...runs);
    // The fewest steps that decide it, to within 5%: halve the ratio between too few and enough.
    let low = 1;
    let high = 1e10;
    while (high / low > 1.05) {
      const mid = Math.sqrt(low * high);
      if (compile(schema, { maxSteps: mid })(value).undecided === true) low = mid;
      else high = mid;
    }
    return { name, steps: Math.round(high), ms, nsPerStep: (ms * 1e6) / high };
  });
}

/** Median over rounds of the mean time of one validation, µs. */
function perValidationUs(check: (v: unknown) => unknown, value: unknown, quick: boolean): number {
  const rounds: number[] = [];
  for (let r = 0; r < (quick ? 2 : 7); r++) {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < (quick ? 5 : 100)) {
      for (let k = 0; k < 100; k++) check(value);
      n += 100;
      t = performance.now();
    }
    rounds.push(((t - t0) * 1000) / n);
  }
  return median(rounds.slice(1)); // the first round warms up
}

/** Runs section 10 in a plain-node child on the transpiled tree `work`. */
export function schemaSection(work: string, quick: boolean): SchemaBenchResult {
  const runner = join(work, "scripts", "bench", "schema-runner.js");
  const r = spawnSync(process.execPath, ["--expose-gc", runner, ...(quick ? ["--quick"] : [])], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (r.status !== 0) throw new Error(`schema section failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout) as SchemaBenchResult;
}

/** The section as text. */
export function formatSchema(s: SchemaBenchResult): string {
  const lines = [
    `10. JSON Schema validation of untrusted schemas (plain node; each pair compiled and validated ${s.rounds} time(s), minor GC before each)`,
    `  fuzz corpus: ${s.pairs} schema/value pairs; slowest pair ${s.maxMs.toFixed(1)} ms (best of its rounds), target <= ${PAIR_TARGET_MS} ms: ${s.pass ? "PASS" : "MISS"}`,
    `    (slowest by median ${s.maxMedianMs.toFixed(1)} ms, slowest single run ${s.maxSingleMs.toFixed(1)} ms: the rest is this machine's other work)`,
    `  outcomes: ${Object.entries(s.outcomes).map(([k, n]) => `${n} ${k}`).join(", ")}${s.unexpected.length > 0 ? `; UNEXPECTED: ${s.unexpected.join("; ")}` : ""}`,
    "  slowest pairs:",
    ...s.slowest.map((p) => `    ${p.ms.toFixed(1).padStart(7)} ms  ${p.name} (${p.outcome})`),
    "  ordinary schemas, one validation of a compiled validator:",
    ...s.ordinary.map((o) => `    ${o.usPerValidation.toFixed(2).padStart(7)} us  ${o.name}`),
    s.stepCost.length === 0
      ? "  what a step of the budget costs: not measured (--quick, or an older validator)"
      : "  what a step of the budget costs (COST in src/schema/runtime.ts; the budget assumes about 30 ns):",
    ...s.stepCost.map((c) => `    ${c.nsPerStep.toFixed(1).padStart(7)} ns/step  ${c.name} (${c.steps} steps, ${c.ms.toFixed(1)} ms)`),
  ];
  return lines.join("\n");
}
