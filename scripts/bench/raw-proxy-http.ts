/**
 * The raw baseline of the gateway section over Streamable HTTP (11c-d): the least an HTTP MCP
 * proxy does, with node:http alone and no part of mcp-bridge. It starts the upstream HTTP
 * server (the command after `--`, which prints its URL like every HTTP server of the
 * benchmark) and forwards each request to it over one keep-alive agent: a JSON POST body is
 * parsed, the bridged tool name of a tools/call renamed (`mcp__echo__echo` -> `echo`) and
 * re-serialised, the JSON reply parsed and re-serialised; any other body (the GET stream's
 * events, a DELETE) is piped through. The session and protocol headers pass both ways. No
 * checks, limits, middleware or per-client upstream: what any Node HTTP proxy pays anyway.
 *
 *   node raw-proxy-http.js -- <upstream command...>
 *
 * Prints `{"url": ...}` once it listens; on stdin EOF closes, stops the upstream and exits.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { startHttpServer } from "./http-child.ts";

const PREFIX = "mcp__echo__";
/** Request and reply headers a Streamable HTTP proxy must carry across. */
const PASSED_REQUEST = ["accept", "content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id"];
const PASSED_REPLY = ["content-type", "mcp-session-id", "cache-control"];

const dash = process.argv.indexOf("--");
const command = dash === -1 ? [] : process.argv.slice(dash + 1);
if (command.length === 0) {
  process.stderr.write("usage: raw-proxy-http.js -- <upstream command...>\n");
  process.exit(2);
}

const upstream = await startHttpServer({ command: command[0]!, args: command.slice(1) });
const agent = new http.Agent({ keepAlive: true });

function pick(headers: http.IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === "string") out[name] = value;
  }
  return out;
}

/** `body` with a tools/call's bridged name renamed to the upstream's, re-serialised. */
function rewrite(body: string): string {
  const message = JSON.parse(body) as { method?: string; params?: { name?: unknown } };
  if (message.method === "tools/call" && typeof message.params?.name === "string" && message.params.name.startsWith(PREFIX)) {
    message.params.name = message.params.name.slice(PREFIX.length);
  }
  return JSON.stringify(message);
}

function forward(req: http.IncomingMessage, res: http.ServerResponse, body: string | undefined): void {
  const headers = pick(req.headers, PASSED_REQUEST);
  const out = http.request(upstream.url, { method: req.method, agent, headers }, (reply) => {
    const json = reply.headers["content-type"]?.startsWith("application/json") === true;
    if (!json) {
      res.writeHead(reply.statusCode ?? 502, pick(reply.headers, PASSED_REPLY));
      reply.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    reply.on("data", (chunk: Buffer) => chunks.push(chunk));
    reply.on("end", () => {
      const text = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(reply.statusCode ?? 502, pick(reply.headers, PASSED_REPLY)).end(text);
    });
  });
  out.on("error", () => res.destroy());
  res.on("close", () => {
    if (!res.writableFinished) out.destroy(); // the downstream client went away mid-reply
  });
  out.end(body);
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST") {
    forward(req, res, undefined);
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => forward(req, res, rewrite(Buffer.concat(chunks).toString("utf8"))));
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);

process.stdin.resume();
process.stdin.on("end", () => {
  server.closeAllConnections();
  server.close();
  agent.destroy();
  void upstream.close().finally(() => process.exit(0));
});
