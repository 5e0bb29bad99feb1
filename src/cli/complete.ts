/**
 * `mcp-bridge complete`: asks the server to complete one argument (`completion/complete`).
 *
 *   mcp-bridge complete prompt <name> <argument> [<partial value>] [--context '{"arg":"value"}'] <server>
 *   mcp-bridge complete resource <uri-template> <argument> [<partial value>] [--context ...] <server>
 *
 * Prints one value per line (ready for shell completion); when the server has more values than
 * it sent, says so on stderr so that stdout stays a clean list.
 */
import type { ParsedArgs } from "./args.ts";
import { printable } from "./format.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import { checkCompleteResult } from "./render.ts";
import { ExitCode } from "./report.ts";
import { completeParams } from "./server-command-args.ts";

export function runComplete(args: ParsedArgs, io: CliIo, started?: Promise<EarlySpawn | undefined>): Promise<number> {
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
  }, started);
}
