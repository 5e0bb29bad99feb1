/**
 * From a server config to a transport, in two steps that each connection attempt repeats:
 *
 * 1. {@link prepareServer}: resolve `secret://` references (now, not at parse time), hand every
 *    resolved secret and credential-like value to the session's redactor *before* anything can
 *    print it, then run the security checks (command for stdio, URL for HTTP) and build the
 *    child environment. Nothing is spawned or connected here; a failure is a configuration
 *    problem (`SecretError`, `PolicyError`) and the server stays unstarted.
 * 2. {@link createTransport}: build the stdio, Streamable HTTP, legacy SSE or auto transport.
 */
import type { McpServerConfig, ResolvedServerConfig } from "../config/types.ts";
import { resolveSecrets, type SecretResolvers } from "../config/secrets.ts";
import { checkCommand } from "../security/command.ts";
import { childEnvFor } from "../security/env.ts";
import type { Redactor } from "../security/redact.ts";
import { checkUrl } from "../security/url.ts";
import { PolicyError, serverLabel } from "../security/policy.ts";
import { AutoHttpClientTransport } from "../transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../transport/http-client.ts";
import { SseClientTransport } from "../transport/sse-client.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import type { HttpAuthProvider } from "../transport/auth-provider.ts";
import type { Transport } from "../transport/transport.ts";

/** A config ready to connect: secrets resolved and every security check passed. */
export interface PreparedServer {
  /** The config with `env` and `headers` resolved. Holds secrets: never log it. */
  config: ResolvedServerConfig;
  /** stdio: the absolute path `checkCommand` approved. */
  command?: string;
  /** stdio: the complete child environment (minimal base plus the resolved `env`). */
  env?: Record<string, string>;
  /** http/sse/auto: the checked URL. */
  url?: URL;
}

export interface PrepareOptions {
  /** Receives every resolved secret and credential-like value before anything can leak it. */
  redactor: Redactor;
  /** Default: the process-wide registry (`secret://env`, `secret://file`, registered schemes). */
  secretResolvers?: SecretResolvers;
  /** What `untrusted` servers may name besides absolute paths (see `checkCommand`). */
  allowCommands?: readonly string[];
  /** Allow `http:` to hosts other than loopback. Default false. */
  allowInsecureHttp?: boolean;
  /** When given, HTTP servers must be on one of these hosts (`*.example.com` allowed). */
  allowedHosts?: readonly string[];
}

/**
 * Resolves secrets, registers them for redaction and runs the security checks. Rejects with
 * `SecretError` or `PolicyError`, whose messages name the server and never a secret value.
 */
export async function prepareServer(config: ResolvedServerConfig, options: PrepareOptions): Promise<PreparedServer> {
  const { redactor } = options;
  // The unresolved config may carry plaintext credentials; they are secrets all the same.
  redactor.addFromConfig(config);
  const { config: resolvedPart, secrets } = await resolveSecrets(config, options.secretResolvers);
  for (const secret of secrets) redactor.addSecret(secret);
  const resolved: ResolvedServerConfig = { ...config, ...resolvedMaps(resolvedPart) };
  redactor.addFromConfig(resolved);

  if (resolved.transport === "stdio") {
    const env = childEnvFor(resolved, resolved.env);
    const command = await checkCommand(resolved, { allowList: options.allowCommands, cwd: resolved.cwd, env });
    return { config: resolved, command, env };
  }
  if (resolved.url === undefined || resolved.url === "") {
    throw new PolicyError("INVALID_URL", `${serverLabel(resolved.name)}: no url configured; set "url" to the server's endpoint`, {
      details: { server: resolved.name },
    });
  }
  const url = checkUrl(resolved.url, {
    server: resolved.name,
    allowInsecureHttp: options.allowInsecureHttp,
    allowedHosts: options.allowedHosts,
  });
  return { config: resolved, url };
}

/** Only the fields `resolveSecrets` fills in, so defaults already applied are kept. */
function resolvedMaps(config: McpServerConfig): Pick<ResolvedServerConfig, "env" | "headers"> {
  return { env: config.env ?? {}, headers: config.headers ?? {} };
}

/** What a connection wants to hear from its transport. */
export interface TransportHooks {
  /** Each stderr line of a stdio server (unredacted; the caller redacts). */
  onStderr?: (line: string) => void;
  /** Transport diagnostics (ignored stdout lines, stream reconnects). */
  onLog?: (message: string) => void;
  /** stdio: each of the two shutdown waits, ms. Default 2000 (the transport's). */
  shutdownGraceMs?: number;
  /** http/sse/auto: the server's auth provider (bearer tokens, 401/403 handling). */
  auth?: HttpAuthProvider;
}

/** Builds a transport for a prepared server; replaceable (tests, embedders with own transports). */
export type TransportFactory = (prepared: PreparedServer, hooks: TransportHooks) => Transport;

/**
 * The default {@link TransportFactory}: `stdio` spawns the checked absolute command with the
 * built environment (no shell, own process group); `http` is Streamable HTTP, `sse` the
 * legacy HTTP+SSE transport, `auto` tries the first and falls back to the second.
 */
export function createTransport(prepared: PreparedServer, hooks: TransportHooks = {}): Transport {
  const { config } = prepared;
  switch (config.transport) {
    case "stdio": {
      if (prepared.command === undefined) throw new TypeError(`${serverLabel(config.name)}: prepared without a command`);
      return new StdioClientTransport({
        command: prepared.command,
        args: config.args,
        cwd: config.cwd,
        env: prepared.env ?? {},
        name: config.name,
        onStderr: hooks.onStderr,
        onLog: hooks.onLog,
        shutdownGraceMs: hooks.shutdownGraceMs,
      });
    }
    case "http":
    case "sse":
    case "auto": {
      if (prepared.url === undefined) throw new TypeError(`${serverLabel(config.name)}: prepared without a url`);
      const options = { url: prepared.url, headers: { ...config.headers }, onLog: hooks.onLog, auth: hooks.auth };
      if (config.transport === "http") return new StreamableHttpClientTransport(options);
      if (config.transport === "sse") return new SseClientTransport(options);
      return new AutoHttpClientTransport(options);
    }
    default:
      throw new TypeError(`${serverLabel(config.name)}: unknown transport ${JSON.stringify(config.transport as string)}`);
  }
}

/**
 * `provider` with every token it hands out added to `redactor` first, so no log line, event or
 * error the session emits can show one (a provider the host built knows nothing of the session).
 */
export function redactingAuth(provider: HttpAuthProvider, redactor: Redactor): HttpAuthProvider {
  return {
    accessToken: async () => {
      const token = await provider.accessToken();
      if (token !== undefined) redactor.addSecret(token);
      return token;
    },
    handleUnauthorized: async (status, wwwAuthenticate) => {
      const token = await provider.handleUnauthorized(status, wwwAuthenticate);
      redactor.addSecret(token);
      return token;
    },
  };
}

/** The process id behind a transport, for stdio transports that spawned one. */
export function transportPid(transport: Transport): number | undefined {
  const pid = (transport as { pid?: unknown }).pid;
  return typeof pid === "number" ? pid : undefined;
}
