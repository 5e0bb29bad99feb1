/**
 * Hand-written types for the parts of the Agent Client Protocol (ACP) version 1 that
 * mcp-bridge speaks, as the agent side. Shapes follow `schema/v1/schema.json` of
 * `@agentclientprotocol/sdk` 2.4.0; optional fields that we never send or read are left out.
 *
 * Every object may carry `_meta` (ACP's extension point); implementations must not assume
 * anything about its keys.
 */
import type { AcpMcpServer } from "../config/parse-acp.ts";

export type { AcpMcpServer, AcpHttpServer, AcpSseServer, AcpStdioServer, AcpNameValue } from "../config/parse-acp.ts";

/** The ACP protocol version this library speaks (an integer, unlike MCP's dates). */
export const ACP_PROTOCOL_VERSION = 1;
/** Every ACP version this library can speak, newest first. */
export const SUPPORTED_ACP_VERSIONS: readonly number[] = [1];

/**
 * ACP's JSON-RPC error codes: the shared {@link ErrorCode} table, which holds ACP's own
 * (`RequestCancelled` -32800, `AuthRequired` -32000); `ResourceNotFound` (-32002) with
 * `data.sessionId` names an unknown session.
 * @deprecated Use `ErrorCode`; this name stays as an alias of the same object.
 */
export { ErrorCode as AcpErrorCode } from "../jsonrpc/errors.ts";

/** Method names, by direction. */
export const ACP_METHODS = {
  initialize: "initialize",
  sessionNew: "session/new",
  sessionLoad: "session/load",
  sessionResume: "session/resume",
  sessionPrompt: "session/prompt",
  sessionCancel: "session/cancel",
  sessionClose: "session/close",
  /** Agent to client (notification). */
  sessionUpdate: "session/update",
  /** Agent to client (request). */
  requestPermission: "session/request_permission",
  /** Either direction (notification). */
  cancelRequest: "$/cancel_request",
} as const;

export type Meta = Record<string, unknown>;

export interface Implementation {
  name: string;
  version: string;
  title?: string;
  _meta?: Meta;
}

// ---------------------------------------------------------------------------------------------
// initialize

export interface ClientCapabilities {
  fs?: { readTextFile?: boolean; writeTextFile?: boolean; _meta?: Meta };
  terminal?: boolean;
  /** Opt-in session features; `notices` allows the `notice` session update. */
  session?: { notices?: Meta | null; _meta?: Meta } | null;
  _meta?: Meta;
}

export interface McpCapabilities {
  /** The agent connects to `type: "http"` servers. */
  http?: boolean;
  /** The agent connects to `type: "sse"` servers. */
  sse?: boolean;
  _meta?: Meta;
}

export interface PromptCapabilities {
  image?: boolean;
  audio?: boolean;
  embeddedContext?: boolean;
  _meta?: Meta;
}

export interface SessionCapabilities {
  /** Present when the agent answers `session/resume`. */
  resume?: { _meta?: Meta } | null;
  /** Present when the agent answers `session/close`. */
  close?: { _meta?: Meta } | null;
  _meta?: Meta;
}

export interface AgentCapabilities {
  /** The agent answers `session/load`. */
  loadSession?: boolean;
  promptCapabilities?: PromptCapabilities;
  mcpCapabilities?: McpCapabilities;
  sessionCapabilities?: SessionCapabilities;
  _meta?: Meta;
}

/** An authentication method the agent offers (the "agent" variant: the agent runs it). */
export interface AuthMethod {
  id: string;
  name: string;
  description?: string;
  _meta?: Meta;
}

export interface InitializeRequest {
  protocolVersion: number;
  clientCapabilities?: ClientCapabilities;
  clientInfo?: Implementation | null;
  _meta?: Meta;
}

export interface InitializeResponse {
  protocolVersion: number;
  agentCapabilities?: AgentCapabilities;
  authMethods?: AuthMethod[];
  agentInfo?: Implementation | null;
  _meta?: Meta;
}

// ---------------------------------------------------------------------------------------------
// Sessions

/**
 * The MCP servers an editor sends: the ACP `McpServer` union (see config/parse-acp.ts). The
 * connection checks only that `mcpServers` is an array: entries arrive as sent, so parse them
 * (`parseAcpMcpServers`, or `AcpMcpSessions`) before trusting their shape.
 */
export type McpServer = AcpMcpServer;

export interface NewSessionRequest {
  /** Absolute path of the session's working directory. */
  cwd: string;
  mcpServers: McpServer[];
  additionalDirectories?: string[];
  _meta?: Meta;
}

export interface NewSessionResponse {
  sessionId: string;
  _meta?: Meta;
}

export interface LoadSessionRequest {
  sessionId: string;
  cwd: string;
  /** Required by the schema; this library tolerates it absent, meaning "keep the session's servers". */
  mcpServers?: McpServer[];
  additionalDirectories?: string[];
  _meta?: Meta;
}

export interface LoadSessionResponse {
  _meta?: Meta;
}

export interface ResumeSessionRequest {
  sessionId: string;
  cwd: string;
  mcpServers?: McpServer[];
  additionalDirectories?: string[];
  _meta?: Meta;
}

export interface ResumeSessionResponse {
  _meta?: Meta;
}

export interface CloseSessionRequest {
  sessionId: string;
  _meta?: Meta;
}

export interface CloseSessionResponse {
  _meta?: Meta;
}

/** `session/cancel` (a notification): stop the session's current turn. */
export interface CancelNotification {
  sessionId: string;
  _meta?: Meta;
}

/** `$/cancel_request` (a notification): give up on one request by id. */
export interface CancelRequestNotification {
  requestId: string | number | null;
  _meta?: Meta;
}

// ---------------------------------------------------------------------------------------------
// Content

export interface Annotations {
  audience?: ("assistant" | "user")[] | null;
  lastModified?: string | null;
  priority?: number | null;
  _meta?: Meta;
}

export interface TextResourceContents {
  uri: string;
  text: string;
  mimeType?: string | null;
  _meta?: Meta;
}

export interface BlobResourceContents {
  uri: string;
  /** Base64. */
  blob: string;
  mimeType?: string | null;
  _meta?: Meta;
}

export type ContentBlock =
  | { type: "text"; text: string; annotations?: Annotations | null; _meta?: Meta }
  | { type: "image"; data: string; mimeType: string; uri?: string | null; annotations?: Annotations | null; _meta?: Meta }
  | { type: "audio"; data: string; mimeType: string; annotations?: Annotations | null; _meta?: Meta }
  | {
      type: "resource_link";
      uri: string;
      name: string;
      title?: string | null;
      description?: string | null;
      mimeType?: string | null;
      size?: number | null;
      annotations?: Annotations | null;
      _meta?: Meta;
    }
  | { type: "resource"; resource: TextResourceContents | BlobResourceContents; annotations?: Annotations | null; _meta?: Meta };

// ---------------------------------------------------------------------------------------------
// Prompt turns

export interface PromptRequest {
  sessionId: string;
  prompt: ContentBlock[];
  _meta?: Meta;
}

export type StopReason = "end_turn" | "max_tokens" | "max_turn_requests" | "refusal" | "cancelled";

export interface PromptResponse {
  stopReason: StopReason;
  _meta?: Meta;
}

/** What kind of work a tool call does; editors choose icons by it. */
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";

export type ToolCallStatus = "pending" | "in_progress" | "completed" | "failed";

/** Content shown for a tool call (the `diff` and `terminal` variants are not used here). */
export interface ToolCallContent {
  type: "content";
  content: ContentBlock;
  _meta?: Meta;
}

/** The fields of a `tool_call` update: a new tool call. */
export interface ToolCall {
  toolCallId: string;
  /** A human-readable title. */
  title: string;
  /** The tool's programmatic name. */
  name?: string | null;
  kind?: ToolKind;
  status?: ToolCallStatus;
  content?: ToolCallContent[];
  rawInput?: unknown;
  rawOutput?: unknown;
  _meta?: Meta;
}

/** The fields of a `tool_call_update`: only `toolCallId` is required; the rest replace. */
export interface ToolCallUpdate {
  toolCallId: string;
  title?: string | null;
  name?: string | null;
  kind?: ToolKind | null;
  status?: ToolCallStatus | null;
  content?: ToolCallContent[] | null;
  rawInput?: unknown;
  rawOutput?: unknown;
  _meta?: Meta;
}

/** A slash command the agent offers (`/tools`); `input.hint` describes what follows it. */
export interface AvailableCommand {
  name: string;
  description: string;
  input?: { hint: string; _meta?: Meta } | null;
  _meta?: Meta;
}

export type NoticeSeverity = "info" | "warning" | "error";

/** The session updates mcp-bridge sends (a subset of ACP's `SessionUpdate` union). */
export type SessionUpdate =
  | { sessionUpdate: "agent_message_chunk"; content: ContentBlock; _meta?: Meta }
  | { sessionUpdate: "agent_thought_chunk"; content: ContentBlock; _meta?: Meta }
  | ({ sessionUpdate: "tool_call" } & ToolCall)
  | ({ sessionUpdate: "tool_call_update" } & ToolCallUpdate)
  | { sessionUpdate: "available_commands_update"; availableCommands: AvailableCommand[]; _meta?: Meta }
  /** Only for clients that advertised `clientCapabilities.session.notices`. */
  | { sessionUpdate: "notice"; severity: NoticeSeverity; title: string; description?: string | null; _meta?: Meta };

/** Params of `session/update`. */
export interface SessionNotification {
  sessionId: string;
  update: SessionUpdate;
  _meta?: Meta;
}

// ---------------------------------------------------------------------------------------------
// Permission

export type PermissionOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

export interface PermissionOption {
  optionId: string;
  /** Shown to the user. */
  name: string;
  kind: PermissionOptionKind;
  _meta?: Meta;
}

export interface RequestPermissionRequest {
  sessionId: string;
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
  _meta?: Meta;
}

export type RequestPermissionOutcome = { outcome: "cancelled" } | { outcome: "selected"; optionId: string; _meta?: Meta };

export interface RequestPermissionResponse {
  outcome: RequestPermissionOutcome;
  _meta?: Meta;
}
