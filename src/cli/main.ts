#!/usr/bin/env node
/**
 * The `mcp-bridge` command line.
 *
 *   mcp-bridge demo
 *   mcp-bridge inspect [--json] (-- <command> [args...] | --url <url> [--transport auto|http|sse] [--header 'Name: value']...)
 *   mcp-bridge call [--json] <tool> '<json args>' (-- <command> [args...] | --url <url> ...)
 *   mcp-bridge acp-agent [--servers <file>] [--startup-timeout ms] [--no-mcp-over-acp]
 */
import { realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { BridgeError, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { parseArgs, UsageError } from "./args.ts";

const USAGE = `usage:
  mcp-bridge demo
  mcp-bridge inspect [--json] [--timeout ms] <server>
  mcp-bridge call [--json] [--timeout ms] <tool> '<json args>' <server>
  mcp-bridge acp-agent [--servers <file>] [--startup-timeout ms] [--no-mcp-over-acp]   the reference ACP agent on stdio
  mcp-bridge shim <port>        stdio MCP server piped to a conductor (token in MCP_BRIDGE_SHIM_TOKEN)
where <server> is one of
  [--env NAME=value]... [--inherit-env] -- <command> [args...]      a stdio server
  --url <url> [--transport auto|http|sse] [--header 'Name: value']...  a remote server`;

const SPEC = { valued: ["env", "timeout", "url", "transport", "header", "servers", "startup-timeout"], boolean: ["json", "inherit-env", "help", "no-mcp-over-acp"] };

/** Runs the CLI; returns the exit code. Output goes through `out`/`err` so tests can capture it. */
export async function main(argv: readonly string[], out = (t: string) => console.log(t), err = (t: string) => console.error(t)): Promise<number> {
  try {
    const args = parseArgs(argv, SPEC);
    const sub = args.positionals[0];
    if (args.flags.has("help") || sub === "help" || sub === undefined) {
      out(USAGE);
      return sub === undefined && !args.flags.has("help") ? 2 : 0;
    }
    // Each command loads its own modules, and only when it runs: `shim` is started as a stdio
    // MCP server for every session that uses it and needs 7 modules, the CLI as a whole 73
    // (each ES module costs Node 20 a fixed ~0.3-0.5 ms at start-up).
    switch (sub) {
      case "demo":
        return await (await import("./demo.ts")).runDemo({ out });
      case "inspect":
        return await (await import("./inspect.ts")).runInspect(args, { out });
      case "call":
        return await (await import("./inspect.ts")).runCall(args, { out });
      case "acp-agent":
        return await (await import("./acp-agent.ts")).runAcpAgent(args, { err });
      case "shim":
        return await (await import("./shim.ts")).runShimCommand(args, { err });
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

/**
 * Whether this module is the program Node was started with. `process.argv[1]` is the path as
 * invoked, which for an installed package is the `node_modules/.bin/mcp-bridge` symlink, while
 * `import.meta.url` is the file it resolves to: so compare the real path.
 */
function isProgram(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isProgram()) {
  // A reader that went away (`mcp-bridge inspect ... | head -1`) breaks stdout (or stderr):
  // the next write fails with EPIPE, which unhandled kills the process with a stack trace and
  // leaves its servers' process groups behind. Instead: close every server the command
  // opened, print nothing more, and exit 0, as a reader that stopped reading is not a failure.
  let broken = false;
  const onOutputError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== "EPIPE") throw error;
    if (broken) return;
    broken = true;
    void import("./open-clients.ts")
      .then((clients) => clients.closeOpenClients())
      .finally(() => {
        // The command ends by itself once its servers are gone; this bounds anything else.
        setTimeout(() => process.exit(0), 1000).unref();
      });
  };
  process.stdout.on("error", onOutputError);
  process.stderr.on("error", onOutputError);
  const unlessBroken = (write: (text: string) => void) => (text: string) => {
    if (!broken) write(text);
  };
  main(process.argv.slice(2), unlessBroken((t) => console.log(t)), unlessBroken((t) => console.error(t))).then((code) => {
    process.exitCode = broken ? 0 : code;
  });
}
