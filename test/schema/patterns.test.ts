// Patterns from untrusted schemas: which ones may backtrack catastrophically (judged when the
// schema is compiled), the linear-time matcher that runs those, and what the validator
// answers when it cannot run one safely. The matcher is checked against V8's RegExp.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compilePattern, RegexProgram, type Pattern } from "../../src/schema/pattern.ts";
import { parseRegex } from "../../src/schema/regex-parse.ts";
import { compileSchema, validateSchema } from "../../src/schema/validate.ts";
import { seededRandom } from "../../scripts/bench/schema-corpus.ts";
import { bad, ok } from "./validate-helpers.ts";

const unlimited = { charge: (): boolean => true };

function compiled(source: string): Pattern {
  const p = compilePattern(source);
  assert.equal(typeof p, "object", `${source} compiles`);
  return p as Pattern;
}

describe("the issue's pattern", () => {
  it("^(a+)+$ against 30 characters is decided at once", () => {
    const check = compileSchema({ type: "string", pattern: "^(a+)+$" });
    const r = check("a".repeat(30) + "!");
    assert.deepEqual([r.valid, r.undecided, r.errors[0]?.keyword], [false, false, "pattern"]);
    assert.equal(check("a".repeat(30)).valid, true);
    assert.equal(check("").valid, false);
  });
});

describe("judging patterns when the schema is compiled", () => {
  it("flags nested quantifiers, overlapping alternation and polynomial backtracking", () => {
    const risky = [
      "^(a+)+$", "(a*)*b", "^(\\w+\\s?)*$", "^(\\d+)*$", "^(a?){30}a{30}$", "^(.*a){20}$", "(x+x+)+y",
      "^(a|aa)+$", "^(a|a)*$", "^(?:a|b(?:ab)?)*c$", "^(ab|a[bc])+$",
      "a+b", "[a-z]+@", "\\s+$", "^.*b.*c$", "^\\d+\\.?\\d*$", "^[^@]+@[^@]+\\.[^@]+$", "^[a-z]+[a-z0-9]*!",
      "(?=.*x)", "a?a?a?a?a?a?a?aaaaaaa", "(?:a*b){2,}\\s?",
    ];
    for (const source of risky) assert.notEqual(compiled(source).risk, undefined, source);
  });

  it("leaves the patterns tools usually declare to V8", () => {
    const safe = [
      "^[a-z0-9_-]{1,64}$", "^\\d{4}-\\d{2}-\\d{2}$", "^https?://\\S+$", "^[A-Z][a-zA-Z0-9]*$", "^\\p{L}+$",
      "^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$", "^[a-z0-9]+(?:-[a-z0-9]+)*$", "^(?:[a-z]+\\.)+[a-z]+$",
      "^(?=.*\\d)(?=.*[a-z]).{8,}$", "^\\s*$", "\\.json$", "^[+-]?\\d+(\\.\\d+)?$", "^(?:a|b)+$", "^\\d{3}\\-\\d{4}$",
      "b", "^$", "^[^\\s]+$", "^(?:http|ftp)s?://", "[a-z]+", "(?:ab)+", "\\S+",
    ];
    for (const source of safe) assert.equal(compiled(source).risk, undefined, source);
  });

  it("reads the syntax of both flag modes (Annex B quirks without the u flag)", () => {
    const sources = [
      "^[\\p{Lu}\\d_]+$", "\\u{1F600}", "\\uD83D\\uDE00", "[\\-a]", "\\cJ", "(?<year>\\d{4})-\\k<year>", "(a)\\1",
      "(?<=a)b", "(?<!a)b", "(?!x)", "[\\b]", "\\0", "[^]", "[]", "a{2,}?", "\\/",
      // No u flag: identity escapes, literal braces and brackets, octal and control escapes.
      "^\\d{3}\\-\\d{4}$", "\\:", "a{", "x{1", "]", "}", "\\c", "\\c1", "[\\c1]", "\\8", "\\01", "\\400", "\\k", "[\\d-z]", "\\x6", "\\u00",
    ];
    for (const source of sources) {
      assert.doesNotMatch(String(compiled(source).risk), /syntax/, source);
    }
  });
});

describe("the linear-time matcher", () => {
  it("answers like RegExp on random patterns and strings, with and without the u flag", () => {
    const rand = seededRandom(0x5eed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const atoms = {
      u: ["a", "b", ".", "[ab]", "[^a]", "\\d", "\\w", "\\s", "\\W", "[a-c]", "😀", "é", "\\u0061", "[\\d_]", "\\.", "-", "[^]", "\\p{L}", "[\\p{Lu}a]", "\\uD83D\\uDE00", "\\u{1F600}", "[\\-a]", "\\cJ", "[\\b]", "\\S"],
      legacy: ["a", "b", ".", "[ab]", "\\d", "\\-", "\\:", "]", "}", "{", "\\c", "\\c1", "[\\c1]", "\\8", "\\01", "\\123", "\\k", "😀", "\\uD83D", "[\\d-z]", "\\x6", "\\q", "\\400"],
    };
    const quantifiers = ["", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "{2,}"];
    const chars = ["a", "b", "c", "1", "_", " ", "-", ".", "é", "😀", "\ud83d", "\n", "A", "{", "]", "\\", "k", "\x01", "S"];
    let compared = 0;
    for (const unicode of [true, false]) {
      const gen = (d: number): string => {
        const r = rand();
        const atom = pick(unicode ? atoms.u : atoms.legacy) + pick(quantifiers);
        if (d <= 0 || r < 0.4) return atom;
        if (r < 0.6) return "(" + gen(d - 1) + gen(d - 1) + ")" + pick(quantifiers);
        if (r < 0.75) return "(?:" + gen(d - 1) + "|" + gen(d - 1) + ")" + pick(quantifiers);
        if (r < 0.85) return gen(d - 1) + gen(d - 1);
        if (r < 0.9) return "^" + gen(d - 1);
        if (r < 0.95) return gen(d - 1) + "$";
        return gen(d - 1) + pick(["\\b", "\\B"]) + gen(d - 1);
      };
      for (let i = 0; i < 1500; i++) {
        const source = gen(3);
        let re: RegExp;
        try {
          re = new RegExp(source, unicode ? "u" : "");
          if (!unicode) assert.throws(() => new RegExp(source, "u")); // the legacy mode is only for these
        } catch {
          continue;
        }
        const program = new RegexProgram(parseRegex(source, unicode).root, unicode);
        for (let j = 0; j < 12; j++) {
          let s = "";
          for (let k = Math.floor(rand() * 8); k > 0; k--) s += pick(chars);
          const m = re.exec(s);
          // V8 (not the spec) reports an empty match between the halves of a surrogate pair
          // with the u flag (/\B/u.exec("A😀A").index is 2); the matcher keeps to the spec.
          if (m && unicode && m.index > 0 && /[\ud800-\udbff]/.test(s[m.index - 1]!) && /[\udc00-\udfff]/.test(s[m.index] ?? "")) continue;
          assert.equal(program.test(s, unlimited), m !== null, `${source} on ${JSON.stringify(s)}`);
          compared++;
        }
      }
    }
    assert.ok(compared > 20_000, `${compared} comparisons`);
  });

  it("runs flagged patterns on sane strings correctly, and on attacks in linear time", () => {
    const cases: Array<[string, string, boolean]> = [
      ["^(\\w+\\s?)*$", "hello big world", true],
      ["^(\\w+\\s?)*$", "hello, world", false],
      ["^(a|aa)+$", "aaaaa", true],
      ["^(?:a|b(?:ab)?)*c$", "babc", true],
      ["^\\d+\\.?\\d*$", "3.14", true],
      ["^\\d+\\.?\\d*$", "3.14.15", false],
      ["(a|a)*$", "zzz", true], // matches the empty string at the end
      ["^[^@]+@[^@]+\\.[^@]+$", "me@example.com", true],
      ["^[^@]+@[^@]+\\.[^@]+$", "me@example", false],
      ["^(a+)+$", "a".repeat(100_000) + "!", false],
      ["\\s+$", " ".repeat(100_000) + "x", false],
      ["a+b", "a".repeat(100_000) + "b", true],
    ];
    for (const [source, s, expected] of cases) {
      const p = compiled(source);
      assert.notEqual(p.risk, undefined, source);
      assert.equal(p.test(s, unlimited), expected, `${source} on ${JSON.stringify(s.slice(0, 20))}`);
      // Short strings: V8 agrees.
      if (s.length < 50) assert.equal(new RegExp(source, "u").test(s), expected, source);
    }
  });

  it("pays each step from the budget and stops when it is spent", () => {
    const p = compiled("^(a+)+$");
    let steps = 0;
    const budget = { charge: (n: number): boolean => (steps += n) <= 1000 };
    assert.equal(p.test("a".repeat(10_000), budget), undefined);
    assert.ok(steps > 1000);
  });
});

describe("in the validator", () => {
  it("a risky pattern that needs lookarounds or back-references cannot be decided", () => {
    const r = validateSchema({ pattern: "(?=.*x)" }, "ax");
    assert.deepEqual([r.valid, r.undecided, r.errors[0]?.keyword], [false, true, "pattern"]);
    assert.match(r.errors[0].message, /^could not validate: pattern "\(\?=\.\*x\)" may backtrack catastrophically \(.+\) and cannot be run in linear time$/);
    assert.equal(validateSchema({ pattern: "(?=.*x)" }, 5).valid, true, "only strings are checked");
    assert.equal(validateSchema({ pattern: "^(\\w+)\\s\\1+$" }, "a a").undecided, true);
    // Safe ones with lookarounds run on V8.
    ok({ pattern: "^(?=.*\\d)(?=.*[a-z]).{8,}$" }, "abcdefg1");
    bad({ pattern: "^(?=.*\\d)(?=.*[a-z]).{8,}$" }, "abcdefgh", "pattern");
  });

  it("patternProperties and propertyNames use the same matchers", () => {
    const attack = "a".repeat(40) + "!";
    ok({ patternProperties: { "^(a+)+$": { type: "string" } } }, { [attack]: 1 });
    bad({ patternProperties: { "^(a+)+$": { type: "string" } } }, { aaaa: 1 }, "type");
    bad({ propertyNames: { pattern: "^(a|a)+$" } }, { [attack]: 1 }, "propertyNames");
    ok({ propertyNames: { pattern: "^(a|a)+$" } }, { aaa: 1 });
    const r = validateSchema({ patternProperties: { "(?=.*x)": true } }, { ax: 1 });
    assert.deepEqual([r.valid, r.undecided, r.errors[0]?.keyword], [false, true, "patternProperties"]);
  });

  it("a pattern too big to run in linear time cannot be decided", () => {
    const r = validateSchema({ pattern: "^(a{1,2}){5000}$" }, "aaa");
    assert.deepEqual([r.valid, r.undecided], [false, true]);
  });
});
