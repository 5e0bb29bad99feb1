/**
 * MCP wire types for the features beyond tools (protocol 2025-11-25): resources, prompts,
 * completion, logging, roots, sampling and elicitation, plus the method-name types. Import
 * them from `types.ts`, which re-exports this module. Same conventions as there: `type`
 * aliases, `?:` for optional members.
 *
 * Types only, on purpose: the runtime tables (`LOGGING_LEVELS`, `McpMethod`, `McpNotification`)
 * live in `types.ts`, so this file is never loaded at run time (each ES module adds about
 * 0.5 ms to a Node 20 start-up, whatever its size).
 */
import type { LOGGING_LEVELS, McpMethod, McpNotification } from "./types.ts";
import type {
  Annotations,
  CallToolRequestParams,
  CallToolResult,
  EmptyResult,
  InitializeRequestParams,
  InitializeResult,
  ListToolsRequestParams,
  ListToolsResult,
  PaginatedRequestParams,
  PingRequestParams,
  AudioContent,
  ContentBlock,
  Icon,
  ImageContent,
  Meta,
  NotificationParams,
  PaginatedResult,
  RequestParams,
  Resource,
  ResourceContents,
  Result,
  Role,
  TaskAugmentedRequestParams,
  TextContent,
  Tool,
} from "./types.ts";

// ---------------------------------------------------------------------------------------------
// Resources

/** A family of resources described by an RFC 6570 URI template. */
export type ResourceTemplate = {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  /** Only when every matching resource has this type. */
  mimeType?: string;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: Meta;
};

export type ListResourcesResult = PaginatedResult & { resources: Resource[] };

export type ListResourceTemplatesResult = PaginatedResult & { resourceTemplates: ResourceTemplate[] };

/** Params of `resources/read`, `resources/subscribe` and `resources/unsubscribe`. */
export type ResourceRequestParams = RequestParams & { uri: string };
export type ReadResourceRequestParams = ResourceRequestParams;
export type SubscribeRequestParams = ResourceRequestParams;
export type UnsubscribeRequestParams = ResourceRequestParams;

/** One read may return several items (for example the files under a directory URI). */
export type ReadResourceResult = Result & { contents: ResourceContents[] };

/** `notifications/resources/updated`; `uri` may be a sub-resource of the subscribed one. */
export type ResourceUpdatedNotificationParams = NotificationParams & { uri: string };

// ---------------------------------------------------------------------------------------------
// Prompts

export type PromptArgument = {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
};

export type Prompt = {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  _meta?: Meta;
};

export type ListPromptsResult = PaginatedResult & { prompts: Prompt[] };

/** Prompt arguments are always strings. */
export type GetPromptRequestParams = RequestParams & {
  name: string;
  arguments?: { [key: string]: string };
};

export type PromptMessage = { role: Role; content: ContentBlock };

export type GetPromptResult = Result & { description?: string; messages: PromptMessage[] };

// ---------------------------------------------------------------------------------------------
// Completion

export type PromptReference = { type: "ref/prompt"; name: string; title?: string };

/** `uri` is a resource URI or URI template. */
export type ResourceTemplateReference = { type: "ref/resource"; uri: string };

export type CompleteRequestParams = RequestParams & {
  ref: PromptReference | ResourceTemplateReference;
  argument: { name: string; value: string };
  /** Values already chosen for other arguments. Since 2025-06-18. */
  context?: { arguments?: { [key: string]: string } };
};

export type CompleteResult = Result & {
  /** `values` holds at most 100 items; `total` may exceed its length. */
  completion: { values: string[]; total?: number; hasMore?: boolean };
};

// ---------------------------------------------------------------------------------------------
// Logging

export type LoggingLevel = (typeof LOGGING_LEVELS)[number];

/** The server sends messages at `level` and above. */
export type SetLevelRequestParams = RequestParams & { level: LoggingLevel };

/** `notifications/message`. `data` is any JSON value. */
export type LoggingMessageNotificationParams = NotificationParams & {
  level: LoggingLevel;
  logger?: string;
  data: unknown;
};

// ---------------------------------------------------------------------------------------------
// Roots

/** `uri` must be a `file://` URI in this revision. */
export type Root = { uri: string; name?: string; _meta?: Meta };

export type ListRootsResult = Result & { roots: Root[] };

// ---------------------------------------------------------------------------------------------
// Sampling

/** A tool call the model made during sampling (2025-11-25). */
export type ToolUseContent = {
  type: "tool_use";
  id: string;
  name: string;
  input: { [key: string]: unknown };
  _meta?: Meta;
};

/** The answer to a {@link ToolUseContent}; `toolUseId` matches its `id`. */
export type ToolResultContent = {
  type: "tool_result";
  toolUseId: string;
  content: ContentBlock[];
  structuredContent?: { [key: string]: unknown };
  isError?: boolean;
  _meta?: Meta;
};

export type SamplingMessageContentBlock =
  | TextContent
  | ImageContent
  | AudioContent
  | ToolUseContent
  | ToolResultContent;

export type SamplingMessage = {
  role: Role;
  /** A single block, or (2025-11-25) several. */
  content: SamplingMessageContentBlock | SamplingMessageContentBlock[];
  _meta?: Meta;
};

/** `name` is matched as a substring of model names, in order. */
export type ModelHint = { name?: string };

/** Advisory; each priority is 0 to 1. */
export type ModelPreferences = {
  hints?: ModelHint[];
  costPriority?: number;
  speedPriority?: number;
  intelligencePriority?: number;
};

/** Default `{ mode: "auto" }`. */
export type ToolChoice = { mode?: "auto" | "required" | "none" };

export type CreateMessageRequestParams = TaskAugmentedRequestParams & {
  messages: SamplingMessage[];
  maxTokens: number;
  modelPreferences?: ModelPreferences;
  systemPrompt?: string;
  /** "thisServer" and "allServers" are deprecated and need `sampling.context`. */
  includeContext?: "none" | "thisServer" | "allServers";
  temperature?: number;
  stopSequences?: string[];
  /** Provider-specific, passed through. */
  metadata?: object;
  /** Only when the client declared `sampling.tools`. */
  tools?: Tool[];
  toolChoice?: ToolChoice;
};

export type CreateMessageResult = Result & {
  role: Role;
  content: SamplingMessageContentBlock | SamplingMessageContentBlock[];
  model: string;
  /** "endTurn", "stopSequence", "maxTokens", "toolUse" or a provider-specific string. */
  stopReason?: string;
};

// ---------------------------------------------------------------------------------------------
// Elicitation

export type StringSchema = {
  type: "string";
  title?: string;
  description?: string;
  minLength?: number;
  maxLength?: number;
  format?: "email" | "uri" | "date" | "date-time";
  default?: string;
};

export type NumberSchema = {
  type: "number" | "integer";
  title?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  default?: number;
};

export type BooleanSchema = { type: "boolean"; title?: string; description?: string; default?: boolean };

/** A titled option of an enum. */
export type EnumOption = { const: string; title: string };

/**
 * Single-select (`type: "string"` with `enum` or titled `oneOf`; `enumNames` is the legacy
 * way to title options) or multi-select (`type: "array"` whose items carry `enum` or titled
 * `anyOf`).
 */
export type EnumSchema =
  | {
      type: "string";
      title?: string;
      description?: string;
      enum: string[];
      enumNames?: string[];
      default?: string;
    }
  | { type: "string"; title?: string; description?: string; oneOf: EnumOption[]; default?: string }
  | {
      type: "array";
      title?: string;
      description?: string;
      minItems?: number;
      maxItems?: number;
      items: { type: "string"; enum: string[] } | { anyOf: EnumOption[] };
      default?: string[];
    };

/** The only property schemas a form may use: flat primitives, no nesting. */
export type PrimitiveSchemaDefinition = StringSchema | NumberSchema | BooleanSchema | EnumSchema;

/** Form mode. A missing `mode` means form. Forms must not ask for secrets. */
export type ElicitRequestFormParams = TaskAugmentedRequestParams & {
  mode?: "form";
  message: string;
  requestedSchema: {
    $schema?: string;
    type: "object";
    properties: { [key: string]: PrimitiveSchemaDefinition };
    required?: string[];
  };
};

/**
 * URL mode (2025-11-25). The client must show the full URL and get consent; it must not
 * prefetch or open it on its own.
 */
export type ElicitRequestURLParams = TaskAugmentedRequestParams & {
  mode: "url";
  message: string;
  elicitationId: string;
  url: string;
};

export type ElicitRequestParams = ElicitRequestFormParams | ElicitRequestURLParams;

/** `content` only with "accept" in form mode. */
export type ElicitResult = Result & {
  action: "accept" | "decline" | "cancel";
  content?: { [key: string]: string | number | boolean | string[] };
};

export type ElicitationCompleteNotificationParams = NotificationParams & { elicitationId: string };

// ---------------------------------------------------------------------------------------------
// Method names

export type MethodName = (typeof McpMethod)[keyof typeof McpMethod];
export type NotificationMethodName = (typeof McpNotification)[keyof typeof McpNotification];

/**
 * Requests a client sends to a server, method to params and result, for typed wrappers:
 * `ClientRequests["tools/call"]["result"]` is {@link CallToolResult}.
 */
export type ClientRequests = {
  initialize: { params: InitializeRequestParams; result: InitializeResult };
  ping: { params: PingRequestParams; result: EmptyResult };
  "tools/list": { params: ListToolsRequestParams; result: ListToolsResult };
  "tools/call": { params: CallToolRequestParams; result: CallToolResult };
  "resources/list": { params: PaginatedRequestParams; result: ListResourcesResult };
  "resources/templates/list": { params: PaginatedRequestParams; result: ListResourceTemplatesResult };
  "resources/read": { params: ReadResourceRequestParams; result: ReadResourceResult };
  "resources/subscribe": { params: SubscribeRequestParams; result: EmptyResult };
  "resources/unsubscribe": { params: UnsubscribeRequestParams; result: EmptyResult };
  "prompts/list": { params: PaginatedRequestParams; result: ListPromptsResult };
  "prompts/get": { params: GetPromptRequestParams; result: GetPromptResult };
  "completion/complete": { params: CompleteRequestParams; result: CompleteResult };
  "logging/setLevel": { params: SetLevelRequestParams; result: EmptyResult };
};

/** Requests a server sends to a client: method → params and result. */
export type ServerRequests = {
  ping: { params: PingRequestParams; result: EmptyResult };
  "roots/list": { params: RequestParams; result: ListRootsResult };
  "sampling/createMessage": { params: CreateMessageRequestParams; result: CreateMessageResult };
  "elicitation/create": { params: ElicitRequestParams; result: ElicitResult };
};
