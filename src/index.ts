/**
 * mcp-bridge: public API. Re-exports only; every symbol lives in its layer's file.
 */
export { BridgeError, RpcError, ErrorCode, type BridgeErrorCode } from "./jsonrpc/errors.ts";
export type {
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcParams,
} from "./jsonrpc/message.ts";
export { classifyMessage } from "./jsonrpc/message.ts";
export { LineDecoder, encodeLine, DEFAULT_MAX_LINE_BYTES, type DecodedLine } from "./jsonrpc/ndjson.ts";
export {
  JsonRpcPeer,
  type PeerOptions,
  type RequestOptions,
  type RequestContext,
  type ProgressInfo,
  type PeerStats,
} from "./jsonrpc/peer.ts";

export type { Transport } from "./transport/transport.ts";
export { InMemoryTransport } from "./transport/memory.ts";
export {
  StdioClientTransport,
  StdioServerTransport,
  buildChildEnv,
  resolveCommand,
  type StdioClientTransportOptions,
  type StdioClientOptions,
  type StdioServerTransportOptions,
  type StdioServerOptions,
} from "./transport/stdio.ts";

export {
  McpClient,
  UrlElicitationRequiredError,
  type McpClientOptions,
  type McpClientEvents,
  type ClientHandlers,
  type ElicitationContext,
  type CallOptions,
} from "./mcp/client.ts";
export {
  McpServer,
  ServerSession,
  InputRequired,
  InputResponseError,
  type McpServerOptions,
  type ToolHandler,
  type ToolContext,
  type Registration,
  type InputOptions,
  type InputRequest,
  type InputRequiredResult,
  type CacheHints,
  type BeforeOutcome,
  type ClientIdentity,
  type Listing,
  type ServerProvider,
  type Middleware,
  type PromptProvider,
  type ProtocolEra,
  type ProviderListener,
  type ResourceProvider,
  type ServingContext,
  type ToolCall,
  type ToolProvider,
} from "./mcp/server.ts";
export {
  CompositeProvider,
  ManagerProvider,
  SpilledResults,
  approval,
  audit,
  rateLimit,
  redaction,
  resultLimits,
  toolPolicy,
  untrustedMarking,
  type CompositeMember,
  type CompositeProviderOptions,
  type ApprovalMiddlewareOptions,
  type AuditMiddlewareOptions,
  type CallAuditEvent,
  type CallOutcome,
  type RateLimitMiddlewareOptions,
  type ResultLimitsOptions,
  type SpilledResultsOptions,
  type ToolNameLists,
  type ToolPolicyMiddlewareOptions,
  type UntrustedMarkingOptions,
} from "./gateway/index.ts";
export {
  SUPPORTED_PROTOCOL_VERSIONS,
  MODERN_PROTOCOL_VERSIONS,
  LATEST_PROTOCOL_VERSION,
  negotiateVersion,
  isSupportedVersion,
  type ProtocolVersion,
} from "./mcp/versions.ts";
export type * from "./mcp/types.ts";
export * from "./transport/http.ts";
export { TcpTransport, TcpClientTransport } from "./transport/tcp.ts";
export * from "./auth/index.ts";
export { compileSchema, validateSchema, formatSchemaErrors, type CompileSchemaOptions, type SchemaError, type ValidationResult } from "./schema/validate.ts";

// ---------------------------------------------------------------------------------------------
// Session layers: manager, bridge, config, security.

export {
  McpManager,
  DEFAULT_MAX_SERVERS,
  DEFAULT_MAX_TOOLS,
  DEFAULT_READY_TIMEOUT_MS,
  type McpManagerOptions,
  type ServerStatus,
  type ReadyReport,
  type ToolCallOptions,
} from "./manager/manager.ts";
export { ServerConnection, type ConnectionOptions, type HealthOptions, type ServerConnectionOptions } from "./manager/connection.ts";
export type {
  ServerState,
  StateChange,
  LogEntry,
  LogSource,
  ManagerWarning,
  WarningKind,
  ToolsChange,
  McpManagerEvents,
  ConnectionEvents,
} from "./manager/events.ts";
export type { AuditRecord, AuditOutcome, AuditArgsMode } from "./manager/audit.ts";
export type { ClientFeatures, ServerRequestContext } from "./manager/client-features.ts";
export {
  ManagerError,
  type ManagerErrorCode,
  type ManagedResource,
  type ManagedPrompt,
  type ManagedResourceContext,
  type ServerInstructions,
} from "./manager/resources.ts";
export type { UntrustedOptions } from "./manager/untrusted-text.ts";
export {
  backoffDelay,
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_CAP_MS,
  DEFAULT_BACKOFF_JITTER,
  type BackoffOptions,
} from "./manager/backoff.ts";
export { DEFAULT_TOOL_CACHE_TTL_MS } from "./manager/cache.ts";
export {
  createTransport,
  prepareServer,
  type PreparedServer,
  type PrepareOptions,
  type TransportFactory,
  type TransportHooks,
} from "./manager/transport-factory.ts";

export {
  ToolNamer,
  UriNamespaces,
  NAMESPACED_URI_PREFIX,
  sanitizeName,
  DEFAULT_MAX_NAME_LENGTH,
  type NamingFunction,
  type ToolNamerOptions,
  type ToolRef,
} from "./bridge/naming.ts";
export {
  bridgeTools,
  displayTitle,
  type BridgedTool,
  type BridgedContent,
  type BridgedResult,
  type FailureKind,
  type TruncationReport,
} from "./bridge/types.ts";
export { errorResult, fromError } from "./bridge/failures.ts";
export {
  toBridgedResult,
  renderResultText,
  DEFAULT_MAX_TEXT_CHARS,
  DEFAULT_MAX_BINARY_BYTES,
  type ResultLimits,
} from "./bridge/results.ts";
export {
  UntrustedWrapper,
  detectInjection,
  neutralizeMarkers,
  generateNonce,
  type InjectionFinding,
  type InjectionRule,
  type UntrustedWrapperOptions,
} from "./bridge/untrusted.ts";
export {
  ResourceFilter,
  buildResourceContext,
  DEFAULT_MAX_CONTEXT_BYTES,
  type ResourceEntry,
  type ResourceContext,
  type ResourceContextOptions,
} from "./bridge/resources.ts";

export {
  parseNativeConfig,
  parseAcpMcpServers,
  parseMcpJsonFile,
  parseJsonText,
  withDefaults,
  formatProblem,
  CONFIG_DEFAULTS,
  type AcpMcpServer,
  type AcpStdioServer,
  type AcpHttpServer,
  type AcpSseServer,
  type AcpNameValue,
  type JsonTextResult,
  type McpServerConfig,
  type ResolvedServerConfig,
  type ConfigProblem,
  type ParseResult,
  type TransportKind,
  type TrustLevel,
} from "./config/parse.ts";
export { defaultGlobalConfigDir, discoverConfigs, WORKSPACE_CONFIG_FILES, type DiscoverOptions, type DiscoveryResult } from "./config/discovery.ts";
export {
  resolveSecrets,
  registerSecretResolver,
  SecretResolvers,
  defaultSecretResolvers,
  SecretError,
  findSecretReference,
  isCredentialKey,
  type SecretResolver,
  type SecretResolversOptions,
  type SecretReference,
} from "./config/secrets.ts";
export { findPlaintextCredentials } from "./config/parse-common.ts";

export { checkCommand, type CheckCommandOptions } from "./security/command.ts";
export { checkUrl, isLoopbackHost, type CheckUrlOptions } from "./security/url.ts";
export { childEnvFor } from "./security/env.ts";
export {
  ToolPolicy,
  ApprovalGate,
  PolicyError,
  type PolicyErrorCode,
  type ToolPolicyOptions,
  type Approver,
  type ApprovalDecision,
  type ApprovalRequest,
  type ApprovalResult,
} from "./security/policy.ts";
export { RateLimiter, DEFAULT_CALLS_PER_MINUTE, type RateLimiterOptions, type RateLimitResult } from "./security/rate-limit.ts";
export { Redactor, redactUrl, REDACTED, type RedactorOptions } from "./security/redact.ts";
export { resolveWithin, PathError, type PathErrorCode } from "./security/paths.ts";

// ---------------------------------------------------------------------------------------------
// ACP: the main classes; every ACP type is in `mcp-bridge/acp` (src/acp/index.ts).
export { AcpAgentConnection, AcpMcpSessions, ScriptedAgent, McpProvider, Conductor, AcpTunnelTransport } from "./acp/index.ts";
