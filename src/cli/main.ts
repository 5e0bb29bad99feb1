#!/usr/bin/env node
/**
 * The `mcp-bridge` command line: look at and use any MCP server (what people use the MCP
 * Inspector's CLI mode for), run the demo, the reference ACP agent, or the MCP-over-ACP shim.
 * The full synopsis is {@link USAGE}; exit codes are `ExitCode` in report.ts.
 */
import { pathToFileURL } from "node:url";
import { parseArgs, UsageError } from "./args.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import type { CliIo, Terminal } from "./io.ts";
import type { ServerCommand } from "./server-command-args.ts";

// Not an `import` of node:fs: that loads ~30 more of Node's modules (docs/decisions.md 98).
const { realpathSync } = process.getBuiltinModule("node:fs");

const USAGE = `usage: mcp-bridge <command> [options] <server>

commands
  inspect                         what the server offers: tools with their arguments, resources, prompts
  call <tool> ['<json args>']     call a tool (progress is shown on stderr when it is a terminal)
  read <uri>                      read a resource
  prompt <name> ['<json args>']   get a prompt; its arguments are strings: '{"name":"Ada"}'
  complete prompt <name> <argument> [<partial value>]
  complete resource <uri-template> <argument> [<partial value>]
                                  values the server suggests for an argument, one per line
  demo                            start the bundled fixture servers and call one tool
  acp-agent [--servers <file>] [--startup-timeout ms] [--no-mcp-over-acp]
                                  the reference ACP agent on stdio
  serve --config <file> (--stdio | --http 127.0.0.1:PORT [--sse] [--allow-remote])
        [--max-sessions N] [--max-upstreams N] [--audit <file>|-] [--rate-limit <calls a minute>|off]
        [--health-interval ms] [--no-namespace] [--era legacy|auto|modern]
                                  one MCP server in front of every server of <file>: tools as
                                  mcp__<server>__<tool>, each client with its own upstream processes
                                  unless "serve.isolation" shares them; status at mcp-bridge://status;
                                  calls per upstream are limited to 100 a minute unless --rate-limit says otherwise;
                                  upstreams are spoken to in the 2025 handshake era unless --era says otherwise
                                  (an upstream that speaks only 2026-07-28 needs --era auto);
                                  ends (upstreams stopped) at stdin's end or SIGTERM
  serve --check --config <file>   print every problem of <file> for serving; exit 2 on an error
  shim <port>                     stdio MCP server piped to a conductor (token in MCP_BRIDGE_SHIM_TOKEN)
  vendor <dir> [--subset client|server|manager|acp|all] | vendor --verify <dir>
                                  copy the library's source with a MANIFEST.sha256, or check a copy
  auth status <url> | auth logout <url>
                                  the OAuth tokens kept for a remote server (never shown), or forget them

<server> is one of
  [--env NAME=value]... [--inherit-env] -- <command> [args...]        a stdio server
  --url <url> [--transport auto|http|sse] [--header 'Name: value']...   a remote server
  --config <file> --server <name>   an entry of a config file: Claude Desktop / Cursor "mcpServers",
                                    VS Code "servers", or the native form

options
  --json               results as JSON on stdout; a failure as one JSON line {"error":{...}} on stderr
  --timeout <ms>       limit for connecting and for each request
                       (default: the config's, else connect 30000, call 120000, other requests 60000)
  --era <era>          protocol era: auto (default: try 2026-07-28's server/discover, else initialize),
                       legacy (initialize, MCP 2025 sessions) or modern (2026-07-28 only, stateless)
  --log-level <level>  have the server send log messages at this level and above, shown on stderr
                       (debug info notice warning error critical alert emergency)
  --verbose            show the server's stderr and log messages on stderr as they come
  --context '<json>'   complete: values already chosen for the other arguments
  --open               OAuth: open the authorization URL in a browser (it is always printed on stderr)
  --auth-timeout <ms>  OAuth: how long to wait for the browser step (default 300000); tokens are kept
                       in $XDG_CONFIG_HOME/mcp-bridge/oauth/tokens.json (else ~/.config/...), mode 0600
  --version            print the version
  --help               print this text

exit codes
  0  done
  1  the tool returned an error (isError: true), or a failure none of the codes below names
  2  usage or config file error; nothing was started
  3  cannot start or reach the server (spawn failed, it exited, connection refused, 401/403)
  4  timeout
  5  protocol error: the server answered with a JSON-RPC error, or with something that is not MCP`;

const SPEC = {
  valued: ["env", "timeout", "url", "transport", "header", "servers", "startup-timeout", "config", "server", "log-level", "context", "subset", "auth-timeout", "http", "rate-limit", "health-interval", "era", "max-sessions", "max-upstreams", "audit"],
  boolean: ["json", "inherit-env", "help", "version", "verbose", "no-mcp-over-acp", "verify", "open", "stdio", "check", "no-namespace", "sse", "allow-remote"],
};

/**
 * The commands that talk to one server, whose server `main` may spawn before they load: the
 * names of server-command-args.ts, kept here so that other commands load nothing of it.
 */
const SERVER_COMMANDS: ReadonlySet<string> = new Set<ServerCommand>(["inspect", "call", "read", "prompt", "complete"]);

/** The process's terminal: stdout's width, and in-place progress when stderr is a terminal. */
function processTerminal(): Terminal {
  const columns = process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 80;
  if (!process.stderr.isTTY) return { columns };
  return { columns, progress: (line) => void process.stderr.write(line === undefined ? "\r\x1b[K" : `\r\x1b[K${line}`) };
}

/** Output for the commands: a progress line on show is cleared before anything else is printed. */
function commandIo(out: (t: string) => void, err: (t: string) => void, terminal: Terminal): CliIo {
  let showing = false;
  const clear = () => {
    if (showing) terminal.progress?.(undefined);
    showing = false;
  };
  const io: CliIo = { columns: terminal.columns, out: (t) => (clear(), out(t)), err: (t) => (clear(), err(t)) };
  const { progress } = terminal;
  if (progress) {
    io.progress = (line) => {
      showing = line !== undefined;
      progress(line);
    };
  }
  return io;
}

/**
 * Runs the CLI; returns the exit code. Output goes through `out`/`err` and the terminal's
 * facts through `terminal`, so tests can capture the one and choose the other. `terminal` may
 * be a function: it is called once, after an early spawn and before the first output (by
 * default it reads the process's stdout and stderr).
 */
export async function main(
  argv: readonly string[],
  out = (t: string) => console.log(t),
  err = (t: string) => console.error(t),
  terminal: Terminal | (() => Terminal) = processTerminal,
): Promise<number> {
  let made: CliIo | undefined;
  const ready = (): CliIo => (made ??= commandIo(out, err, typeof terminal === "function" ? terminal() : terminal));
  let started: Promise<EarlySpawn | undefined> | undefined;
  try {
    const args = parseArgs(argv, SPEC);
    const sub = args.positionals[0];
    const printsOnly = args.flags.has("version") || args.flags.has("help");
    // A stdio server named by `-- <command>` is spawned first, and boots while the command's
    // modules load (early-process.ts): loaded side by side, the two module graphs would finish
    // together. The command takes the server over; it is stopped below if nothing did. The
    // process's stdout and stderr are touched only after it (ready()): making them costs Node
    // a few ms, which the server's boot now hides (docs/decisions.md 175).
    if (!printsOnly && SERVER_COMMANDS.has(sub)) {
      started = import("./early-process.ts")
        .then((m) => m.startEarly(sub as ServerCommand, args))
        .then(async (early) => early && (await import("./early-spawn.ts")).adoptEarly(early, args));
      await started;
    }
    const io = ready();
    if (args.flags.has("version")) return await printVersion(io);
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
        return await (await import("./inspect.ts")).runInspect(args, io, started);
      case "call":
        return await (await import("./call.ts")).runCall(args, io, started);
      case "read":
        return await (await import("./read.ts")).runRead(args, io, started);
      case "prompt":
        return await (await import("./prompt.ts")).runPrompt(args, io, started);
      case "complete":
        return await (await import("./complete.ts")).runComplete(args, io, started);
      case "acp-agent":
        return await (await import("./acp-agent.ts")).runAcpAgent(args, { err });
      case "serve":
        return await (await import("./serve.ts")).runServe(args, io);
      case "shim":
        return await (await import("./shim.ts")).runShimCommand(args, { err });
      case "vendor":
        return await (await import("./vendor.ts")).runVendor(args, io);
      case "auth":
        return await (await import("./auth-command.ts")).runAuth(args, io);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(sub)}`);
    }
  } catch (e) {
    const { reportFailure } = await import("./report.ts");
    return reportFailure(e, { json: jsonRequested(argv), write: ready().err, usage: USAGE });
  } finally {
    // Idempotent: a command that took the server has closed it already. A failed load of the
    // early spawn's module was reported above.
    await started?.then(
      (spawned) => spawned?.transport.close(),
      () => undefined,
    );
  }
}

/** The command `argv` names, or "" when it does not parse. */
function commandOf(argv: readonly string[]): string {
  try {
    return parseArgs(argv, SPEC).positionals[0] ?? "";
  } catch {
    return "";
  }
}

/** `--json` anywhere before `--`, even when the rest of the line did not parse. */
function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

async function printVersion(io: CliIo): Promise<number> {
  const version = (await import("./version.ts")).packageVersion();
  if (version === undefined) {
    io.err("mcp-bridge: version unknown: no package.json of mcp-bridge above the CLI's files (a vendored copy?)");
    return 1;
  }
  io.out(version);
  return 0;
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
  // main calls this before its first output (after an early spawn, see main).
  const terminal = (): Terminal => {
    process.stdout.on("error", onOutputError);
    process.stderr.on("error", onOutputError);
    return processTerminal();
  };
  const unlessBroken = (write: (text: string) => void) => (text: string) => {
    if (!broken) write(text);
  };
  const argv = process.argv.slice(2);
  main(argv, unlessBroken((t) => console.log(t)), unlessBroken((t) => console.error(t)), terminal).then((code) => {
    process.exitCode = broken ? 0 : code;
    // A command that talked to one server has closed it, and its process is gone, when main
    // returns: nothing is left to wait for but Node's own teardown of the heap, which a
    // process that exits skips (4 ms of the cold path on Node 24; docs/decisions.md 175).
    // The exit waits until what was written to stdout and stderr has left.
    if (!broken && SERVER_COMMANDS.has(commandOf(argv))) process.stdout.write("", () => process.stderr.write("", () => process.exit()));
  });
}
