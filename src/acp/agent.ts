/**
 * The reference ACP agent: a complete agent whose "model" is a script, so that every part of
 * the MCP plumbing can be driven from an editor and tested end to end. Copy it to start your
 * own: replace `turn` with calls to a model, and keep the rest.
 *
 * Each line of a prompt is one step:
 *
 *   /tools                        list the session's bridged tools
 *   /call <bridged-name> [<json>]  call one (arguments: a JSON object, default {})
 *   /read [<server>] <uri>         read a resource (the server is found when omitted)
 *   anything else                  echoed back as an agent message
 */
import { randomUUID } from "node:crypto";
import { errorMessage } from "../jsonrpc/errors.ts";
import { sessionNotFound, type AcpAgentConnection, type Agent } from "./connection.ts";
import { AcpMcpSessions, type AcpMcpSessionsOptions } from "./sessions.ts";
import type {
  AvailableCommand,
  CancelNotification,
  CloseSessionRequest,
  ContentBlock,
  InitializeResponse,
  LoadSessionRequest,
  NewSessionRequest,
  NewSessionResponse,
  PromptRequest,
  PromptResponse,
  ResumeSessionRequest,
} from "./types.ts";

export const SCRIPTED_AGENT_INFO = { name: "mcp-bridge-scripted-agent", title: "mcp-bridge reference agent", version: "0.1.0" };

const COMMANDS: AvailableCommand[] = [
  { name: "tools", description: "List the MCP tools of this session" },
  { name: "call", description: "Call an MCP tool", input: { hint: "<bridged-name> <json arguments>" } },
  { name: "read", description: "Read an MCP resource", input: { hint: "[<server>] <uri>" } },
];

export class ScriptedAgent implements Agent {
  readonly sessions: AcpMcpSessions;
  private readonly connection: AcpAgentConnection;
  /** Every session id this process handed out, closed ones included: those can be loaded again. */
  private readonly known = new Set<string>();

  constructor(connection: AcpAgentConnection, options: AcpMcpSessionsOptions = {}) {
    this.connection = connection;
    // The reference agent owns its process: its managers kill their children on a signal.
    this.sessions = new AcpMcpSessions(connection, { ...options, manager: { processGuard: true, ...options.manager } });
  }

  initialize(): Omit<InitializeResponse, "protocolVersion"> {
    return {
      agentCapabilities: {
        ...this.sessions.agentCapabilities(),
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        sessionCapabilities: { resume: {}, close: {} },
      },
      agentInfo: SCRIPTED_AGENT_INFO,
      authMethods: [],
    };
  }

  async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const sessionId = randomUUID();
    await this.sessions.open(sessionId, params);
    this.known.add(sessionId);
    this.offerCommands(sessionId);
    return { sessionId };
  }

  /**
   * A scripted agent has no history to replay. Loading a session that is open keeps the servers
   * whose config did not change (and all of them without `mcpServers`); loading a closed one
   * starts its servers again.
   */
  async loadSession(params: LoadSessionRequest): Promise<Record<string, never>> {
    if (!this.known.has(params.sessionId)) throw sessionNotFound(params.sessionId);
    await this.sessions.open(params.sessionId, params);
    this.offerCommands(params.sessionId);
    return {};
  }

  /** Like {@link loadSession}: without history, resuming and loading are the same. */
  async resumeSession(params: ResumeSessionRequest): Promise<Record<string, never>> {
    return this.loadSession(params);
  }

  async closeSession(params: CloseSessionRequest): Promise<Record<string, never>> {
    if (!(await this.sessions.close(params.sessionId))) throw sessionNotFound(params.sessionId);
    return {};
  }

  cancel(params: CancelNotification): void {
    this.sessions.cancel(params.sessionId);
  }

  async prompt(params: PromptRequest): Promise<PromptResponse> {
    const { sessionId } = params;
    if (!this.sessions.has(sessionId)) throw sessionNotFound(sessionId);
    const signal = await this.sessions.ready(sessionId);
    const lines = params.prompt.flatMap(blockText).join("\n").split("\n").map((l) => l.trim()).filter((l) => l !== "");
    for (const line of lines) {
      if (signal.aborted) break;
      await this.turn(sessionId, line, signal);
    }
    return { stopReason: signal.aborted ? "cancelled" : "end_turn" };
  }

  /** One step of the script. Where a real agent asks its model, this one reads the line. */
  private async turn(sessionId: string, line: string, signal: AbortSignal): Promise<void> {
    const [command = "", ...rest] = line.split(/\s+/);
    try {
      if (command === "/tools") {
        const tools = await this.sessions.tools(sessionId);
        const text = tools.length === 0 ? "No MCP tools in this session." : tools.map((t) => `${t.name}: ${t.description ?? t.title}`).join("\n");
        return this.say(sessionId, text);
      }
      if (command === "/call") {
        const [, name, json = ""] = /^\/call\s+(\S+)\s*(.*)$/.exec(line) ?? [];
        if (name === undefined) return this.say(sessionId, "usage: /call <bridged-name> <json arguments>");
        const args: unknown = json === "" ? {} : JSON.parse(json);
        if (typeof args !== "object" || args === null || Array.isArray(args)) return this.say(sessionId, "the arguments must be a JSON object");
        await this.sessions.callTool(sessionId, name, args as Record<string, unknown>, { signal });
        return;
      }
      if (command === "/read") {
        const [server, uri] = rest.length >= 2 ? [rest[0], rest[1]!] : [undefined, rest[0]];
        if (uri === undefined) return this.say(sessionId, "usage: /read [<server>] <uri>");
        const { result } = await this.sessions.readResource(sessionId, uri, server);
        const parts = result.contents.map((c) => ("text" in c && typeof c.text === "string" ? c.text : `(${c.mimeType ?? "binary"} content of ${c.uri})`));
        return this.say(sessionId, parts.join("\n"));
      }
      return this.say(sessionId, line);
    } catch (err) {
      return this.say(sessionId, `${command} failed: ${errorMessage(err)}`);
    }
  }

  private say(sessionId: string, text: string): Promise<void> {
    return this.connection.sessionUpdate(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${text}\n` } });
  }

  private offerCommands(sessionId: string): void {
    // After the answer that tells the editor the session id (see AcpMcpSessions.open).
    setImmediate(() => void this.connection.sessionUpdate(sessionId, { sessionUpdate: "available_commands_update", availableCommands: COMMANDS }));
  }
}

function blockText(block: ContentBlock): string[] {
  if (block.type === "text") return [block.text];
  if (block.type === "resource_link") return [`(link: ${block.uri})`];
  return [];
}
