/**
 * `mcp-bridge demo`: the main job on an embedded default. Starts the demo servers
 * (demo-server.ts, part of the package) in parallel, and one that cannot start, prints what
 * each offers, calls one tool, and shuts everything down.
 */
import { BridgeError, errorMessage } from "../jsonrpc/errors.ts";
import type { Tool } from "../mcp/types.ts";
import { connectStdio, type ConnectedServer } from "./connect.ts";
import { nodeCommand } from "../util/node-command.ts";
import { oneLine, table } from "./format.ts";
import { renderResult } from "./render.ts";

interface DemoServer {
  name: string;
  command: string[];
}

/** The embedded default: what an editor might send, including one server that cannot start. */
function defaultServers(): DemoServer[] {
  const demoServer = (args: string[]): string[] => {
    const { command, args: all } = nodeCommand(import.meta.url, "./demo-server", args);
    return [command, ...all];
  };
  return [
    { name: "echo", command: demoServer(["echo"]) },
    { name: "many-tools", command: demoServer(["many-tools", "12"]) },
    { name: "broken", command: ["mcp-bridge-no-such-server"] },
  ];
}

interface Outcome {
  server: DemoServer;
  connected?: ConnectedServer;
  tools: Tool[];
  error?: string;
}

async function start(server: DemoServer): Promise<Outcome> {
  try {
    const connected = await connectStdio({ command: server.command, name: server.name, timeoutMs: 10_000 });
    const tools = await connected.client.listTools();
    return { server, connected, tools };
  } catch (err) {
    const code = err instanceof BridgeError ? `${err.code}: ` : "";
    return { server, tools: [], error: `${code}${errorMessage(err)}` };
  }
}

export async function runDemo(io: { out: (t: string) => void }): Promise<number> {
  const began = performance.now();
  const outcomes = await Promise.all(defaultServers().map(start));
  try {
    io.out("servers");
    io.out(table(
      ["name", "transport", "state", "version", "tools", "ready (ms)"],
      outcomes.map((o) => [
        o.server.name,
        "stdio",
        o.connected ? "ready" : "failed",
        o.connected?.init.protocolVersion ?? "-",
        o.connected ? String(o.tools.length) : "-",
        o.connected ? o.connected.readyMs.toFixed(0) : "-",
      ]),
    ));
    for (const o of outcomes) if (o.error) io.out(`  ${o.server.name}: ${oneLine(o.error, 160)}`);
    io.out("\ntools");
    io.out(table(
      ["server", "tool", "description"],
      outcomes.flatMap((o) => o.tools.map((t) => [o.server.name, t.name, oneLine(t.description, 60)])),
    ));
    const echo = outcomes.find((o) => o.server.name === "echo")?.connected;
    if (!echo) {
      io.out("\nthe echo server did not start; nothing to call");
      return 1;
    }
    io.out('\ncall echo.echo {"text":"hello from mcp-bridge"}');
    const result = await echo.client.callTool("echo", { text: "hello from mcp-bridge" });
    io.out(`-> ${renderResult(result)}`);
    return result.isError ? 1 : 0;
  } finally {
    await Promise.all(outcomes.map((o) => o.connected?.client.close()));
    const pids = outcomes.map((o) => o.connected?.pid).filter((p): p is number => p !== undefined);
    io.out(`\nshut down ${pids.length} server processes (pids ${pids.join(", ")}) in ${(performance.now() - began).toFixed(0)} ms total`);
  }
}
