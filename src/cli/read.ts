/** `mcp-bridge read <uri>`: reads one resource and prints its contents. */
import type { ParsedArgs } from "./args.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import { checkReadResult, renderContents } from "./render.ts";
import { ExitCode } from "./report.ts";
import { readArgs } from "./server-command-args.ts";

export function runRead(args: ParsedArgs, io: CliIo, started?: Promise<EarlySpawn | undefined>): Promise<number> {
  const { uri } = readArgs(args);
  return withServer(args, io, async (server, out) => {
    const result = checkReadResult(await server.client.readResource(uri, { timeoutMs: server.requestTimeoutMs }));
    out.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderContents(result.contents));
    return ExitCode.Ok;
  }, started);
}
