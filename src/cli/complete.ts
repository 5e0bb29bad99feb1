/**
 * `mcp-bridge complete`: asks the server to complete one argument (`completion/complete`).
 *
 *   mcp-bridge complete prompt <name> <argument> [<partial value>] [--context '{"arg":"value"}'] <server>
 *   mcp-bridge complete resource <uri-template> <argument> [<partial value>] [--context ...] <server>
 *
 * Prints one value per line (ready for shell completion); when the server has more values than
 * it sent, says so on stderr so that stdout stays a clean list.
 */
import type { CompleteRequestParams } from "../mcp/types.ts";
import { flag, jsonObjectArg, onlyPositionals, type ParsedArgs, stringValues, UsageError } from "./args.ts";
import { printable } from "./format.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import { checkCompleteResult } from "./render.ts";
import { ExitCode } from "./report.ts";

const SYNOPSIS = "mcp-bridge complete (prompt <name> | resource <uri-template>) <argument> [<partial value>] <server>";

/** The request the command line describes; a usage error if it describes none. */
function completeParams(args: ParsedArgs): CompleteRequestParams {
  const [, kind, target, argument, value = ""] = args.positionals;
  if (kind !== "prompt" && kind !== "resource") {
    throw new UsageError(`complete needs "prompt" or "resource" first, got ${JSON.stringify(kind ?? "")}: ${SYNOPSIS}`);
  }
  if (!target || !argument) throw new UsageError(`complete ${kind} needs a ${kind === "prompt" ? "prompt name" : "URI template"} and an argument name: ${SYNOPSIS}`);
  onlyPositionals(args, 5, SYNOPSIS);
  const params: CompleteRequestParams = {
    ref: kind === "prompt" ? { type: "ref/prompt", name: target } : { type: "ref/resource", uri: target },
    argument: { name: argument, value },
  };
  const context = flag(args, "context");
  if (context !== undefined) params.context = { arguments: stringValues(jsonObjectArg(context, "--context"), "--context") };
  return params;
}

export function runComplete(args: ParsedArgs, io: CliIo): Promise<number> {
  const params = completeParams(args);
  return withServer(args, io, async (server, out) => {
    const result = checkCompleteResult(await server.client.complete(params, { timeoutMs: server.requestTimeoutMs }));
    if (args.flags.has("json")) {
      out.out(JSON.stringify(result, null, 2));
      return ExitCode.Ok;
    }
    const { values, total, hasMore } = result.completion;
    // One value per line: a value's own line breaks and control characters are shown escaped.
    if (values.length > 0) out.out(values.map((v) => printable(v).replace(/\n/g, "\\n")).join("\n"));
    if (hasMore === true || (typeof total === "number" && total > values.length)) {
      out.err(`mcp-bridge: the server has more values than these ${values.length}${typeof total === "number" ? ` (${total} in all)` : ""}; type more of the value to narrow them`);
    }
    return ExitCode.Ok;
  });
}
