/** The stdio transport, both sides. */
export { StdioClientTransport, type StdioClientTransportOptions, type StdioClientOptions, type StdioClientStats } from "./stdio-client.ts";
export { StdioServerTransport, type StdioServerTransportOptions, type StdioServerOptions } from "./stdio-server.ts";
export { buildChildEnv, resolveCommand, CommandNotFoundError, type ChildEnvOptions } from "./spawn-env.ts";
