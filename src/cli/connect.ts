/**
 * How the CLI reaches a server: from `-- <command> [args...]` (stdio) or from `--url <url>`
 * (Streamable HTTP, legacy HTTP+SSE, or auto).
 */
import { McpClient } from "../mcp/client.ts";
import { AutoHttpClientTransport } from "../transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../transport/http-client.ts";
import { SseClientTransport } from "../transport/sse-client.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import type { Transport } from "../transport/transport.ts";
import type { InitializeResult } from "../mcp/types.ts";
import { UsageError } from "./args.ts";
import { trackClient } from "./open-clients.ts";

export interface ConnectedServer {
  client: McpClient;
  transport: Transport;
  /** The spawned process id (stdio only). */
  pid: number | undefined;
  /** What was reached: the resolved command path, or the URL and the transport chosen. */
  target: string;
  init: InitializeResult;
  /** Time from spawn (or first request) to a completed handshake, ms. */
  readyMs: number;
}

export type HttpTransportChoice = "auto" | "http" | "sse";

export interface UrlTarget {
  url: string;
  transport: HttpTransportChoice;
  headers: Record<string, string>;
  timeoutMs?: number;
}

/** Connects to a remote server over HTTP; closes everything on failure. */
export async function connectUrl(target: UrlTarget): Promise<ConnectedServer> {
  const options = { url: target.url, headers: target.headers };
  const transport =
    target.transport === "http"
      ? new StreamableHttpClientTransport(options)
      : target.transport === "sse"
        ? new SseClientTransport(options)
        : new AutoHttpClientTransport(options);
  const client = newClient(target.timeoutMs);
  const started = performance.now();
  const init = await client.connect(transport);
  const chosen = transport instanceof AutoHttpClientTransport ? `auto: ${transport.selected}` : target.transport;
  return { client, transport, pid: undefined, target: `${target.url} (${chosen})`, init, readyMs: performance.now() - started };
}

function newClient(timeoutMs: number | undefined): McpClient {
  return trackClient(new McpClient({ clientInfo: { name: "mcp-bridge-cli", version: "0.1.0" }, connectTimeoutMs: timeoutMs }));
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
  const client = newClient(target.timeoutMs);
  const started = performance.now();
  const init = await client.connect(transport);
  return {
    client,
    transport,
    pid: transport.pid,
    target: transport.resolvedCommand ?? command,
    init,
    readyMs: performance.now() - started,
  };
}
