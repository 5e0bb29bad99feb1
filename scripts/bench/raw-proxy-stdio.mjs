// The raw baseline of the gateway section (11a-b): the least a stdio MCP proxy does, written
// with nothing but child_process, JSON.parse, JSON.stringify and a line splitter. It starts the
// upstream (the command after `--`), parses every message both ways, renames the bridged tool
// name of a tools/call to the upstream's own (`mcp__echo__echo` -> `echo`) and writes the
// message on. No checks, limits, middleware or id mapping: what any Node proxy pays anyway, so
// the benchmark can tell the hop's cost apart from the gateway's own.
//
//   node scripts/bench/raw-proxy-stdio.mjs -- <upstream command...>
//
// Exits when its stdin ends (after ending the upstream's) or when the upstream exits.
"use strict";

import { spawn } from "node:child_process";

const PREFIX = "mcp__echo__";
const dash = process.argv.indexOf("--");
const command = dash === -1 ? [] : process.argv.slice(dash + 1);
if (command.length === 0) {
  process.stderr.write("usage: raw-proxy-stdio.mjs -- <upstream command...>\n");
  process.exit(2);
}

const upstream = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
upstream.on("exit", () => process.exit(0));
upstream.stdin.on("error", () => undefined);

/** Calls `onMessage` with each parsed line of `stream`. */
function lines(stream, onMessage) {
  let buffered = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.length > 0) onMessage(JSON.parse(line));
    }
  });
}

lines(process.stdin, (msg) => {
  if (msg.method === "tools/call" && typeof msg.params?.name === "string" && msg.params.name.startsWith(PREFIX)) {
    msg.params.name = msg.params.name.slice(PREFIX.length);
  }
  upstream.stdin.write(`${JSON.stringify(msg)}\n`);
});
lines(upstream.stdout, (msg) => {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
});
process.stdin.on("end", () => upstream.stdin.end());
