#!/usr/bin/env node
/**
 * The `mcp-bridge` command line.
 *
 *   mcp-bridge demo
 *   mcp-bridge inspect [--json] (-- <command> [args...] | --url <url> [--transport auto|http|sse] [--header 'Name: value']...)
 *   mcp-bridge call [--json] <tool> '<json args>' (-- <command> [args...] | --url <url> ...)
 *   mcp-bridge acp-agent [--servers <file>] [--startup-timeout ms]
 */
import { pathToFileURL } from "node:url";
import { BridgeError, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { runAcpAgent } from "./acp-agent.ts";
import { parseArgs, UsageError } from "./args.ts";
import { runDemo } from "./demo.ts";
import { runCall, runInspect } from "./inspect.ts";
import { runShimCommand } from "./shim.ts";

const USAGE = `usage:
  mcp-bridge demo
  mcp-bridge inspect [--json] [--timeout ms] <server>
  mcp-bridge call [--json] [--timeout ms] <tool> '<json args>' <server>
  mcp-bridge acp-agent [--servers <file>] [--startup-timeout ms]   the reference ACP agent on stdio
  mcp-bridge shim <port>        stdio MCP server piped to a conductor (token in MCP_BRIDGE_SHIM_TOKEN)
where <server> is one of
  [--env NAME=value]... [--inherit-env] -- <command> [args...]      a stdio server
  --url <url> [--transport auto|http|sse] [--header 'Name: value']...  a remote server`;

const SPEC = { valued: ["env", "timeout", "url", "transport", "header", "servers", "startup-timeout"], boolean: ["json", "inherit-env", "help"] };

/** Runs the CLI; returns the exit code. Output goes through `out`/`err` so tests can capture it. */
export async function main(argv: readonly string[], out = (t: string) => console.log(t), err = (t: string) => console.error(t)): Promise<number> {
  try {
    const args = parseArgs(argv, SPEC);
    const sub = args.positionals[0];
    if (args.flags.has("help") || sub === "help" || sub === undefined) {
      out(USAGE);
      return sub === undefined && !args.flags.has("help") ? 2 : 0;
    }
    switch (sub) {
      case "demo":
        return await runDemo({ out });
      case "inspect":
        return await runInspect(args, { out });
      case "call":
        return await runCall(args, { out });
      case "acp-agent":
        return await runAcpAgent(args, { err });
      case "shim":
        return await runShimCommand(args, { err });
      default:
        throw new UsageError(`unknown command ${JSON.stringify(sub)}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`mcp-bridge: ${e.message}\n${USAGE}`);
      return 2;
    }
    const code = e instanceof BridgeError ? ` [${e.code}]` : e instanceof RpcError ? ` [JSON-RPC ${e.code}]` : "";
    err(`mcp-bridge: ${errorMessage(e)}${code}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
