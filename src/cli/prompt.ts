/** `mcp-bridge prompt <name> ['<json args>']`: gets one prompt and prints its messages. */
import type { ParsedArgs } from "./args.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import { checkPromptResult, renderPrompt } from "./render.ts";
import { ExitCode } from "./report.ts";
import { promptArgs } from "./server-command-args.ts";

export function runPrompt(args: ParsedArgs, io: CliIo, started?: Promise<EarlySpawn | undefined>): Promise<number> {
  const { name, promptArgs: values } = promptArgs(args);
  return withServer(args, io, async (server, out) => {
    const result = checkPromptResult(await server.client.getPrompt(name, values, { timeoutMs: server.requestTimeoutMs }));
    out.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderPrompt(result));
    return ExitCode.Ok;
  }, started);
}
