// The baseline of the CLI's cold path: a command-line program written with nothing but
// node:child_process, JSON.parse and JSON.stringify. It does on the wire what
// `mcp-bridge inspect --json -- <server>` does with a server that declares only tools:
// spawn, initialize, notifications/initialized, tools/list (every page), print the listing as
// JSON, end the server's stdin, wait for it to exit, exit. It imports no part of mcp-bridge.
//
//   node scripts/bench/raw-cli.mjs -- <command> [args...]
import { spawn } from "node:child_process";

const dash = process.argv.indexOf("--");
const [command, ...args] = dash === -1 ? [] : process.argv.slice(dash + 1);
if (command === undefined) {
  process.stderr.write("usage: raw-cli.mjs -- <command> [args...]\n");
  process.exit(2);
}

// Detached like ours (the server leads its own process group), stderr read and dropped.
const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
child.stderr.resume();
const exited = new Promise((resolve) => child.once("exit", resolve));
child.once("error", (err) => {
  process.stderr.write(`raw-cli: spawn ${command} failed: ${err.message}\n`);
  process.exit(3);
});

const pending = new Map();
let nextId = 1;
let rest = "";
child.stdout.setEncoding("utf8");
child.stdout.on("data", (chunk) => {
  const lines = (rest + chunk).split("\n");
  rest = lines.pop();
  for (const line of lines) {
    if (line.length === 0) continue;
    const message = JSON.parse(line);
    const waiter = message.method === undefined ? pending.get(message.id) : undefined;
    if (!waiter) continue;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  }
});

function request(method, params) {
  const id = nextId++;
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

const init = await request("initialize", {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "raw-cli", version: "1.0.0" },
});
child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
const tools = [];
let cursor;
do {
  const page = await request("tools/list", cursor === undefined ? {} : { cursor });
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor !== undefined);
process.stdout.write(`${JSON.stringify({ serverInfo: init.serverInfo, protocolVersion: init.protocolVersion, tools }, null, 2)}\n`);
child.stdin.end();
await exited;
