/**
 * `mcp-bridge acp-agent [--servers <file>] [--startup-timeout ms] [--no-mcp-over-acp]`: runs
 * the reference ACP agent (src/acp/agent.ts) over this process's stdin and stdout until stdin
 * ends.
 *
 * It speaks MCP over ACP (the draft binding): it announces `_meta.mcp_acp_transport` and
 * reaches the `acp:` servers of `mcpServers` through its ACP connection. `--no-mcp-over-acp`
 * plays an agent without that support (such servers are then refused with -32602), which is
 * what a conductor's shim is for.
 *
 * `--servers` names a JSON file of the agent's own MCP servers, in any format the config
 * parsers take (`{"mcpServers": {...}}`, `{"servers": [...]}`, ...); they join every session,
 * and a server the editor sends under the same name replaces them. Servers from a file are
 * `untrusted` unless it says otherwise, so their tools ask the editor before first use.
 *
 * stdout carries nothing but ACP messages; every log line goes to stderr.
 */
import { readFile } from "node:fs/promises";
import { AcpAgentConnection } from "../acp/connection.ts";
import { ScriptedAgent } from "../acp/agent.ts";
import { mcpOverAcpHook } from "../acp/mcp-over-acp-hook.ts";
import { formatProblem } from "../config/parse-common.ts";
import { parseJsonText, parseMcpJsonFile } from "../config/parse-files.ts";
import type { McpServerConfig } from "../config/types.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import { flag, intFlag, UsageError, type ParsedArgs } from "./args.ts";

/** Serves one editor; resolves with the exit code once the connection ended and every server is gone. */
export async function runAcpAgent(args: ParsedArgs, io: { err: (text: string) => void }): Promise<number> {
  if (args.positionals.length > 1 || args.command.length > 0) throw new UsageError("acp-agent takes no arguments besides its options");
  const log = (line: string): void => io.err(`mcp-bridge acp-agent: ${line}`);
  const file = flag(args, "servers");
  const agentServers = file === undefined ? [] : await readServers(file, log);
  if (agentServers === undefined) return 2;

  const startupTimeoutMs = intFlag(args, "startup-timeout", 10_000);
  const overAcp = !args.flags.has("no-mcp-over-acp");
  let agent: ScriptedAgent | undefined;
  const connection = new AcpAgentConnection(
    (conn) => (agent = new ScriptedAgent(conn, { agentServers, startupTimeoutMs, log, ...(overAcp ? { mcpOverAcp: mcpOverAcpHook(conn) } : {}) })),
    { log },
  );
  await connection.start();
  const own = agentServers.length > 0 ? `, ${agentServers.length} server(s) of its own` : "";
  log(`serving ACP on stdio (MCP over ACP ${overAcp ? "on" : "off"}${own})`);
  await connection.closed;
  await agent?.sessions.closeAll();
  log("the editor went away; every session is closed");
  return 0;
}

/** The agent's servers from a file, or undefined (after logging every problem) when it has errors. */
async function readServers(path: string, log: (line: string) => void): Promise<McpServerConfig[] | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    log(`cannot read --servers file ${JSON.stringify(path)}: ${errorMessage(err)}`);
    return undefined;
  }
  const decoded = parseJsonText(text, path);
  const parsed = decoded.ok ? parseMcpJsonFile(decoded.value, path) : { servers: [], problems: [decoded.problem] };
  for (const problem of parsed.problems) log(formatProblem(problem));
  return parsed.problems.some((p) => p.severity === "error") ? undefined : parsed.servers;
}
