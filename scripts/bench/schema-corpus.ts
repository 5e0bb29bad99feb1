/**
 * A deterministic corpus of adversarial JSON Schema / value pairs: schemas come from servers,
 * so the validator must finish each quickly whatever it is given. Used by
 * test/schema/fuzz-corpus.test.ts (every pair ends with the expected outcome) and by the
 * benchmark's section 10 (no pair may take over 50 ms).
 *
 * Fixed families (the cases of the hardening issue and their relatives): `anyOf` chains over
 * shared `$defs`, patterns that backtrack catastrophically or polynomially, deep nesting, big
 * enums, `uniqueItems` on large arrays, long strings with patterns, extreme `multipleOf`, and
 * keywords that multiply work (`required` lists, `allOf` fans); then seeded random pairs
 * mixing all of these.
 */

/** What validating the pair must give with the default options. "decided" is valid or invalid
 * (never "could not validate"); "any" includes "could not validate". */
export type Expectation = "valid" | "invalid" | "undecided" | "decided" | "any";

export interface SchemaCase {
  name: string;
  schema: unknown;
  value: unknown;
  expect: Expectation;
}

/** mulberry32: a small seeded generator of numbers in [0, 1), so a corpus is the same on every run. */
export function seededRandom(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `$defs` d0..d{depth-1}, each an `anyOf` (or `kind`) of two `$ref`s to the next; d{depth} is `leaf`. */
export function refChain(depth: number, leaf: unknown, kind = "anyOf"): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) {
    const next = { $ref: `#/$defs/d${i + 1}` };
    defs[`d${i}`] = kind === "not" ? { not: { not: next }, allOf: [next] } : { [kind]: [next, { ...next }] };
  }
  defs[`d${depth}`] = leaf;
  return { $defs: defs, $ref: "#/$defs/d0" };
}

function nestedArrays(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function nestedObjects(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** Patterns that make a backtracking engine work exponentially or polynomially, each with a
 * string that makes it do so, a string it matches, and whether that string matches. */
const EVIL_PATTERNS: ReadonlyArray<{ pattern: string; attack: string; attackMatches: boolean; sane: string }> = [
  { pattern: "^(a+)+$", attack: "a".repeat(30) + "!", attackMatches: false, sane: "aaaa" },
  { pattern: "^(a|aa)+$", attack: "a".repeat(40) + "!", attackMatches: false, sane: "aaa" },
  { pattern: "^(a|a)*$", attack: "a".repeat(40) + "!", attackMatches: false, sane: "aa" },
  { pattern: "^(\\w+\\s?)*$", attack: "word ".repeat(12) + "!", attackMatches: false, sane: "hello big world" },
  { pattern: "^(\\d+)*$", attack: "1".repeat(40) + "x", attackMatches: false, sane: "12345" },
  { pattern: "^(a?){30}a{30}$", attack: "a".repeat(30), attackMatches: true, sane: "a".repeat(45) },
  { pattern: "^(.*a){20}$", attack: "a".repeat(25) + "b", attackMatches: false, sane: "a".repeat(20) },
  { pattern: "^(([a-z])+.)+[A-Z]([a-z])+$", attack: "a".repeat(30) + "!", attackMatches: false, sane: "ab.Cd" },
  { pattern: "(x+x+)+y", attack: "x".repeat(40), attackMatches: false, sane: "xxy" },
  { pattern: "a+b", attack: "a".repeat(100_000), attackMatches: false, sane: "caab" },
  { pattern: "\\s+$", attack: " ".repeat(50_000) + "x", attackMatches: false, sane: "x  " },
  { pattern: "^.*b.*c$", attack: "b".repeat(30_000), attackMatches: false, sane: "abxc" },
  { pattern: "^\\d+\\.?\\d*$", attack: "1".repeat(30_000) + "x", attackMatches: false, sane: "3.14" },
  { pattern: "^[^@]+@[^@]+\\.[^@]+$", attack: "a@" + ".".repeat(30_000) + "@", attackMatches: false, sane: "a@b.c" },
  { pattern: "[a-z]+@", attack: "a".repeat(100_000), attackMatches: false, sane: "me@" },
  { pattern: "(?=.*x)", attack: "a".repeat(30_000), attackMatches: false, sane: "ax" },
  { pattern: "^(?:a|b(?:ab)?)*c$", attack: "bab".repeat(12) + "!", attackMatches: false, sane: "babc" },
  { pattern: "^(a|b|ab)*c$", attack: "ab".repeat(25), attackMatches: false, sane: "abc" },
];

function fixedCases(): SchemaCase[] {
  const cases: SchemaCase[] = [];
  const add = (name: string, schema: unknown, value: unknown, expect: Expectation): void => {
    cases.push({ name, schema, value, expect });
  };
  // The first case: a 1.3 KB chain of 22 anyOfs over shared $defs, and its relatives.
  for (const depth of [22, 40, 100]) {
    add(`anyOf chain ${depth}, invalid`, refChain(depth, { type: "integer" }), "x", "invalid");
    add(`anyOf chain ${depth}, valid`, refChain(depth, { type: "integer" }), 5, "valid");
  }
  add("oneOf chain 22 (two equal branches never match once)", refChain(22, { type: "integer" }, "oneOf"), 5, "invalid");
  add("allOf chain 22", refChain(22, { type: "integer" }, "allOf"), 5, "valid");
  add("not/allOf chain 22", refChain(22, { type: "integer" }, "not"), "x", "invalid");
  const descending: Record<string, unknown> = {};
  for (let i = 0; i < 30; i++) {
    const next = { properties: { a: { $ref: `#/$defs/d${i + 1}` } } };
    descending[`d${i}`] = { anyOf: [next, { ...next, required: ["a"] }] };
  }
  descending.d30 = { type: "integer" };
  add("anyOf chain descending into properties", { $defs: descending, $ref: "#/$defs/d0" }, nestedObjects(30, "x"), "invalid");
  add("anyOf chain on a long string", refChain(22, { type: "integer" }), "s".repeat(5000), "any");

  // The second case and the other classic regular-expression denials of service.
  for (const p of EVIL_PATTERNS) {
    // A risky pattern with a lookaround is not run at all: "could not validate".
    const look = p.pattern.includes("(?=");
    add(`pattern ${p.pattern} attacked`, { type: "string", pattern: p.pattern }, p.attack, look ? "undecided" : p.attackMatches ? "valid" : "invalid");
    add(`pattern ${p.pattern} sane`, { type: "string", pattern: p.pattern }, p.sane, look ? "undecided" : "valid");
  }
  add("patternProperties with a nested quantifier", { patternProperties: { "^(a+)+$": { type: "string" } } }, { ["a".repeat(30) + "!"]: 1 }, "valid");
  add("propertyNames with overlapping alternation", { propertyNames: { pattern: "^(a|a)+$" } }, { ["a".repeat(40) + "b"]: 1 }, "invalid");

  // Deep nesting, of values and of schemas.
  add("recursive items on 100k-deep arrays", { items: { $ref: "#" } }, nestedArrays(100_000, 1), "invalid");
  add("recursive properties on 100-deep objects", { properties: { a: { $ref: "#" } } }, nestedObjects(100, 1), "valid");
  let nots: unknown = { type: "string" };
  for (let i = 0; i < 50_000; i++) nots = { not: { not: nots } };
  add("50k nested nots", nots, "x", "invalid");
  add("const against a 100k-deep value", { const: [1] }, nestedArrays(100_000, 1), "invalid");

  // Big enums.
  const words = Array.from({ length: 100_000 }, (_, i) => `w${i}`);
  add("enum of 100k strings, last", { enum: words }, "w99999", "valid");
  add("enum of 100k strings, absent", { enum: words }, "nope", "invalid");
  const objects = Array.from({ length: 5000 }, (_, i) => ({ id: i, tags: ["a", "b"], nested: { k: i } }));
  add("enum of 5k objects, absent", { enum: objects }, { id: -1, tags: ["a", "b"], nested: { k: 1 } }, "invalid");
  const longWords = Array.from({ length: 300 }, (_, i) => "x".repeat(20_000) + String(i).padStart(4, "0"));
  add("enum of 300 long strings of one length", { enum: longWords }, "x".repeat(20_000) + "0299", "valid");

  // uniqueItems on large arrays.
  add("uniqueItems, 200k numbers", { uniqueItems: true }, Array.from({ length: 200_000 }, (_, i) => i), "valid");
  add("uniqueItems, 20k objects, duplicate last", { uniqueItems: true }, [...Array.from({ length: 20_000 }, (_, i) => ({ i })), { i: 0 }], "invalid");
  add("uniqueItems, 100k objects", { uniqueItems: true }, Array.from({ length: 100_000 }, (_, i) => ({ i, tags: ["a"] })), "any");
  add("uniqueItems, 300 long strings of one length", { uniqueItems: true }, longWords, "valid");
  add("uniqueItems, long strings, one duplicate", { uniqueItems: true }, [...longWords, longWords[7]], "invalid");

  // Long strings.
  add("1 MiB string, safe pattern", { type: "string", pattern: "^[a-z]+$" }, "a".repeat(1 << 20), "valid");
  add("1 MiB string, risky pattern", { type: "string", pattern: "^(a|b)*(a+)+$" }, "a".repeat(1 << 20), "any");
  add("1 Mi emoji, maxLength counting code points", { maxLength: 1 << 20 }, "😀".repeat(1 << 20), "valid");
  add("1 MiB string, \\p{L}", { pattern: "^\\p{L}+$" }, "é".repeat(1 << 20), "valid");

  // multipleOf at extreme ratios: exact decimal answers, quickly.
  add("1 is a multiple of 5e-324", { multipleOf: 5e-324 }, 1, "valid");
  add("1e308 is a multiple of 1e-308", { multipleOf: 1e-308 }, 1e308, "valid");
  add("0.3 is a multiple of 0.1", { multipleOf: 0.1 }, 0.3, "valid");
  add("1e308 is no multiple of 0.123456789", { multipleOf: 0.123456789 }, 1e308, "invalid");
  add("many multipleOf checks", { items: { multipleOf: 1e-300 } }, Array.from({ length: 20_000 }, (_, i) => i * 1.5e-200), "decided");

  // Keywords that multiply work: the budget, not the schema, sets the bound.
  const names = Array.from({ length: 20_000 }, (_, i) => `p${i}`);
  const wide = Object.fromEntries(names.map((n) => [n, 1]));
  add("20k required names on 2k objects", { items: { required: names } }, Array.from({ length: 2000 }, () => wide), "undecided");
  const fan = { $defs: { heavy: { anyOf: Array.from({ length: 20 }, (_, i) => ({ properties: { [`k${i}`]: { type: "string" } }, required: [`k${i}`] })) } } };
  add("allOf fan of 50 heavy refs over 5k items", { ...fan, items: { allOf: Array.from({ length: 50 }, () => ({ $ref: "#/$defs/heavy" })) } }, Array.from({ length: 5000 }, (_, i) => ({ [`k${i % 20}`]: "v" })), "any");
  add("contains over 100k items", { contains: { const: "needle" } }, Array.from({ length: 100_000 }, () => "hay"), "invalid");
  return cases;
}

/** Random pairs: DAGs of `$defs` joined by combinators, leaves drawn from the families above. */
function randomCases(count: number, seed: number): SchemaCase[] {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const fragments = ["a+", "(a+)+", "(a|a)*", "\\w*", "(\\d+\\.?)+", "[a-z]*", ".*", "(ab|a)*", "\\s*", "x?", "(.*x){3}"];
  const leaf = (): unknown => {
    switch (Math.floor(rand() * 8)) {
      case 0:
        return { type: pick(["string", "integer", "object", "array", "number"]) };
      case 1:
        return { pattern: (rand() < 0.5 ? "^" : "") + pick(fragments) + pick(fragments) + (rand() < 0.5 ? "$" : "") };
      case 2:
        return { enum: Array.from({ length: 1 + Math.floor(rand() * 2000) }, (_, i) => (rand() < 0.5 ? i : `s${i}`)) };
      case 3:
        return { multipleOf: pick([1e-300, 0.1, 3, 5e-324, 1e-7]) };
      case 4:
        return { uniqueItems: true, items: { type: "integer" } };
      case 5:
        return { required: ["a", "b"], properties: { a: { minLength: 2 } } };
      case 6:
        return { const: { a: [1, 2, { b: "c" }] } };
      default:
        return rand() < 0.5;
    }
  };
  const cases: SchemaCase[] = [];
  for (let n = 0; n < count; n++) {
    const size = 5 + Math.floor(rand() * 40);
    const defs: Record<string, unknown> = {};
    for (let i = size - 1; i >= 0; i--) {
      const ref = (): unknown => ({ $ref: `#/$defs/d${i + 1 + Math.floor(rand() * Math.min(3, size - i))}` });
      const r = rand();
      if (i === size - 1 || r < 0.2) defs[`d${i}`] = leaf();
      else if (r < 0.4) defs[`d${i}`] = { anyOf: [ref(), ref(), ref()] };
      else if (r < 0.55) defs[`d${i}`] = { oneOf: [ref(), ref()] };
      else if (r < 0.7) defs[`d${i}`] = { allOf: [ref(), ref()] };
      else if (r < 0.8) defs[`d${i}`] = { not: ref(), if: ref(), then: ref(), else: ref() };
      else if (r < 0.9) defs[`d${i}`] = { items: ref(), properties: { a: ref(), b: ref() }, additionalProperties: ref() };
      else defs[`d${i}`] = { contains: ref(), propertyNames: { pattern: pick(fragments) } };
    }
    defs[`d${size}`] = leaf();
    defs[`d${size + 1}`] = leaf();
    defs[`d${size + 2}`] = leaf();
    const value = randomValue(rand, 3);
    cases.push({ name: `random ${n}`, schema: { $defs: defs, $ref: "#/$defs/d0" }, value, expect: "any" });
  }
  return cases;
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.3) {
    const atoms = ["a".repeat(Math.floor(rand() * 40)) + "!", 1, 0.3, 1e308, "x".repeat(2000), null, true, "aaa"];
    return atoms[Math.floor(rand() * atoms.length)];
  }
  if (r < 0.65) return Array.from({ length: Math.floor(rand() * 30) }, () => randomValue(rand, depth - 1));
  const o: Record<string, unknown> = {};
  for (const k of ["a", "b", "aaaa!", "x"]) if (rand() < 0.6) o[k] = randomValue(rand, depth - 1);
  return o;
}

/** The whole corpus; the same on every call. */
export function schemaCorpus(): SchemaCase[] {
  return [...fixedCases(), ...randomCases(200, 0x5c4e3a)];
}
