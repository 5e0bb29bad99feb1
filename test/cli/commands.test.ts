/** The commands beside inspect and call: read, prompt, complete, and --log-level, against the echo fixture. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { echoCommand, run } from "./helpers.ts";

test("read prints a resource's text, summarises a blob, and reads through a template", async () => {
  const text = await run(["read", "echo://greeting", "--", ...echoCommand]);
  assert.deepEqual(text, { code: 0, out: "Hello from echo", err: "" });
  const blob = await run(["read", "echo://blob", "--", ...echoCommand]);
  assert.deepEqual(blob, { code: 0, out: "[blob echo://blob, application/octet-stream, 16 bytes]", err: "" });
  const item = await run(["read", "--json", "echo://items/2", "--", ...echoCommand]);
  assert.equal(item.code, 0, item.err);
  assert.deepEqual(JSON.parse(item.out), { contents: [{ uri: "echo://items/2", mimeType: "text/plain", text: "item 2" }] });
});

test("prompt gets a prompt with string arguments and prints its messages", async () => {
  const formal = await run(["prompt", "greet", '{"name":"Ada","style":"formal"}', "--", ...echoCommand]);
  assert.deepEqual(formal, { code: 0, out: "user: Good day, Ada.", err: "" });
  const fixed = await run(["prompt", "hello", "--", ...echoCommand]);
  assert.deepEqual(fixed, { code: 0, out: "# A fixed greeting\nuser: Hello!", err: "" });
  const notString = await run(["prompt", "greet", '{"name":42}', "--", ...echoCommand]);
  assert.equal(notString.code, 2);
  assert.match(notString.err, /prompt arguments: "name" must be a string/);
});

test("complete lists a prompt argument's or a template variable's values, one per line", async () => {
  const names = await run(["complete", "prompt", "greet", "name", "A", "--", ...echoCommand]);
  assert.deepEqual(names, { code: 0, out: "Ada\nAlan\nAlice", err: "" });
  const ids = await run(["complete", "resource", "echo://items/{id}", "id", "1", "--context", '{"other":"x"}', "--", ...echoCommand]);
  assert.deepEqual(ids, { code: 0, out: "1\n10", err: "" });
  const json = await run(["complete", "--json", "prompt", "greet", "name", "b", "--", ...echoCommand]);
  assert.equal(json.code, 0, json.err);
  assert.deepEqual(JSON.parse(json.out).completion.values, ["Barbara", "Bob"]);
});

test("complete: a missing kind, name or argument is a usage error", async () => {
  for (const argv of [["complete"], ["complete", "tool", "x", "y"], ["complete", "prompt", "greet"]]) {
    const r = await run([...argv, "--", ...echoCommand]);
    assert.equal(r.code, 2, argv.join(" "));
    assert.match(r.err, /complete \(prompt <name> \| resource <uri-template>\)/);
  }
  const context = await run(["complete", "prompt", "greet", "name", "A", "--context", "[1]", "--", ...echoCommand]);
  assert.equal(context.code, 2);
  assert.match(context.err, /--context must be a JSON object/);
});

test("--log-level sends logging/setLevel and prints the server's log messages on stderr", async () => {
  const call = ["call", "log", '{"level":"warning","message":"disk almost full"}'];
  const shown = await run([...call, "--log-level", "warning", "--", ...echoCommand]);
  assert.deepEqual(shown, { code: 0, out: "logged at warning", err: "[warning] echo: disk almost full" });
  // At `error` the server itself filters the warning out: the level reached it.
  const filtered = await run([...call, "--log-level", "error", "--", ...echoCommand]);
  assert.deepEqual(filtered, { code: 0, out: "logged at warning", err: "" });
  // Without the flag log messages are not printed at all.
  const quiet = await run([...call, "--", ...echoCommand]);
  assert.deepEqual(quiet, { code: 0, out: "logged at warning", err: "" });
  const bad = await run([...call, "--log-level", "loud", "--", ...echoCommand]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--log-level must be one of debug, info, notice, warning, error, critical, alert, emergency/);
});
