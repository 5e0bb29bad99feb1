/**
 * How the CLI reaches a server: from `-- <command> [args...]` (stdio), with the stderr of the
 * server kept for the error message when it fails.
 */
import { McpClient } from "../mcp/client.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import type { InitializeResult } from "../mcp/types.ts";
import { UsageError } from "./args.ts";

export interface ConnectedServer {
  client: McpClient;
  transport: StdioClientTransport;
  init: InitializeResult;
  /** Time from spawn to a completed handshake, ms. */
  readyMs: number;
}

export interface StdioTarget {
  command: string[];
  name?: string;
  cwd?: string;
  env?: Record<string, string>;
  inheritEnv?: boolean;
  timeoutMs?: number;
  /** Where the server's stderr lines go (default: dropped, kept in the ring buffer). */
  onStderr?: (line: string) => void;
}

/** Spawns the server and completes the handshake; closes everything on failure. */
export async function connectStdio(target: StdioTarget): Promise<ConnectedServer> {
  const [command, ...args] = target.command;
  if (!command) throw new UsageError("no server command given after --");
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: target.cwd,
    env: target.env,
    inheritEnv: target.inheritEnv,
    name: target.name,
    onStderr: target.onStderr,
  });
  const client = new McpClient({ clientInfo: { name: "mcp-bridge-cli", version: "0.1.0" }, connectTimeoutMs: target.timeoutMs });
  const started = performance.now();
  const init = await client.connect(transport);
  return { client, transport, init, readyMs: performance.now() - started };
}
