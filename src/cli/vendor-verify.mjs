#!/usr/bin/env node
// Checks a copy of mcp-bridge made by `mcp-bridge vendor` against its MANIFEST.sha256:
//
//   node verify.mjs [dir]      (dir: default the directory this file is in)
//
// Prints every file that was changed, is missing, or was added (anything the manifest does not
// list), and exits 1 on any difference, 0 when every file matches. Plain JavaScript and Node
// built-ins only, so it runs with nothing installed. It is itself listed in the manifest, but a
// script cannot vouch for itself: `mcp-bridge vendor --verify <dir>` from a copy you trust, or
// `sha256sum -c MANIFEST.sha256` in the directory, checks without it. The same rules as
// src/cli/vendor-manifest.ts in mcp-bridge.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const MANIFEST = "MANIFEST.sha256";
const dir = resolve(process.argv[2] ?? dirname(fileURLToPath(import.meta.url)));

/** Every non-directory entry below `dir`: path -> whether it is a regular file. */
function entries(prefix, out) {
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) entries(path, out);
    else out.set(path, entry.isFile());
  }
  return out;
}

function fail(message) {
  console.error(`verify: ${message}`);
  process.exit(1);
}

let text;
try {
  text = readFileSync(join(dir, MANIFEST), "utf8");
} catch (error) {
  fail(`cannot read ${join(dir, MANIFEST)}: ${error.message}`);
}
const lines = text.split("\n");
if (lines[lines.length - 1] === "") lines.pop();

const present = entries("", new Map());
present.delete(MANIFEST);
const changed = [];
const missing = [];
for (const [i, line] of lines.entries()) {
  const match = /^([0-9a-f]{64}) {2}(.+)$/.exec(line);
  const path = match?.[2] ?? "";
  // A listed path must stay inside the directory.
  const safe = !path.startsWith("/") && !path.includes("\\") && path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
  if (match === null || !safe) fail(`${MANIFEST} line ${i + 1} is not "<sha256 hex>  <relative path>": ${JSON.stringify(line.slice(0, 120))}`);
  const regular = present.get(path);
  present.delete(path);
  if (regular === undefined) missing.push(path);
  else if (!regular || createHash("sha256").update(readFileSync(join(dir, path))).digest("hex") !== match[1]) changed.push(path);
}
const rows = [
  ...changed.sort().map((p) => `changed  ${p}`),
  ...missing.sort().map((p) => `missing  ${p}`),
  ...[...present.keys()].sort().map((p) => `added    ${p}`),
];
if (rows.length === 0) {
  console.log(`verify: ok, ${lines.length} files match ${MANIFEST} in ${dir}`);
} else {
  console.log([`verify: ${rows.length} difference(s) from ${MANIFEST} in ${dir}`, ...rows].join("\n"));
  process.exitCode = 1;
}
