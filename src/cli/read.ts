/** `mcp-bridge read <uri>`: reads one resource and prints its contents. */
import { onlyPositionals, type ParsedArgs, UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import { checkReadResult, renderContents } from "./render.ts";
import { ExitCode } from "./report.ts";

const SYNOPSIS = "mcp-bridge read <uri> <server>";

export function runRead(args: ParsedArgs, io: CliIo): Promise<number> {
  const uri = args.positionals[1];
  if (!uri) throw new UsageError(`read needs a resource URI: ${SYNOPSIS}`);
  onlyPositionals(args, 2, SYNOPSIS);
  return withServer(args, io, async (server, out) => {
    const result = checkReadResult(await server.client.readResource(uri, { timeoutMs: server.requestTimeoutMs }));
    out.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderContents(result.contents));
    return ExitCode.Ok;
  });
}
