/** An ACP editor and agent in one process: the agent's connection and a raw peer as the editor. */
import { AcpAgentConnection, type Agent } from "../../src/acp/connection.ts";
import { AcpMcpSessions, type AcpMcpSessionsOptions } from "../../src/acp/sessions.ts";
import type { SessionNotification } from "../../src/acp/types.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { echoServer, memoryServers } from "../manager/helpers.ts";

export interface Pair {
  connection: AcpAgentConnection;
  editor: JsonRpcPeer;
  /** Every `session/update` the editor received, in order. */
  updates: SessionNotification[];
  /** Every other notification the editor received. */
  notes: { method: string; params: unknown }[];
  close(): Promise<void>;
}

/** ACP's peer settings, for the editor side. */
export const EDITOR_OPTIONS = {
  cancelMethod: "$/cancel_request",
  cancelParams: (id: string | number) => ({ requestId: id }),
  progressMethod: null,
} as const;

/** Connects `agent` to a fresh editor peer over the in-memory pair; both started. */
export async function pair(agent: Agent | ((c: AcpAgentConnection) => Agent), log?: (line: string) => void): Promise<Pair> {
  const [agentSide, editorSide] = InMemoryTransport.createLinkedPair();
  const connection = new AcpAgentConnection(agent, { transport: agentSide, log });
  const editor = new JsonRpcPeer(editorSide, EDITOR_OPTIONS);
  const updates: SessionNotification[] = [];
  const notes: { method: string; params: unknown }[] = [];
  editor.setNotificationHandler("session/update", (p) => void updates.push(p as SessionNotification));
  editor.fallbackNotificationHandler = (method, params) => void notes.push({ method, params });
  await connection.start();
  await editor.start();
  return { connection, editor, updates, notes, close: () => editor.close() };
}

/** The code (and data) of a rejected request. */
export async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  try {
    await promise;
  } catch (err) {
    const e = err as { code?: unknown; message: string; data?: unknown };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, message: e.message, data: e.data };
  }
  throw new Error("the request succeeded");
}

/** AcpMcpSessions over in-process echo servers (one per server name and attempt) and an in-memory editor. */
export async function memorySessions(options: AcpMcpSessionsOptions) {
  const servers = memoryServers(() => echoServer());
  const logs: string[] = [];
  let sessions!: AcpMcpSessions;
  const agent: Agent = { initialize: () => ({}), newSession: () => ({ sessionId: "unused" }), prompt: () => ({ stopReason: "end_turn" }), cancel: () => {} };
  const p = await pair((conn) => {
    sessions = new AcpMcpSessions(conn, { ...options, log: (l) => logs.push(l), manager: { transportFactory: servers.factory, processGuard: false } });
    return agent;
  });
  await p.editor.request("initialize", { protocolVersion: 1 });
  const trustOf = (id: string) => Object.fromEntries(sessions.status(id).map((s) => [s.name, s.trust]));
  return {
    sessions,
    servers,
    logs,
    trustOf,
    close: async () => {
      await sessions.closeAll();
      await p.close();
    },
  };
}
