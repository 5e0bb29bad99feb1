import { test } from "node:test";
import assert from "node:assert/strict";
import { parseUriTemplate } from "../../src/mcp/uri-template.ts";

test("{var} matches one level-1 value and percent-decodes it", () => {
  const t = parseUriTemplate("echo://items/{id}");
  assert.deepEqual(t.variables, ["id"]);
  assert.deepEqual(t.match("echo://items/42"), { id: "42" });
  assert.deepEqual(t.match("echo://items/a%2Fb"), { id: "a/b" });
  assert.deepEqual(t.match("echo://items/caf%C3%A9"), { id: "café" });
});

test("{var} refuses values a level-1 expansion cannot produce", () => {
  const t = parseUriTemplate("echo://items/{id}");
  for (const uri of ["echo://items/", "echo://items/a/b", "echo://items/a b", "echo://items/a?x=1", "echo://items/%zz", "echo://items/%C3", "echo://other/1", "echo://items"]) {
    assert.equal(t.match(uri), undefined, uri);
  }
});

test("several variables split at the literal text between them; the whole URI must be consumed", () => {
  const t = parseUriTemplate("db://{schema}/tables/{table}.json");
  assert.deepEqual(t.match("db://public/tables/users.json"), { schema: "public", table: "users" });
  assert.equal(t.match("db://public/tables/users.json.bak"), undefined);
  assert.equal(t.match("db://public/tables/users"), undefined);
  assert.equal(t.match("xdb://public/tables/users.json"), undefined);
});

test("{+var} matches reserved characters such as slashes", () => {
  const t = parseUriTemplate("file:///{+path}");
  assert.deepEqual(t.match("file:///home/me/notes.txt"), { path: "home/me/notes.txt" });
  assert.deepEqual(t.match("file:///a%20b/c"), { path: "a b/c" });
  assert.equal(t.match("file:///with space"), undefined);
  assert.equal(t.match("file:///"), undefined);
});

test("a template without variables matches only itself", () => {
  const t = parseUriTemplate("static://x");
  assert.deepEqual(t.match("static://x"), {});
  assert.equal(t.match("static://xy"), undefined);
});

test("a variable named __proto__ becomes an own property, not a prototype change", () => {
  const vars = parseUriTemplate("o://{__proto__}/{constructor}").match("o://v/w");
  assert.ok(vars);
  assert.equal(Object.getPrototypeOf(vars), Object.prototype);
  assert.ok(Object.hasOwn(vars, "__proto__"));
  assert.equal(Object.getOwnPropertyDescriptor(vars, "__proto__")?.value, "v");
  assert.equal(vars.constructor, "w");
});

test("unsupported or malformed templates are refused when parsed", () => {
  for (const bad of ["a://{", "a://}", "a://{}", "a://{#frag}", "a://{?q,r}", "a://{x:3}", "a://{x*}", "a://{a}{b}", "a://{a}/{a}", "a://{a b}", "a://{a,b}"]) {
    assert.throws(() => parseUriTemplate(bad), TypeError, bad);
  }
});
