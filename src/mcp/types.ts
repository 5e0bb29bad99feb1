/**
 * MCP wire types (protocol 2025-11-25, which is a superset of the older handshake-era
 * revisions): the base shapes, content blocks, tools and the initialize handshake. Resources,
 * prompts, completion, logging, roots, sampling and elicitation live in `feature-types.ts`
 * and are re-exported from here, so callers import from this one module.
 *
 * Shapes are `type` aliases rather than interfaces on purpose: an object type alias is
 * assignable to `Record<string, unknown>` (the JSON-RPC params type) without a cast, an
 * interface is not.
 *
 * JSON Schemas (`inputSchema`, `outputSchema`) are typed loosely as {@link JsonSchema}: they
 * are passed through untouched, never narrowed or rewritten here.
 */

import { isPlainObject as isObject } from "../util/object.ts";

export type * from "./feature-types.ts";

export { LOGGING_LEVELS } from "./logging-levels.ts";

/** Request methods of the handshake era: call sites use these, not string literals. */
export const McpMethod = {
  Initialize: "initialize",
  Ping: "ping",
  ToolsList: "tools/list",
  ToolsCall: "tools/call",
  ResourcesList: "resources/list",
  ResourcesTemplatesList: "resources/templates/list",
  ResourcesRead: "resources/read",
  ResourcesSubscribe: "resources/subscribe",
  ResourcesUnsubscribe: "resources/unsubscribe",
  PromptsList: "prompts/list",
  PromptsGet: "prompts/get",
  CompletionComplete: "completion/complete",
  LoggingSetLevel: "logging/setLevel",
  RootsList: "roots/list",
  SamplingCreateMessage: "sampling/createMessage",
  ElicitationCreate: "elicitation/create",
  /** 2026-07-28: versions, capabilities and identity, with no handshake. */
  ServerDiscover: "server/discover",
  /** 2026-07-28: the long-lived stream of change notifications a client opted in to. */
  SubscriptionsListen: "subscriptions/listen",
} as const;

/** Notification methods of the handshake era: call sites use these, not string literals. */
export const McpNotification = {
  Initialized: "notifications/initialized",
  Cancelled: "notifications/cancelled",
  Progress: "notifications/progress",
  Message: "notifications/message",
  ToolsListChanged: "notifications/tools/list_changed",
  ResourcesListChanged: "notifications/resources/list_changed",
  ResourcesUpdated: "notifications/resources/updated",
  PromptsListChanged: "notifications/prompts/list_changed",
  RootsListChanged: "notifications/roots/list_changed",
  ElicitationComplete: "notifications/elicitation/complete",
  /** 2026-07-28: first message of a `subscriptions/listen` stream. */
  SubscriptionsAcknowledged: "notifications/subscriptions/acknowledged",
} as const;

// ---------------------------------------------------------------------------------------------
// Base

/** `_meta` on params, results and most objects. Keys may carry a reverse-DNS prefix. */
export type Meta = { [key: string]: unknown };

/** Token a requester puts in `params._meta.progressToken` to receive progress notifications. */
export type ProgressToken = string | number;

/** Opaque pagination cursor: never parse, modify or persist it. */
export type Cursor = string;

/** The id of a request, compared exactly (`"1"` is not `1`). */
export type RequestId = string | number;

/** `_meta` on request params: the one reserved key, plus anything else. */
export type RequestMeta = Meta & { progressToken?: ProgressToken };

/** Common to every request's params. */
export type RequestParams = { _meta?: RequestMeta };

/** Common to every notification's params. */
export type NotificationParams = { _meta?: Meta };

/**
 * Common to every result. The index signature admits members newer revisions add; a result is
 * an object, possibly `{}` (see {@link EmptyResult}).
 */
export type Result = { _meta?: Meta; [key: string]: unknown };

/** The result of `ping`, `logging/setLevel`, `resources/subscribe` and similar. */
export type EmptyResult = Result;

/** Params of `tools/list`, `resources/list`, `prompts/list` and the other list requests. */
export type PaginatedRequestParams = RequestParams & { cursor?: Cursor };

/** A list result: a missing `nextCursor` means the list is complete. */
export type PaginatedResult = Result & { nextCursor?: Cursor };

/** A JSON Schema object, passed through as received. */
export type JsonSchema = { type?: unknown; [key: string]: unknown };

/** Who a message or piece of content is for. */
export type Role = "user" | "assistant";

/** Experimental task augmentation (2025-11-25). This library does not run tasks yet. */
export type TaskMetadata = { ttl?: number };

/** Params of a request that may be task-augmented (`tools/call`, sampling, elicitation). */
export type TaskAugmentedRequestParams = RequestParams & { task?: TaskMetadata };

// ---------------------------------------------------------------------------------------------
// Cancellation, progress, ping

/** `notifications/cancelled`, sent by whichever side issued the request. */
export type CancelledNotificationParams = NotificationParams & {
  /** Required for ordinary requests; absent only for task cancellation, which we do not do. */
  requestId?: RequestId;
  reason?: string;
};

/** `notifications/progress`. `progress` must increase; `message` arrived in 2025-03-26. */
export type ProgressNotificationParams = NotificationParams & {
  progressToken: ProgressToken;
  progress: number;
  total?: number;
  message?: string;
};

/** `ping` has no params beyond `_meta`; the answer is `{}`. */
export type PingRequestParams = RequestParams;

// ---------------------------------------------------------------------------------------------
// Icons and implementation info

/** An icon. `src` is an `https:` or `data:` URI; consumers must refuse other schemes. */
export type Icon = {
  src: string;
  mimeType?: string;
  /** `"48x48"`-style sizes, or `"any"`. */
  sizes?: string[];
  theme?: "light" | "dark";
};

/** `clientInfo` / `serverInfo`. Only `name` and `version` are required. */
export type Implementation = {
  name: string;
  version: string;
  title?: string;
  description?: string;
  icons?: Icon[];
  websiteUrl?: string;
};

// ---------------------------------------------------------------------------------------------
// Capabilities. Open sets: peers may declare members we do not know.

export type ClientCapabilities = {
  experimental?: { [key: string]: object };
  roots?: { listChanged?: boolean };
  /** `context` allows `includeContext` other than "none"; `tools` allows tool use. */
  sampling?: { context?: object; tools?: object };
  /** An empty object means form mode only. */
  elicitation?: { form?: object; url?: object };
  tasks?: object;
  [key: string]: unknown;
};

export type ServerCapabilities = {
  experimental?: { [key: string]: object };
  logging?: object;
  completions?: object;
  prompts?: { listChanged?: boolean };
  resources?: { subscribe?: boolean; listChanged?: boolean };
  tools?: { listChanged?: boolean };
  tasks?: object;
  [key: string]: unknown;
};

// ---------------------------------------------------------------------------------------------
// Initialize

export type InitializeRequestParams = RequestParams & {
  /** The newest version the client speaks. */
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
};

export type InitializeResult = Result & {
  /** The version the server chose; a client that cannot speak it must disconnect. */
  protocolVersion: string;
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  /** A hint for the model about how to use this server (may go in a system prompt). */
  instructions?: string;
};

// ---------------------------------------------------------------------------------------------
// Content

/** Hints on content and resources. `priority` is 0 (optional) to 1 (effectively required). */
export type Annotations = {
  audience?: Role[];
  priority?: number;
  /** ISO 8601 timestamp. */
  lastModified?: string;
};

export type TextContent = {
  type: "text";
  text: string;
  annotations?: Annotations;
  _meta?: Meta;
};

/** `data` is base64. */
export type ImageContent = {
  type: "image";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
};

/** `data` is base64. Since 2025-03-26. */
export type AudioContent = {
  type: "audio";
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
};

/** A resource the server can read (from `resources/list`, or inside a `resource_link`). */
export type Resource = {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Raw size in bytes (before base64), if known. */
  size?: number;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: Meta;
};

/** A link to a resource; it need not appear in `resources/list`. Since 2025-06-18. */
export type ResourceLink = Resource & { type: "resource_link" };

/** Common to text and blob resource contents. */
export type ResourceContentsBase = { uri: string; mimeType?: string; _meta?: Meta };

export type TextResourceContents = ResourceContentsBase & { text: string };

/** `blob` is base64. */
export type BlobResourceContents = ResourceContentsBase & { blob: string };

export type ResourceContents = TextResourceContents | BlobResourceContents;

/** A resource's contents embedded in a tool result or prompt message. */
export type EmbeddedResource = {
  type: "resource";
  resource: ResourceContents;
  annotations?: Annotations;
  _meta?: Meta;
};

/** Content of tool results and prompt messages. */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** Every `type` a {@link ContentBlock} can have. */
export const CONTENT_BLOCK_TYPES = ["text", "image", "audio", "resource_link", "resource"] as const;

// ---------------------------------------------------------------------------------------------
// Tools

/** Hints about a tool's behaviour. Untrusted unless the server is trusted. */
export type ToolAnnotations = {
  title?: string;
  /** Default false. */
  readOnlyHint?: boolean;
  /** Default true; meaningful only when not read-only. */
  destructiveHint?: boolean;
  /** Default false; meaningful only when not read-only. */
  idempotentHint?: boolean;
  /** Default true. */
  openWorldHint?: boolean;
};

export type ToolExecution = { taskSupport?: "forbidden" | "optional" | "required" };

/** A tool. Display name precedence: `title`, then `annotations.title`, then `name`. */
export type Tool = {
  name: string;
  title?: string;
  description?: string;
  icons?: Icon[];
  /** Root `type` should be `"object"`; kept as received. */
  inputSchema: JsonSchema;
  /** When present, successful results must carry conforming `structuredContent`. */
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  execution?: ToolExecution;
  _meta?: Meta;
};

export type ListToolsRequestParams = PaginatedRequestParams;

export type ListToolsResult = PaginatedResult & { tools: Tool[] };

export type CallToolRequestParams = TaskAugmentedRequestParams & {
  name: string;
  arguments?: { [key: string]: unknown };
};

/**
 * A tool's answer. Tool failures (including bad arguments) come back as `isError: true`
 * results; only protocol problems (unknown tool, server fault) are JSON-RPC errors.
 */
export type CallToolResult = Result & {
  content: ContentBlock[];
  /** Since 2025-06-18. */
  structuredContent?: { [key: string]: unknown };
  /** Absent means false. */
  isError?: boolean;
};

// ---------------------------------------------------------------------------------------------
// Guards. They check required members and the types of the optional members a caller is
// likely to read; they do not validate JSON Schemas or every nested field.

function optional(v: unknown, type: "string" | "boolean" | "number"): boolean {
  return v === undefined || typeof v === type;
}

function isResourceContents(v: unknown): v is ResourceContents {
  if (!isObject(v) || typeof v.uri !== "string" || !optional(v.mimeType, "string")) return false;
  return typeof v.text === "string" || typeof v.blob === "string";
}

/** True for a well-formed content block of a known `type`. Unknown types are false. */
export function isContentBlock(v: unknown): v is ContentBlock {
  if (!isObject(v)) return false;
  if (v.annotations !== undefined && !isObject(v.annotations)) return false;
  switch (v.type) {
    case "text":
      return typeof v.text === "string";
    case "image":
    case "audio":
      return typeof v.data === "string" && typeof v.mimeType === "string";
    case "resource_link":
      return typeof v.uri === "string" && typeof v.name === "string";
    case "resource":
      return isResourceContents(v.resource);
    default:
      return false;
  }
}

/** True when `v` has a string `name` and an object `inputSchema`. */
export function isTool(v: unknown): v is Tool {
  if (!isObject(v) || typeof v.name !== "string" || !isObject(v.inputSchema)) return false;
  if (v.outputSchema !== undefined && !isObject(v.outputSchema)) return false;
  if (v.annotations !== undefined && !isObject(v.annotations)) return false;
  if (v.icons !== undefined && !Array.isArray(v.icons)) return false;
  return optional(v.title, "string") && optional(v.description, "string");
}

/**
 * True when `content` is an array, `structuredContent` (if present) an object and `isError`
 * (if present) a boolean. Blocks are not checked one by one, so a block of a type added by a
 * later revision does not reject the whole result; filter them with {@link isContentBlock}.
 */
export function isCallToolResult(v: unknown): v is CallToolResult {
  if (!isObject(v) || !Array.isArray(v.content)) return false;
  if (v.structuredContent !== undefined && !isObject(v.structuredContent)) return false;
  return optional(v.isError, "boolean");
}

/** True when `v` has a string `protocolVersion`, object `capabilities` and a named `serverInfo`. */
export function isInitializeResult(v: unknown): v is InitializeResult {
  if (!isObject(v) || typeof v.protocolVersion !== "string" || !isObject(v.capabilities)) return false;
  const info = v.serverInfo;
  if (!isObject(info) || typeof info.name !== "string" || typeof info.version !== "string") return false;
  return optional(v.instructions, "string");
}
