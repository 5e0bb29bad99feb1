/**
 * Running a command against the server the command line names: resolve its config (secrets
 * included), connect, apply `--log-level` and `--verbose`, run the command, and close. A
 * failure on the way leaves as a {@link ServerFailure} that names the server and carries its
 * last stderr lines; every secret of the config is kept out of what is printed.
 */
import { resolveSecrets, SecretError } from "../config/secrets.ts";
import type { McpServerConfig } from "../config/types.ts";
import type { LoggingMessageNotificationParams } from "../mcp/types.ts";
import { BridgeError } from "../jsonrpc/errors.ts";
import { Redactor, redactUrl } from "../security/redact.ts";
import { lastLines } from "../transport/ring-buffer.ts";
import { StdioClientTransport } from "../transport/stdio-client.ts";
import { intFlag, type ParsedArgs, UsageError } from "./args.ts";
import { connectWith, newClient, transportFor, type ConnectedServer } from "./connect.ts";
import { EarlyStartedTransport } from "./early-start.ts";
import type { EarlySpawn } from "./early-spawn.ts";
import { trackClient } from "./open-clients.ts";
import { printable } from "./format.ts";
import { connectFlags } from "./server-command-args.ts";
import type { CliIo } from "./io.ts";
import { CliError, ExitCode, ServerFailure } from "./report.ts";
import { serverFromArgs } from "./target.ts";

/** A connected server and the time limits the command line asked for. */
export interface OpenServer extends ConnectedServer {
  /** Limit of `tools/call`: `--timeout`, else the config's `toolTimeout`, else 120 s. */
  toolTimeoutMs: number;
  /** Limit of other requests: `--timeout`, else the client's default (60 s). */
  requestTimeoutMs: number | undefined;
}

/** How much of the server's stderr a failure shows. */
const STDERR_TAIL_LINES = 10;
const STDERR_TAIL_CHARS = 2048;
const DEFAULT_CONNECT_MS = 30_000;
const DEFAULT_TOOL_MS = 120_000;
/** How long `--auth-timeout` lets a person take for the browser step by default, ms. */
const DEFAULT_AUTH_WAIT_MS = 300_000;

/**
 * Connects to the server, runs `command`, and closes the server (stopping its process) on
 * every path. `command` gets an `io` whose output is redacted. `started` is the server `main`
 * spawned before this command's modules loaded (early-spawn.ts): taken when the resolved
 * config asks for exactly that process, stopped otherwise.
 */
export async function withServer(
  args: ParsedArgs,
  io: CliIo,
  command: (server: OpenServer, io: CliIo) => Promise<number>,
  started?: Promise<EarlySpawn | undefined>,
): Promise<number> {
  const { level, era, timeout } = connectFlags(args);
  const verbose = args.flags.has("verbose");
  const { config, redact, redactor } = await resolve(await serverFromArgs(args));
  const safe: CliIo = { ...io, out: (t) => io.out(redact(t)), err: (t) => io.err(redact(t)) };
  const label = config.transport === "stdio" ? `server "${config.name}"` : `server ${redactUrl(config.url ?? "")}`;
  const connectMs = timeout ?? config.timeout ?? DEFAULT_CONNECT_MS;
  const oauth = await oauthFor(config, args, safe, redactor, connectMs);

  const inheritEnv = args.flags.has("inherit-env");
  const onStderr = verbose ? (line: string) => safe.err(`[${config.name}] ${printable(line)}`) : undefined;
  const spawned = await takeSpawned(started, config, inheritEnv);
  if (onStderr) spawned?.stderrTo(onStderr);
  const transport = spawned?.transport.inner ?? (await transportFor(config, { inheritEnv, onStderr, auth: oauth?.provider }));
  // A stdio server boots while the client's modules load (docs/decisions.md 151).
  const early = spawned?.transport ?? (transport instanceof StdioClientTransport ? trackClient(new EarlyStartedTransport(transport)) : undefined);
  await early?.settled;
  // The hard cap; while nobody is being waited for, `oauth.deadline` keeps the usual limit.
  const client = await newClient(connectMs + (oauth?.waitMs ?? 0), era);
  if (level !== undefined || verbose) client.on("log", (p) => safe.err(formatLog(p)));
  const failure = (err: unknown): ServerFailure => {
    const stdio = transport instanceof StdioClientTransport ? transport : undefined;
    const who = stdio?.pid === undefined ? label : `${label} (pid ${stdio.pid})`;
    const tail = stdio ? lastLines(stdio.stderrTail(), STDERR_TAIL_LINES, STDERR_TAIL_CHARS) : "";
    return new ServerFailure(err, who, tail, { stderrShown: verbose, redact });
  };

  let server: ConnectedServer;
  try {
    server = await connectWith(client, early ?? transport, redactUrl(config.url ?? ""), oauth?.deadline.signal);
  } catch (err) {
    throw failure(oauth?.deadline.expired ?? err);
  } finally {
    oauth?.deadline.clear();
  }
  try {
    if (level !== undefined) {
      if (server.init.capabilities.logging !== undefined) await client.setLoggingLevel(level, { timeoutMs: timeout });
      else safe.err(`mcp-bridge: ${label} does not declare logging; --log-level ${level} has no effect`);
    }
    const timeouts = { toolTimeoutMs: timeout ?? config.toolTimeout ?? DEFAULT_TOOL_MS, requestTimeoutMs: timeout };
    return await command({ ...server, ...timeouts }, safe);
  } catch (err) {
    throw err instanceof UsageError || err instanceof CliError ? err : failure(err);
  } finally {
    await client.close();
  }
}

/** The early-spawned server if it is the one `config` asks for; else it is stopped and undefined. */
async function takeSpawned(started: Promise<EarlySpawn | undefined> | undefined, config: McpServerConfig, inheritEnv: boolean): Promise<EarlySpawn | undefined> {
  const spawned = await started;
  if (spawned === undefined || spawned.matches(config, inheritEnv)) return spawned;
  await spawned.transport.close();
  return undefined;
}

/**
 * OAuth for a remote server (docs/decisions.md 121), unless the command line or the config
 * gives an `Authorization` header: a token chosen by hand is not replaced behind the user's back.
 */
async function oauthFor(config: McpServerConfig, args: ParsedArgs, io: CliIo, redactor: Redactor, connectMs: number) {
  if (config.transport === "stdio" || Object.keys(config.headers ?? {}).some((h) => h.toLowerCase() === "authorization")) return undefined;
  const { CliOAuth, ConnectDeadline } = await import("./auth-flow.ts");
  const waitMs = intFlag(args, "auth-timeout", DEFAULT_AUTH_WAIT_MS);
  const expired = new BridgeError("TIMEOUT", `server ${redactUrl(config.url ?? "")} did not complete the handshake within ${connectMs} ms`, { details: { timeoutMs: connectMs } });
  const deadline = new ConnectDeadline(connectMs, expired);
  const provider = new CliOAuth(config.url ?? "", {
    io,
    redactor,
    open: args.flags.has("open"),
    waitMs,
    requestTimeoutMs: connectMs,
    onUserWait: (waiting) => (waiting ? deadline.pause() : deadline.resume()),
  });
  return { provider, deadline, waitMs };
}

/** Resolves `secret://` references; the redactor then knows every secret and credential. */
async function resolve(declared: McpServerConfig): Promise<{ config: McpServerConfig; redact: (text: string) => string; redactor: Redactor }> {
  let resolved: { config: McpServerConfig; secrets: string[] };
  try {
    resolved = await resolveSecrets(declared);
  } catch (err) {
    if (err instanceof SecretError) throw new CliError(ExitCode.Connect, err.code, err.message, { cause: err });
    throw err;
  }
  const redactor = new Redactor();
  redactor.addFromConfig(resolved.config);
  for (const secret of resolved.secrets) redactor.addSecret(secret);
  // Asked each time: OAuth adds the tokens it obtains during the command.
  return { config: resolved.config, redact: (t) => (redactor.size === 0 ? t : redactor.redact(t)), redactor };
}

/** `[warning] db: disk almost full`: one line per log message, data as text or JSON. */
function formatLog(p: LoggingMessageNotificationParams): string {
  const data = typeof p.data === "string" ? p.data : JSON.stringify(p.data);
  const logger = typeof p.logger === "string" ? `${p.logger}: ` : "";
  return printable(`[${String(p.level)}] ${logger}${data}`);
}
