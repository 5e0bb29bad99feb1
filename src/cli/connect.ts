/**
 * How the CLI reaches a server: a transport for a server config (stdio, Streamable HTTP,
 * legacy HTTP+SSE, or auto), and the handshake over it.
 */
import type { McpServerConfig } from "../config/types.ts";
import type { McpClient } from "../mcp/client.ts";
import type { McpClientOptions } from "../mcp/client-types.ts";
import type { InitializeResult } from "../mcp/types.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import type { StartedProcess } from "../transport/stdio-spawn.ts";
import type { Transport } from "../transport/transport.ts";
import { EarlyStartedTransport } from "./early-start.ts";
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

export interface TransportOptions {
  /** Pass the whole environment to a stdio server, not only the minimal one plus `env`. */
  inheritEnv?: boolean;
  /** Where a stdio server's stderr lines go (they are kept in the transport's ring buffer too). */
  onStderr?: (line: string) => void;
  /** A remote server's auth provider (bearer tokens, the OAuth flow on 401/403). */
  auth?: HttpAuthProvider;
  /** A stdio server's process, already spawned for this config (early-process.ts). */
  process?: StartedProcess;
}

/**
 * The transport for a config whose secrets are resolved. Nothing starts until `connect`.
 * Remote transports are loaded only for a remote config (see connect-remote.ts).
 */
export async function transportFor(config: McpServerConfig, options: TransportOptions = {}): Promise<Transport> {
  if (config.transport === "stdio") {
    return new StdioClientTransport({
      command: config.command ?? "",
      args: config.args ?? [],
      cwd: config.cwd,
      env: config.env,
      inheritEnv: options.inheritEnv,
      name: config.name,
      onStderr: options.onStderr,
      process: options.process,
    });
  }
  return (await import("./connect-remote.ts")).remoteTransport(config, options.auth);
}

/** Which protocol era the CLI's client speaks (`--era`); McpClient's `era` option. */
export type CliEra = NonNullable<McpClientOptions["era"]>;

/**
 * A client for the CLI, named after the installed version; `era` defaults to `auto`. Its
 * module (with the peer and the protocol's) and the version's (which reads package.json)
 * load here, after a stdio server was started (open.ts), so that the server boots meanwhile.
 */
export async function newClient(connectTimeoutMs: number | undefined, era?: CliEra): Promise<McpClient> {
  const [{ McpClient }, { packageVersion }] = await Promise.all([import("../mcp/client.ts"), import("./version.ts")]);
  const clientInfo = { name: "mcp-bridge-cli", version: packageVersion() ?? "0.0.0" };
  return trackClient(new McpClient(era === undefined ? { clientInfo, connectTimeoutMs } : { clientInfo, connectTimeoutMs, era }));
}

/**
 * Completes the handshake over `transport`; the client closes the transport if it fails.
 * `where` names a remote server in {@link ConnectedServer.target} (its URL, shown to people).
 */
export async function connectWith(client: McpClient, transport: Transport, where = "", signal?: AbortSignal): Promise<ConnectedServer> {
  // process.hrtime, not performance.now(): the first use of `performance` loads perf_hooks
  // and seven more of Node's modules, a cost every cold CLI run would pay.
  const started = transport instanceof EarlyStartedTransport ? transport.startedAt : process.hrtime.bigint();
  const init = await client.connect(transport, signal === undefined ? {} : { signal });
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  const stdio = transport instanceof EarlyStartedTransport ? transport.inner : transport;
  if (stdio instanceof StdioClientTransport) {
    const target = stdio.resolvedCommand ?? "";
    return { client, transport, pid: stdio.pid, target, init, readyMs };
  }
  const chosen = (await import("./connect-remote.ts")).remoteProtocol(transport);
  return { client, transport, pid: undefined, target: `${where} (${chosen})`, init, readyMs };
}

export interface StdioTarget {
  command: string[];
  name?: string;
  cwd?: string;
  timeoutMs?: number;
}

/** Spawns a stdio server and completes the handshake (the demo's way in). */
export async function connectStdio(target: StdioTarget): Promise<ConnectedServer> {
  const [command = "", ...args] = target.command;
  const transport = await transportFor({ name: target.name ?? command, transport: "stdio", command, args, cwd: target.cwd });
  return connectWith(await newClient(target.timeoutMs), transport);
}
