import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { compileGlob, compileGlobs } from "../../src/util/glob.ts";

/** Asserts which inputs a pattern matches and which it does not. */
function check(pattern: string, yes: string[], no: string[]): void {
  const m = compileGlob(pattern);
  for (const s of yes) assert.equal(m(s), true, `${JSON.stringify(pattern)} should match ${JSON.stringify(s)}`);
  for (const s of no) assert.equal(m(s), false, `${JSON.stringify(pattern)} should not match ${JSON.stringify(s)}`);
}

describe("compileGlob", () => {
  it("a pattern without wildcards matches only the whole, exact string", () => {
    check("mcp__fs__read", ["mcp__fs__read"], ["mcp__fs__read_file", "xmcp__fs__read", "MCP__FS__READ", ""]);
  });

  it("* matches any run, including none and including slashes", () => {
    check("mcp__fs__*", ["mcp__fs__", "mcp__fs__read", "mcp__fs__a/b/c"], ["mcp__fsx__read", "mcp__f__read"]);
    check("*", ["", "anything/at/all"], []);
    check("file:///docs/*.md", ["file:///docs/a.md", "file:///docs/sub/dir/b.md"], ["file:///docs/a.txt", "file:///src/a.md"]);
    check("*_delete*", ["mcp__db__row_delete", "x_delete_all"], ["mcp__db__remove"]);
  });

  it("runs of stars behave like one star", () => {
    check("a**b", ["ab", "axxb"], ["a", "ba"]);
    check("**", ["", "x"], []);
  });

  it("? matches exactly one character, counting an astral character as one", () => {
    check("a?c", ["abc", "a-c", "a𝄞c"], ["ac", "abbc"]);
    check("??", ["ab", "𝄞𝄞"], ["a", "abc"]);
  });

  it("sets, ranges and negated sets", () => {
    check("v[0-9]", ["v0", "v5", "v9"], ["va", "v10", "v"]);
    check("[abc]x", ["ax", "cx"], ["dx", "x"]);
    check("[!a-c]x", ["dx", "zx"], ["ax", "bx"]);
    check("[^a-c]x", ["dx"], ["cx"]);
    check("[a-cx-z]", ["b", "y"], ["d", "w"]);
  });

  it("set edge cases: leading ], trailing -, reversed range, escapes", () => {
    check("[]a]", ["]", "a"], ["b"]);
    check("[!]a]", ["b"], ["]", "a"]);
    check("[a-]", ["a", "-"], ["b"]);
    check("[z-a]", [], ["a", "m", "z"]);
    check("[\\]]", ["]"], ["\\"]);
  });

  it("an unterminated [ is a literal [", () => {
    check("a[b", ["a[b"], ["ab"]);
    check("[", ["["], [""]);
  });

  it("a backslash escapes the next character; a trailing backslash is literal", () => {
    check("a\\*b", ["a*b"], ["axb", "ab"]);
    check("a\\?", ["a?"], ["ab"]);
    check("end\\", ["end\\"], ["end"]);
  });

  it("regular-expression syntax in a pattern is plain text", () => {
    check("a.b", ["a.b"], ["axb"]);
    check("(x|y)+$", ["(x|y)+$"], ["x", "xy"]);
    check("^a{2}", ["^a{2}"], ["aa"]);
  });

  it("is case-sensitive", () => {
    check("Read*", ["ReadFile"], ["readFile", "READFILE"]);
  });

  it("answers correctly for patterns that make a backtracking matcher explode", () => {
    const m = compileGlob("a*a*a*a*a*a*a*a*b");
    assert.equal(m("a".repeat(5000)), false);
    assert.equal(m(`${"a".repeat(5000)}b`), true);
  });
});

describe("compileGlobs", () => {
  it("matches when any pattern matches; an empty list matches nothing", () => {
    const m = compileGlobs(["mcp__fs__*", "mcp__git__status"]);
    assert.equal(m("mcp__fs__read"), true);
    assert.equal(m("mcp__git__status"), true);
    assert.equal(m("mcp__git__push"), false);
    const none = compileGlobs([]);
    assert.equal(none(""), false);
    assert.equal(none("anything"), false);
  });
});
