/**
 * `mcp-bridge shim <port>`: the stdio MCP server a conductor declares to an agent that cannot
 * speak MCP over ACP. It pipes stdin/stdout to the conductor on 127.0.0.1:<port>, proving
 * itself with the one-time token in `MCP_BRIDGE_SHIM_TOKEN`. stdout carries only protocol
 * messages; diagnostics go to stderr.
 */
import { runShim, SHIM_TOKEN_ENV } from "../acp/shim.ts";
import type { ParsedArgs } from "./args.ts";
import { UsageError } from "./args.ts";

/** Runs the shim; resolves with the process exit code. */
export async function runShimCommand(args: ParsedArgs, io: { err: (text: string) => void }): Promise<number> {
  const portText = args.positionals[1];
  if (portText === undefined || args.positionals.length > 2) throw new UsageError("shim takes exactly one argument: <port>");
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) throw new UsageError(`shim: ${JSON.stringify(portText)} is not a TCP port`);
  const token = process.env[SHIM_TOKEN_ENV];
  if (token === undefined || token === "") {
    io.err(`mcp-bridge shim: ${SHIM_TOKEN_ENV} is not set; the conductor that declared this server passes it`);
    return 2;
  }
  // Nothing this process starts needs it.
  delete process.env[SHIM_TOKEN_ENV];
  const code = await runShim({ port, token, log: (line) => io.err(`mcp-bridge shim: ${line}`) });
  // The pipes are closed; do not let a stray handle keep a finished shim alive.
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}
