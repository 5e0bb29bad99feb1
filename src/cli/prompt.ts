/** `mcp-bridge prompt <name> ['<json args>']`: gets one prompt and prints its messages. */
import { jsonObjectArg, onlyPositionals, type ParsedArgs, stringValues, UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import { checkPromptResult, renderPrompt } from "./render.ts";
import { ExitCode } from "./report.ts";

const SYNOPSIS = `mcp-bridge prompt <name> ['{"arg":"value"}'] <server>`;

export function runPrompt(args: ParsedArgs, io: CliIo): Promise<number> {
  const [, name, rawArgs = "{}"] = args.positionals;
  if (!name) throw new UsageError(`prompt needs a prompt name: ${SYNOPSIS}`);
  onlyPositionals(args, 3, SYNOPSIS);
  const promptArgs = stringValues(jsonObjectArg(rawArgs, "prompt arguments"), "prompt arguments");
  return withServer(args, io, async (server, out) => {
    const result = checkPromptResult(await server.client.getPrompt(name, promptArgs, { timeoutMs: server.requestTimeoutMs }));
    out.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderPrompt(result));
    return ExitCode.Ok;
  });
}
