/**
 * One connection attempt of a {@link ServerConnection}: prepare the server (secrets, policy),
 * start its transport, do the handshake and read the tool list, all under the server's
 * `timeout`. An attempt that was abandoned (a timeout, a close) is `dead`: its late results are
 * ignored and the connection shuts its process down.
 */
import { raceDeadline, TIMED_OUT } from "../util/deadline.ts";
import type { ResolvedServerConfig } from "../config/types.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import { McpClient } from "../mcp/client.ts";
import type { Tool } from "../mcp/types.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import type { Transport } from "../transport/transport.ts";
import { clientFeatureOptions, forwardElicitationComplete } from "./client-features.ts";
import type { ServerConnectionOptions } from "./connection.ts";
import { createTransport, prepareServer } from "./transport-factory.ts";

/** What an attempt needs from its connection. */
export interface AttemptDeps {
  readonly config: ResolvedServerConfig;
  readonly options: ServerConnectionOptions;
  /** The server's auth provider (see `ServerConnectionOptions.auth`), the same for every attempt. */
  readonly auth: HttpAuthProvider | undefined;
  /** A new transport, before it starts: the connection tracks its process from here on. */
  onTransport(transport: Transport): void;
  /** A new client, before it connects: the connection listens to its events. */
  onClient(client: McpClient): void;
  log(source: "stderr" | "transport", level: string, message: string): void;
}

export class ConnectAttempt {
  /** Abandoned: whatever it still produces is ignored. */
  dead = false;
  client: McpClient | undefined;
  transport: Transport | undefined;
  readonly #deps: AttemptDeps;

  constructor(deps: AttemptDeps) {
    this.#deps = deps;
  }

  /** Resolves with the server's tools (none without the `tools` capability); rejects with `TIMEOUT` past `config.timeout`. */
  async run(): Promise<Tool[]> {
    const name = this.#deps.config.name;
    const timeoutMs = this.#deps.config.timeout;
    const tools = await raceDeadline(this.#handshake(), timeoutMs);
    if (tools !== TIMED_OUT) return tools;
    // A reply discarded as too long (its id unreadable) is the likely reason: say so.
    const discarded = this.client?.connection?.lastDiscardedLine;
    const meanwhile = discarded === undefined ? "" : `; meanwhile ${discarded}`;
    throw new BridgeError("TIMEOUT", `server ${JSON.stringify(name)} did not become ready within ${timeoutMs} ms (start, handshake and tools/list)${meanwhile}`, {
      details: { timeoutMs },
    });
  }

  async #handshake(): Promise<Tool[]> {
    const { config, options } = this.#deps;
    const prepared = await prepareServer(config, options);
    if (this.dead) throw abandonedError();
    const factory = options.transportFactory ?? createTransport;
    const transport = factory(prepared, {
      onStderr: (line) => this.#deps.log("stderr", "info", line),
      onLog: (message) => this.#deps.log("transport", "debug", message),
      shutdownGraceMs: options.shutdownGraceMs,
      auth: this.#deps.auth,
    });
    const client = new McpClient({
      ...clientFeatureOptions(config.name, options.clientFeatures, options.redactor),
      clientInfo: options.clientInfo,
      era: options.era,
      // The handshake era's server default (ours: info); a stateless server sends no log
      // messages to a request that declares no level (docs/decisions.md 133).
      logLevel: "info",
      connectTimeoutMs: config.timeout,
      // Every other request (tools/list, resources, prompts, ping) gets the server's own limit.
      requestTimeoutMs: config.timeout,
      toolTimeoutMs: config.toolTimeout,
    });
    forwardElicitationComplete(client, config.name, options.clientFeatures);
    this.client = client;
    this.transport = transport;
    this.#deps.onTransport(transport);
    this.#deps.onClient(client);
    await client.connect(transport);
    if (this.dead) throw abandonedError();
    return hasTools(client) ? await client.listTools() : [];
  }
}

export function hasTools(client: McpClient): boolean {
  return client.serverCapabilities?.tools !== undefined;
}

function abandonedError(): BridgeError {
  return new BridgeError("CLOSED", "connection attempt abandoned");
}
