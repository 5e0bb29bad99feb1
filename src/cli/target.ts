/**
 * Which server a command talks to, from the command line: `-- <command> [args...]` (stdio),
 * `--url <url>` (remote), or `--config FILE --server NAME` (an entry of a config file in any
 * format the config parsers read). All three become one {@link McpServerConfig}.
 */
import { basename } from "node:path";
import type { McpServerConfig } from "../config/types.ts";
import { flag, type ParsedArgs, UsageError } from "./args.ts";

const TRANSPORT_CHOICES = ["auto", "http", "sse"];

/** The server named on the command line, not yet resolved (secrets still references). */
export async function serverFromArgs(args: ParsedArgs): Promise<McpServerConfig> {
  const configFile = flag(args, "config");
  const serverName = flag(args, "server");
  const url = flag(args, "url");
  const transport = flag(args, "transport");
  const given = [configFile !== undefined, url !== undefined, args.command.length > 0].filter(Boolean).length;
  if (given > 1) throw new UsageError("give one of --config FILE --server NAME, --url <url>, or -- <command>");
  if (serverName !== undefined && configFile === undefined) throw new UsageError("--server NAME needs --config FILE");
  if (configFile !== undefined) {
    if (transport !== undefined || args.flags.has("header") || args.flags.has("env")) {
      throw new UsageError("--transport, --header and --env cannot be combined with --config (set them in the file)");
    }
    return configServer(configFile, serverName);
  }
  if (url !== undefined) {
    if (args.flags.has("env") || args.flags.has("inherit-env")) {
      throw new UsageError("--env and --inherit-env are for a stdio server (-- <command>), not --url");
    }
    if (transport !== undefined && !TRANSPORT_CHOICES.includes(transport)) {
      throw new UsageError(`--transport must be auto, http or sse, got ${JSON.stringify(transport)}`);
    }
    return { name: "remote", transport: (transport ?? "auto") as McpServerConfig["transport"], url, headers: headerFlags(args) };
  }
  if (transport !== undefined || args.flags.has("header")) throw new UsageError("--transport and --header need --url");
  return commandServer(args);
}

/**
 * The stdio server of `-- <command> [args...]` with its `--env` pairs. Throws a
 * {@link UsageError} when no command is given or a pair has no name.
 */
export function commandServer(args: ParsedArgs): McpServerConfig {
  const [command, ...commandArgs] = args.command;
  if (command === undefined) {
    throw new UsageError("no server given: add -- <command> [args...], --url <url>, or --config FILE --server NAME");
  }
  return { name: basename(command), transport: "stdio", command, args: commandArgs, env: envFlags(args) };
}

function envFlags(args: ParsedArgs): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of args.flags.get("env") ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env expects NAME=value, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/** Parses repeated `--header 'Name: value'` flags. */
function headerFlags(args: ParsedArgs): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of args.flags.get("header") ?? []) {
    const colon = h.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header expects 'Name: value', got a value without a name`);
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  return headers;
}

/**
 * Reads a config file and picks one server by name. Every failure is a usage error (exit 2)
 * naming the file; a missing or unknown name lists the names the file does define.
 */
async function configServer(file: string, name: string | undefined): Promise<McpServerConfig> {
  // Loaded only for --config: the parsers are a third of what `inspect -- <command>` would
  // otherwise load, and node:fs/promises a dozen of Node's own modules.
  // report.ts too: the early spawn (early-spawn.ts) reads `-- <command>` through this module
  // before anything else of the command has loaded.
  const [{ readFile }, { MAX_CONFIG_FILE_BYTES }, { formatProblem, parseJsonText, parseMcpJsonFile }, { CliError, ExitCode }] = await Promise.all([
    import("node:fs/promises"),
    import("../config/parse-common.ts"),
    import("../config/parse.ts"),
    import("./report.ts"),
  ]);
  let text: string;
  try {
    const bytes = await readFile(file);
    // Plain: caught just below and reported as the CliError every read failure becomes.
    if (bytes.length > MAX_CONFIG_FILE_BYTES) throw new Error(`larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    text = bytes.toString("utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new CliError(ExitCode.Usage, "CONFIG", `cannot read config file ${file}: ${reason}`, { cause: err });
  }
  const decoded = parseJsonText(text, file);
  if (!decoded.ok) throw new CliError(ExitCode.Usage, "CONFIG", formatProblem(decoded.problem));
  const parsed = parseMcpJsonFile(decoded.value, file);
  const found = name === undefined ? undefined : parsed.servers.find((s) => s.name === name);
  if (found) return found;
  const names = parsed.servers.map((s) => s.name);
  const available = names.length > 0 ? `available: ${names.join(", ")}` : "it defines no usable server";
  const problems = parsed.problems.filter((p) => p.severity === "error").map((p) => `\n  ${formatProblem(p)}`);
  const what = name === undefined ? "--config needs --server NAME" : `no server ${JSON.stringify(name)} in ${file}`;
  throw new CliError(ExitCode.Usage, "CONFIG", `${what}; ${available}${problems.join("")}`);
}
