/**
 * Config parsing: every accepted input format to {@link McpServerConfig}, with every problem
 * reported at once and no secret value in any message. Re-exports only; see the files named.
 */
export { parseNativeConfig } from "./parse-native.ts";
export {
  parseAcpMcpServers,
  type AcpMcpServer,
  type AcpStdioServer,
  type AcpHttpServer,
  type AcpSseServer,
  type AcpNameValue,
} from "./parse-acp.ts";
export { parseMcpJsonFile, parseJsonText, type JsonTextResult } from "./parse-files.ts";
export {
  CONFIG_DEFAULTS,
  withDefaults,
  formatProblem,
} from "./parse-common.ts";
export type { McpServerConfig, ConfigProblem, ParseResult, ResolvedServerConfig, TransportKind, TrustLevel } from "./types.ts";
