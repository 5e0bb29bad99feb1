/**
 * In-process servers for manager tests: a transport factory that gives every connection
 * attempt a fresh McpServer over the in-memory pair (a "process" per attempt), with switches to
 * crash it (close the server side) or mute it (drop everything the client sends).
 */
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import { McpServer } from "../../src/mcp/server.ts";
import type { McpServerConfig } from "../../src/config/types.ts";
import type { TransportFactory } from "../../src/manager/transport-factory.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import type { StateChange } from "../../src/manager/events.ts";

export interface FakeProcess {
  server: McpServer;
  serverSide: InMemoryTransport;
  clientSide: InMemoryTransport;
  /** Messages the client sent that reached the server. */
  received: JsonRpcMessage[];
  muted: boolean;
  /** The server side goes away, as a crashed process would. */
  crash(): Promise<void>;
}

export interface MemoryServers {
  factory: TransportFactory;
  /** Every attempt's process, per server name, in order. */
  processes: Map<string, FakeProcess[]>;
  /** The newest process of a server. */
  latest(name: string): FakeProcess;
}

/** How the "process" of an attempt misbehaves from the start. */
export interface Faults {
  /** The server side closes as soon as the client starts (a process exiting at start). */
  exitAtStart?: (name: string, attempt: number) => boolean;
  /** Everything the client sends is dropped (a hung process). */
  mute?: (name: string, attempt: number) => boolean;
}

/** `build(name, attempt)` makes the server a connection attempt talks to. */
export function memoryServers(build: (name: string, attempt: number) => McpServer, faults: Faults = {}): MemoryServers {
  const processes = new Map<string, FakeProcess[]>();
  const factory: TransportFactory = (prepared) => {
    const name = prepared.config.name;
    const list = processes.get(name) ?? [];
    processes.set(name, list);
    const attempt = list.length;
    const server = build(name, attempt);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const proc: FakeProcess = {
      server,
      serverSide,
      clientSide,
      received: [],
      muted: faults.mute?.(name, attempt) ?? false,
      crash: () => serverSide.close(),
    };
    list.push(proc);
    const connected = server.connect(serverSide);
    const start = clientSide.start.bind(clientSide);
    clientSide.start = async () => {
      await connected;
      await start();
      if (faults.exitAtStart?.(name, attempt)) queueMicrotask(() => void serverSide.close());
    };
    const send = clientSide.send.bind(clientSide);
    clientSide.send = async (message) => {
      if (proc.muted) return;
      for (const m of Array.isArray(message) ? message : [message]) proc.received.push(m);
      await send(message);
    };
    return clientSide;
  };
  const latest = (name: string): FakeProcess => {
    const list = processes.get(name);
    if (list === undefined || list.length === 0) throw new Error(`no process for ${name}`);
    return list[list.length - 1]!;
  };
  return { factory, processes, latest };
}

/** A server with an `echo` tool and any extra tools named. */
export function echoServer(extra: string[] = []): McpServer {
  const server = new McpServer({ name: "mem", version: "1.0.0" });
  server.tool(
    { name: "echo", description: "Echoes text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
    (args) => ({ content: [{ type: "text", text: String(args.text ?? "") }] }),
  );
  for (const name of extra) {
    server.tool({ name, inputSchema: { type: "object" } }, () => ({ content: [{ type: "text", text: name }] }));
  }
  return server;
}

/** A config the in-memory factory can serve (an HTTP URL passes the URL check; nothing is dialled). */
export function memConfig(name: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name, transport: "http", url: "http://127.0.0.1:9/mcp", trust: "trusted", restartOnCrash: true, timeout: 5_000, ...extra };
}

/** Resolves with the first state event for which `match` holds. */
export function waitForState(
  source: { on(event: "state", listener: (s: StateChange) => void): () => void },
  match: (s: StateChange) => boolean,
  timeoutMs = 10_000,
): Promise<StateChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching state event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = source.on("state", (s) => {
      if (match(s)) {
        clearTimeout(timer);
        off();
        resolve(s);
      }
    });
  });
}

