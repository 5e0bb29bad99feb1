/**
 * Test harness for McpServer: connects a server to a raw JsonRpcPeer over the in-memory pair
 * and records what the server sends.
 */
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/message.ts";
import type { McpServer, ServerSession } from "../../src/mcp/server.ts";
import type { ClientCapabilities, InitializeResult } from "../../src/mcp/types.ts";
import { LATEST_PROTOCOL_VERSION } from "../../src/mcp/versions.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";

export interface Note {
  method: string;
  params: unknown;
}

export interface Harness {
  session: ServerSession;
  client: JsonRpcPeer;
  /** Every notification the client received, in order. */
  notes: Note[];
  /** Resolves with the params of the next notification named `method` (or one already seen and not yet taken). */
  nextNote(method: string): Promise<unknown>;
  /** Sends initialize (and, unless told not to, notifications/initialized). */
  initialize(opts?: { version?: string; capabilities?: ClientCapabilities; notify?: boolean }): Promise<InitializeResult>;
  /** Lets pending timers (the list_changed flush) run, then round-trips a ping. */
  settle(): Promise<void>;
}

export async function connect(server: McpServer): Promise<Harness> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  const session = await server.connect(serverSide);
  const client = new JsonRpcPeer(clientSide);
  const notes: Note[] = [];
  const taken = new Set<Note>();
  const waiters: Array<() => void> = [];
  client.fallbackNotificationHandler = (method, params) => {
    notes.push({ method, params });
    waiters.splice(0).forEach((w) => w());
  };
  await client.start();
  return {
    session,
    client,
    notes,
    async nextNote(method) {
      for (;;) {
        const found = notes.find((n) => n.method === method && !taken.has(n));
        if (found) {
          taken.add(found);
          return found.params;
        }
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    async initialize(opts = {}) {
      const result = await client.request<InitializeResult>("initialize", {
        protocolVersion: opts.version ?? LATEST_PROTOCOL_VERSION,
        capabilities: opts.capabilities ?? {},
        clientInfo: { name: "harness", version: "0.0.1" },
      });
      if (opts.notify !== false) await client.notify("notifications/initialized");
      return result;
    },
    async settle() {
      await new Promise((r) => setTimeout(r, 0));
      await client.request("ping");
    },
  };
}

/** A client side with no peer: sends raw values and records raw replies. */
export async function connectRaw(server: McpServer) {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  const session = await server.connect(serverSide);
  const received: unknown[] = [];
  const waiters: Array<() => void> = [];
  clientSide.onmessage = (m) => {
    received.push(m);
    waiters.splice(0).forEach((w) => w());
  };
  return {
    session,
    received,
    send: (v: unknown) => clientSide.send(v as JsonRpcMessage),
    async next(): Promise<unknown> {
      while (received.length === 0) await new Promise<void>((r) => waiters.push(r));
      return received.shift();
    },
  };
}

/** Awaits a promise expected to reject with an RpcError-like `code`; returns the error. */
export async function rejectsWithCode(p: Promise<unknown>, code: number): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: unknown; message: string; data?: unknown };
    if (e.code !== code) throw new Error(`expected code ${code}, got ${String(e.code)}: ${e.message}`);
    return e as { code: number; message: string; data?: unknown };
  }
  throw new Error(`expected a rejection with code ${code}, but it resolved`);
}
