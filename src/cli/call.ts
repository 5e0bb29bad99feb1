/**
 * `mcp-bridge call <tool> ['<json args>']`: calls one tool and prints its result. Progress the
 * server reports is shown on one line of stderr that is rewritten in place, only when stderr
 * is a terminal.
 */
import type { ProgressInfo } from "../jsonrpc/peer-types.ts";
import type { CallToolResult } from "../mcp/types.ts";
import type { ParsedArgs } from "./args.ts";
import { oneLine } from "./format.ts";
import type { CliIo } from "./io.ts";
import { withServer } from "./open.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import { renderResult } from "./render.ts";
import { ExitCode } from "./report.ts";
import { callArgs } from "./server-command-args.ts";

export function runCall(args: ParsedArgs, io: CliIo, started?: Promise<EarlySpawn | undefined>): Promise<number> {
  const { tool, toolArgs } = callArgs(args);
  return withServer(args, io, async (server, out) => {
    await server.client.listTools({ timeoutMs: server.requestTimeoutMs }).catch(() => undefined); // output schemas for validation
    const progress = out.progress;
    const onProgress = progress && ((p: ProgressInfo) => progress(oneLine(progressLine(tool, p), out.columns - 1)));
    let result: CallToolResult;
    try {
      result = await server.client.callTool(tool, toolArgs, { timeoutMs: server.toolTimeoutMs, onProgress });
    } finally {
      progress?.(undefined);
    }
    out.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderResult(result));
    return result.isError ? ExitCode.Failed : ExitCode.Ok;
  }, started);
}

/** `add: 3/10 (30%) copying files`; the total and the message only when the server sent them. */
function progressLine(tool: string, p: ProgressInfo): string {
  const share = p.total !== undefined && p.total > 0 ? `/${p.total} (${Math.floor((p.progress / p.total) * 100)}%)` : "";
  return `${tool}: ${p.progress}${share}${p.message ? ` ${p.message}` : ""}`;
}
