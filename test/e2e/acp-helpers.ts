/**
 * The reference ACP agent (`mcp-bridge acp-agent`) as a real child process, driven by a raw
 * JsonRpcPeer playing the editor. Its stderr is kept: the agent logs each stdio server's pid
 * there (`server "echo" ready (pid 123)`), which is how tests check that children are gone.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SessionNotification, SessionUpdate } from "../../src/acp/types.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { alive, reap, ROOT } from "./helpers.ts";
import {  } from "./manager-helpers.ts";
import { until } from "../helpers/wait.ts";

export interface AgentProcess {
  editor: JsonRpcPeer;
  transport: StdioClientTransport;
  /** The agent's stderr lines. */
  stderr: string[];
  /** Every message the editor received, raw, in order. */
  raw: unknown[];
  updates: SessionNotification[];
  /** The updates of one session, in order. */
  updatesOf(sessionId: string): SessionUpdate[];
  /** Pids the agent logged for a stdio server, oldest first. */
  pidsOf(server: string): number[];
  /** Ends stdin and waits for the agent to exit; returns once it is gone. */
  stop(): Promise<void>;
}

/** An ACP stdio server entry running a fixture server with this Node. */
export function fixtureEntry(name: string, file: string, flags: string[] = [], env: { name: string; value: string }[] = []) {
  return { name, ...nodeModuleCommand(join(ROOT, "fixtures", "servers", file), flags), env };
}

/** An `XDG_CONFIG_HOME` with no `mcp-bridge` folder: the agent reads no global config file of the machine's. */
const NO_GLOBAL_CONFIG = join(tmpdir(), "mcp-bridge-tests-no-global-config");

/**
 * Starts `mcp-bridge acp-agent` with `args` and connects an editor peer (not yet initialized).
 * `env` is added to the agent's environment (default `XDG_CONFIG_HOME`: a folder without config).
 */
export async function startAgent(args: string[] = [], env: Record<string, string> = {}): Promise<AgentProcess> {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    ...nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), ["acp-agent", ...args]),
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", XDG_CONFIG_HOME: NO_GLOBAL_CONFIG, ...env },
    onStderr: (line) => stderr.push(line),
    shutdownGraceMs: 5_000,
  });
  const editor = new JsonRpcPeer(transport, {
    cancelMethod: "$/cancel_request",
    cancelParams: (id) => ({ requestId: id }),
    progressMethod: null,
    requestTimeoutMs: 30_000,
  });
  const updates: SessionNotification[] = [];
  const raw: unknown[] = [];
  editor.setNotificationHandler("session/update", (p) => void updates.push(p as SessionNotification));
  await editor.start();
  const deliver = transport.onmessage!;
  transport.onmessage = (m) => {
    raw.push(m);
    deliver(m);
  };
  const pid = transport.pid;
  return {
    editor,
    transport,
    stderr,
    raw,
    updates,
    updatesOf: (id) => updates.filter((u) => u.sessionId === id).map((u) => u.update),
    pidsOf: (server) =>
      stderr.flatMap((line) => {
        const m = new RegExp(`server "${server}" ready \\(pid (\\d+)\\)`).exec(line);
        return m === null ? [] : [Number(m[1])];
      }),
    stop: async () => {
      await editor.close();
      try {
        await until(() => !alive(pid), "the agent to exit");
      } finally {
        reap(pid);
      }
    },
  };
}

/** The text of every agent message of a session, joined. */
export function messagesText(updates: readonly SessionUpdate[]): string {
  return updates.map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "")).join("");
}

export const INIT = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "test-editor", version: "0.0.1" } };

/** Sends a prompt of one text block; resolves with its stop reason. */
export async function prompt(agent: AgentProcess, sessionId: string, text: string, signal?: AbortSignal): Promise<string> {
  const r = await agent.editor.request<{ stopReason: string }>("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, { signal });
  return r.stopReason;
}
