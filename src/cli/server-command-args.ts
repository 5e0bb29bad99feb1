/**
 * What the commands that talk to one server (`inspect`, `call`, `read`, `prompt`, `complete`)
 * take from the command line, checked without a server: their positionals, their JSON
 * arguments, and the connection flags `withServer` reads. The commands parse their command
 * line with these functions, and `main`'s early spawn (early-spawn.ts) runs the same checks
 * first, so that a usage error still starts nothing (exit code 2).
 */
import { LOGGING_LEVELS } from "../mcp/logging-levels.ts";
import type { CompleteRequestParams, LoggingLevel } from "../mcp/types.ts";
import { eraFlag, flag, intFlag, jsonObjectArg, onlyPositionals, type ParsedArgs, stringValues, UsageError } from "./args.ts";

/** The five commands this module knows. */
export type ServerCommand = "inspect" | "call" | "read" | "prompt" | "complete";

const SYNOPSIS = {
  inspect: "mcp-bridge inspect <server>",
  call: "mcp-bridge call <tool> ['<json args>'] <server>",
  read: "mcp-bridge read <uri> <server>",
  prompt: `mcp-bridge prompt <name> ['{"arg":"value"}'] <server>`,
  complete: "mcp-bridge complete (prompt <name> | resource <uri-template>) <argument> [<partial value>] <server>",
} as const;

/** The flags of the connection every server command reads. */
export interface ConnectFlags {
  /** `--log-level`. */
  level: LoggingLevel | undefined;
  /** `--era`. */
  era: ReturnType<typeof eraFlag>;
  /** `--timeout`, ms. */
  timeout: number | undefined;
}

/** `--log-level`, `--era` and `--timeout`. */
export function connectFlags(args: ParsedArgs): ConnectFlags {
  const level = flag(args, "log-level");
  if (level !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(`--log-level must be one of ${LOGGING_LEVELS.join(", ")}; got ${JSON.stringify(level)}`);
  }
  const era = eraFlag(args);
  // Checked only when given: there is no default to fall back to here.
  const timeout = args.flags.has("timeout") ? intFlag(args, "timeout", 0) : undefined;
  return { level: level as LoggingLevel | undefined, era, timeout };
}

export function inspectArgs(args: ParsedArgs): void {
  onlyPositionals(args, 1, SYNOPSIS.inspect);
}

export function callArgs(args: ParsedArgs): { tool: string; toolArgs: Record<string, unknown> } {
  const [, tool, rawArgs = "{}"] = args.positionals;
  if (!tool) throw new UsageError(`call needs a tool name: ${SYNOPSIS.call}`);
  onlyPositionals(args, 3, SYNOPSIS.call);
  return { tool, toolArgs: jsonObjectArg(rawArgs, "tool arguments") };
}

export function readArgs(args: ParsedArgs): { uri: string } {
  const uri = args.positionals[1];
  if (!uri) throw new UsageError(`read needs a resource URI: ${SYNOPSIS.read}`);
  onlyPositionals(args, 2, SYNOPSIS.read);
  return { uri };
}

export function promptArgs(args: ParsedArgs): { name: string; promptArgs: Record<string, string> } {
  const [, name, rawArgs = "{}"] = args.positionals;
  if (!name) throw new UsageError(`prompt needs a prompt name: ${SYNOPSIS.prompt}`);
  onlyPositionals(args, 3, SYNOPSIS.prompt);
  return { name, promptArgs: stringValues(jsonObjectArg(rawArgs, "prompt arguments"), "prompt arguments") };
}

/** The request `complete`'s command line describes; a usage error if it describes none. */
export function completeParams(args: ParsedArgs): CompleteRequestParams {
  const [, kind, target, argument, value = ""] = args.positionals;
  if (kind !== "prompt" && kind !== "resource") {
    throw new UsageError(`complete needs "prompt" or "resource" first, got ${JSON.stringify(kind ?? "")}: ${SYNOPSIS.complete}`);
  }
  if (!target || !argument) {
    throw new UsageError(`complete ${kind} needs a ${kind === "prompt" ? "prompt name" : "URI template"} and an argument name: ${SYNOPSIS.complete}`);
  }
  onlyPositionals(args, 5, SYNOPSIS.complete);
  const params: CompleteRequestParams = {
    ref: kind === "prompt" ? { type: "ref/prompt", name: target } : { type: "ref/resource", uri: target },
    argument: { name: argument, value },
  };
  const context = flag(args, "context");
  if (context !== undefined) params.context = { arguments: stringValues(jsonObjectArg(context, "--context"), "--context") };
  return params;
}

const CHECKS: Readonly<Record<ServerCommand, (args: ParsedArgs) => unknown>> = {
  inspect: inspectArgs,
  call: callArgs,
  read: readArgs,
  prompt: promptArgs,
  complete: completeParams,
};

/** Every check of `command`'s command line that needs no server; throws its {@link UsageError}. */
export function checkServerCommand(command: ServerCommand, args: ParsedArgs): void {
  CHECKS[command](args);
  connectFlags(args);
}
