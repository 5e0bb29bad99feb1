/**
 * Helpers live once: src/ has one object guard (util/object.ts) and one race against a
 * deadline (util/deadline.ts). A new copy of either fails here with the file that holds it.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** `path:line` of every line of src/ that matches `pattern`. */
function matches(pattern: RegExp): string[] {
  const out: string[] = [];
  for (const file of sources(join(root, "src"))) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (pattern.test(line)) out.push(`${relative(root, file).split("\\").join("/")}:${i + 1}`);
    });
  }
  return out;
}

/** The matches that are not in `home`, the file that should hold the only one. */
function outside(home: string, found: string[]): string[] {
  assert.ok(found.some((at) => at.startsWith(`${home}:`)), `${home} still holds the helper`);
  return found.filter((at) => !at.startsWith(`${home}:`));
}

test("the object guard (not null, not an array) is written once, in src/util/object.ts", () => {
  const copies = [...matches(/typeof [\w.]+ === "object"[^;]*!Array\.isArray\(/), ...matches(/function is(?:Plain)?Object\(/)];
  assert.deepEqual(outside("src/util/object.ts", copies), []);
});

test("racing a promise against a timer is written once, in src/util/deadline.ts", () => {
  // acp/connection.ts races a handler against its cancellation, not against a timer.
  const races = matches(/Promise\.race\(/).filter((at) => !at.startsWith("src/acp/connection.ts:"));
  assert.deepEqual(outside("src/util/deadline.ts", races), []);
  assert.equal(races.length, 1, "src/util/deadline.ts races once");
});

test("the shared 32 MiB message limit is one constant (DEFAULT_MAX_LINE_BYTES in jsonrpc/ndjson.ts)", () => {
  assert.deepEqual(outside("src/jsonrpc/ndjson.ts", matches(/32 \* 1024 \* 1024|33_?554_?432/)), []);
});
