/**
 * The gateway row of section 11 over Streamable HTTP, as an HTTP server child of the kind
 * http-child.ts starts: an upstream echo server on HTTP (the command after `--`, which prints
 * its URL like every HTTP server of the benchmark), and `mcp-bridge serve --http` in front of
 * it, configured with that URL. Prints `{"url": <the gateway's>, "pid": <serve's pid>}` once
 * serve listens (the pid is the process whose CPU counts as the server's), and on stdin EOF
 * stops serve (SIGTERM) and the upstream (stdin EOF), then exits. Imports no part of
 * mcp-bridge: it runs the built CLI as a user would.
 *
 *   node gateway-http-server.js <cli main.js> <config dir> -- <upstream command...>
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHttpServer } from "./http-child.ts";

const [cli, dir, dash, ...upstreamCommand] = process.argv.slice(2);
if (cli === undefined || dir === undefined || dash !== "--" || upstreamCommand.length === 0) {
  process.stderr.write("usage: gateway-http-server.js <cli main.js> <config dir> -- <upstream command...>\n");
  process.exit(2);
}

const START_TIMEOUT_MS = 20_000;

const upstream = await startHttpServer({ command: upstreamCommand[0]!, args: upstreamCommand.slice(1) });
const config = join(dir, `gateway-http-${process.pid}.json`);
writeFileSync(config, JSON.stringify({ mcpServers: { echo: { type: "http", url: upstream.url.href, trust: "trusted" } } }));
const serve = spawn(process.execPath, [cli, "serve", "--config", config, "--http", "127.0.0.1:0", ...gatewayFlags()], { stdio: ["ignore", "ignore", "pipe"] });
const exited = new Promise<void>((resolve) => serve.once("exit", () => resolve()));

/**
 * The flags every gateway of the benchmark runs with (see gateway.ts): no rate limit, and caps
 * above section 11e's sessions (each session has its own connection to the upstream).
 */
function gatewayFlags(): string[] {
  return ["--rate-limit", "off", "--max-sessions", "1000", "--max-upstreams", "1100"];
}

try {
  const url = await servingUrl(serve);
  process.stdout.write(`${JSON.stringify({ url, pid: serve.pid })}\n`);
} catch (err) {
  process.stderr.write(`gateway-http-server: ${(err as Error).message}\n`);
  serve.kill("SIGKILL");
  await upstream.close();
  process.exit(1);
}

process.stdin.resume();
process.stdin.on("end", () => {
  serve.kill("SIGTERM");
  const timer = setTimeout(() => serve.kill("SIGKILL"), 5000);
  void exited.then(async () => {
    clearTimeout(timer);
    await upstream.close();
    process.exit(0);
  });
});

/** The URL serve logs once it listens ("... serving N upstream(s) at http://..."); its other lines pass through. */
function servingUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`serve did not listen within ${START_TIMEOUT_MS} ms:\n${text}`)), START_TIMEOUT_MS);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      text += chunk;
      const match = / at (http:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        child.stderr!.removeAllListeners("data");
        child.stderr!.resume(); // its later lines are not needed; never let the pipe fill
        resolve(match[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`serve exited (code ${String(code)}) before listening:\n${text}`)));
  });
}
