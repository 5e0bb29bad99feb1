/**
 * `mcp-bridge serve --config <file> (--stdio | --http HOST:PORT [--sse])`: one MCP server in
 * front of every server of a config file. Each downstream session (the stdio client, each HTTP
 * or SSE session) gets its own connections to the per-client upstreams, and all share the
 * `shared` ones (gateway/upstream-pool.ts); the managers apply restarts, limits, redaction and
 * untrusted marking; tools are served as `mcp__<server>__<tool>`, prompts likewise, resources
 * under `mcp-bridge://<server>/<uri>`, the gateway's status at `mcp-bridge://status`.
 *
 * `--check` reads the config, prints every problem at once and exits (2 on any error, 0
 * otherwise); nothing is started.
 *
 * stdout carries nothing but MCP messages (with `--stdio`); every log line goes to stderr, as
 * do audit lines with `--audit -`. The command ends, every upstream stopped, when stdin ends
 * (`--stdio`) or on SIGTERM/SIGINT.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { formatProblem, MAX_CONFIG_FILE_BYTES } from "../config/parse-common.ts";
import { parseJsonText, parseMcpJsonFile } from "../config/parse-files.ts";
import { defaultSecretResolvers } from "../config/secrets.ts";
import type { ConfigProblem, McpServerConfig } from "../config/types.ts";
import { DEFAULT_MAX_SESSIONS, DEFAULT_MAX_UPSTREAM_CONNECTIONS, isolationOf, readServeSettings, type ServeSettings } from "../gateway/serve-config.ts";
import { GatewaySessions } from "../gateway/serve-sessions.ts";
import { UpstreamPool } from "../gateway/upstream-pool.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import { DEFAULT_MAX_SERVERS, type McpManager, type McpManagerOptions, type ServerStatus } from "../manager/manager.ts";
import { StdioServerTransport } from "../transport/stdio-server.ts";
import { eraFlag, flag, intFlag, onlyPositionals, UsageError, type ParsedArgs } from "./args.ts";
import type { ServingHttp } from "./serve-http.ts";
import { ExitCode } from "./report.ts";
import { packageVersion } from "./version.ts";

const SYNOPSIS =
  "serve --config <file> (--stdio | --http 127.0.0.1:PORT [--sse]) [--rate-limit N|off] [--health-interval ms] [--no-namespace] [--era legacy|auto|modern] | serve --check --config <file>";

/** Time between pings of each ready upstream, ms (docs/decisions.md 139). */
const DEFAULT_HEALTH_INTERVAL_MS = 30_000;

/** Hosts `--http` binds without `--allow-remote` (docs/decisions.md 128, 148). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** Where to serve, from the command line. */
type Listen = { kind: "stdio" } | { kind: "http"; host: string; port: number; sse: boolean; remote: boolean };

/** What serving needs beyond the upstreams: the config's `serve` section with the flags applied. */
interface ServePlan {
  settings: ServeSettings;
  maxSessions: number;
  maxUpstreams: number;
  /** `--audit`: `-` for stderr, else a file appended to. */
  audit?: string;
  healthIntervalMs: number;
  /** False (`--no-namespace`): the one upstream's names as they are (docs/decisions.md 141). */
  namespaced: boolean;
  /** The managers' per-upstream bucket (`--rate-limit`); undefined: their default. */
  rateLimit: McpManagerOptions["rateLimit"];
  /** The era the gateway speaks to its upstreams (`--era`); default the handshake era (docs/decisions.md 154). */
  era: NonNullable<McpManagerOptions["era"]>;
}

/** Runs the command; resolves with the exit code once serving ended and every upstream is stopped. */
export async function runServe(args: ParsedArgs, io: { out: (text: string) => void; err: (text: string) => void }): Promise<number> {
  onlyPositionals(args, 1, SYNOPSIS);
  if (args.command.length > 0) throw new UsageError(`serve takes its servers from --config, not after --: ${SYNOPSIS}`);
  const file = flag(args, "config");
  if (file === undefined) throw new UsageError(`serve needs --config <file>: ${SYNOPSIS}`);
  const log = (line: string): void => io.err(`mcp-bridge serve: ${line}`);

  if (args.flags.has("check")) {
    for (const name of ["stdio", "http", "sse", "allow-remote", "audit"]) {
      if (args.flags.has(name)) throw new UsageError(`--check starts nothing: drop --${name}`);
    }
    const { servers, problems } = await readServeConfig(file);
    for (const problem of problems) io.out(formatProblem(problem));
    const errors = problems.filter((p) => p.severity === "error").length;
    if (errors > 0) {
      io.out(`${file}: ${errors} error(s), ${problems.length - errors} warning(s); nothing would be served`);
      return ExitCode.Usage;
    }
    io.out(`${file}: ok, ${servers.length} upstream(s): ${servers.map((s) => s.name).join(", ")}`);
    return ExitCode.Ok;
  }

  const listen = listenFrom(args);
  const maxSessionsFlag = flag(args, "max-sessions") === undefined ? undefined : intFlag(args, "max-sessions", 1);
  const maxUpstreamsFlag = flag(args, "max-upstreams") === undefined ? undefined : intFlag(args, "max-upstreams", 1);
  const { servers, settings, problems } = await readServeConfig(file);
  for (const problem of problems) log(formatProblem(problem));
  if (problems.some((p) => p.severity === "error")) {
    log(`${file} has errors; nothing was started (see them all with: mcp-bridge serve --check --config ${file})`);
    return ExitCode.Usage;
  }
  if (listen.kind === "http" && listen.remote && settings.bearerTokens.length === 0) {
    throw new UsageError("--allow-remote needs bearer tokens: list them in the config's serve.bearerTokens (as secret://env/NAME), or anyone who reaches the port uses the upstreams' credentials");
  }
  const plan: ServePlan = {
    settings,
    maxSessions: maxSessionsFlag ?? settings.maxSessions ?? DEFAULT_MAX_SESSIONS,
    maxUpstreams: maxUpstreamsFlag ?? settings.maxUpstreamConnections ?? DEFAULT_MAX_UPSTREAM_CONNECTIONS,
    audit: flag(args, "audit"),
    healthIntervalMs: intFlag(args, "health-interval", DEFAULT_HEALTH_INTERVAL_MS),
    namespaced: !args.flags.has("no-namespace"),
    rateLimit: rateLimitFrom(args),
    era: eraFlag(args) ?? "legacy",
  };
  if (!plan.namespaced && servers.length !== 1) throw new UsageError(`--no-namespace serves one upstream under its own names; ${file} has ${servers.length}`);
  return serve(servers, plan, listen, log, io.err);
}

/**
 * `--rate-limit N|off`: each manager's per-upstream token bucket (default 100 calls a minute,
 * an agent's guard against a runaway model; a gateway serving many clients may need more).
 */
function rateLimitFrom(args: ParsedArgs): McpManagerOptions["rateLimit"] {
  const value = flag(args, "rate-limit");
  if (value === undefined) return undefined;
  if (value === "off") return false;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new UsageError(`--rate-limit: ${JSON.stringify(value)} is neither a number of calls a minute (1 or more) nor "off"`);
  return { callsPerMinute: n };
}

/** Resolves the bearer tokens: their `secret://` references, never shown (only the reference is). */
async function resolveTokens(tokens: readonly string[]): Promise<string[]> {
  return Promise.all(tokens.map((t) => (t.startsWith("secret://") ? defaultSecretResolvers.resolve(t) : t)));
}

/** Starts the shared upstreams, serves sessions until the downstream side ends, then stops everything. */
async function serve(servers: McpServerConfig[], plan: ServePlan, listen: Listen, log: (line: string) => void, stderr: (text: string) => void): Promise<number> {
  let tokens: string[];
  try {
    tokens = await resolveTokens(listen.kind === "http" ? plan.settings.bearerTokens : []);
  } catch (err) {
    log(`serve.bearerTokens: ${errorMessage(err)}; nothing was started`);
    return ExitCode.Usage;
  }
  const watch = (manager: McpManager, session: number | undefined): void => {
    const where = session === undefined ? "" : ` (session ${session})`;
    manager.on("warning", (w) => log(`warning${where}: ${w.message}`));
    manager.on("state", (change) => {
      // A first start's outcome is reported once, when the manager's upstreams have settled.
      if ((change.to === "failed" && change.from !== "connecting") || change.to === "restarting") log(`upstream ${JSON.stringify(change.server)}${where} is ${change.to}${change.error ? `: ${change.error}` : ""}`);
    });
  };
  // processGuard: a crash or a signal still stops every child (manager/process-guard.ts).
  const pool = new UpstreamPool({
    upstreams: servers,
    isolation: (name) => isolationOf(plan.settings, name),
    maxSessions: plan.maxSessions,
    maxUpstreamConnections: plan.maxUpstreams,
    manager: {
      processGuard: true,
      era: plan.era,
      health: { intervalMs: plan.healthIntervalMs, timeoutMs: Math.min(5_000, Math.max(1_000, plan.healthIntervalMs)) },
      ...(plan.namespaced ? {} : { naming: (_prefix: string, tool: string) => tool }),
      ...(plan.rateLimit === undefined ? {} : { rateLimit: plan.rateLimit }),
    },
    onManager: watch,
  });
  for (const token of tokens) pool.redactor.addSecret(token);
  let auditFile: WriteStream | undefined;
  let auditLost = false;
  if (plan.audit !== undefined && plan.audit !== "-") {
    auditFile = createWriteStream(plan.audit, { flags: "a", mode: 0o600 });
    // Reported once; serving goes on (a full disk must not stop the tools), the lines are dropped.
    auditFile.on("error", (err) => {
      if (!auditLost) log(`--audit ${plan.audit}: ${errorMessage(err)}; audit lines are lost`);
      auditLost = true;
    });
  }
  const writeAudit =
    plan.audit === undefined
      ? undefined
      : (line: string): void => {
          if (auditFile === undefined) stderr(line);
          else if (!auditLost) auditFile.write(`${line}\n`);
        };
  const sessions = new GatewaySessions(pool, {
    info: { name: "mcp-bridge-serve", version: packageVersion() ?? "0.0.0" },
    namespaced: plan.namespaced,
    onAudit: writeAudit && ((event) => writeAudit(JSON.stringify({ type: "audit", ...event }))),
    log,
    onSessionOpen: (upstreams) => {
      for (const s of upstreams.manager.status()) log(`session ${upstreams.id}: ${describe(s)}`);
    },
  });

  let stopped: () => void = () => {};
  const ended = new Promise<void>((resolve) => (stopped = resolve));
  // Our own listeners: the process guard then closes the managers without re-raising the
  // signal, and the command ends through the same path as on stdin's end (exit 0).
  let signalled = false;
  const onSignal = (): void => {
    signalled = true;
    stopped();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  let http: ServingHttp | undefined;
  let code: number = ExitCode.Ok;
  try {
    const statuses = await pool.start();
    for (const s of statuses) log(describe(s));
    const shape = `${pool.sharedNames.length} shared and ${pool.perClientNames.length} per-client upstream(s)`;
    if (listen.kind === "stdio") {
      await sessions.connect(new StdioServerTransport(), () => stopped());
      log(`serving ${servers.length} upstream(s) on stdio (${shape})`);
    } else {
      const { listenHttp } = await import("./serve-http.ts");
      http = await listenHttp({
        host: listen.host,
        port: listen.port,
        sse: listen.sse,
        guard: { bearerToken: tokens.length > 0 ? tokens : undefined, allowedHosts: plan.settings.allowedHosts, allowedOrigins: plan.settings.allowedOrigins },
        maxSessions: plan.maxSessions,
        sessionIdleMs: plan.settings.sessionIdleMs,
        onSession: sessions.onHttpSession,
      });
      log(`serving ${servers.length} upstream(s) at ${http.url.href}${http.sseUrl === undefined ? "" : ` and ${http.sseUrl.href} (legacy SSE)`} (${shape}; at most ${plan.maxSessions} sessions, ${plan.maxUpstreams} upstream connections)`);
    }
    await ended;
  } catch (err) {
    log(`${pool.redactor.redact(errorMessage(err))}; stopping`);
    code = ExitCode.Connect;
  } finally {
    // After a signal ours stay: the guard re-raises it once the managers have closed unless
    // someone still listens, and this process is ending anyway.
    if (!signalled) {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
    await http?.close();
    await sessions.close();
    await pool.close();
    if (auditFile !== undefined) await new Promise<void>((resolve) => auditFile!.end(resolve));
    log("stopped; every upstream is closed");
  }
  return code;
}

/** One line per upstream after its first start: ready with its tool count, or why it failed. */
function describe(s: ServerStatus): string {
  const name = JSON.stringify(s.name);
  if (s.state === "ready") return `upstream ${name} ready (${s.transport}${s.pid === undefined ? "" : `, pid ${s.pid}`}, ${s.exposed} tool(s))`;
  return `upstream ${name} ${s.state}${s.lastError === undefined ? "" : `: ${s.lastError}`}; the others are served without it`;
}

/** `--stdio` or `--http HOST:PORT` (exactly one), with `--sse` and `--allow-remote` for HTTP only. */
function listenFrom(args: ParsedArgs): Listen {
  const address = flag(args, "http");
  const stdio = args.flags.has("stdio");
  if (stdio === (address !== undefined)) throw new UsageError(`serve needs one of --stdio or --http 127.0.0.1:PORT: ${SYNOPSIS}`);
  if (address === undefined) {
    for (const name of ["sse", "allow-remote"]) if (args.flags.has(name)) throw new UsageError(`--${name} is for --http only`);
    return { kind: "stdio" };
  }
  const colon = address.lastIndexOf(":");
  const host = colon === -1 ? "127.0.0.1" : address.slice(0, colon);
  const portText = colon === -1 ? address : address.slice(colon + 1);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError(`--http: ${JSON.stringify(portText)} is not a TCP port (0 picks a free one)`);
  const remote = args.flags.has("allow-remote");
  if (!LOOPBACK_HOSTS.has(host) && !remote) {
    throw new UsageError(`--http: ${JSON.stringify(host)} is not a loopback address; serve binds 127.0.0.1, ::1 or localhost unless --allow-remote is given (with serve.bearerTokens in the config)`);
  }
  return { kind: "http", host: host.replace(/^\[(.*)\]$/, "$1"), port, sse: args.flags.has("sse"), remote: remote && !LOOPBACK_HOSTS.has(host) };
}

/**
 * Reads and checks a config for serving: the parsers' problems (every format they take), plus
 * what only serving makes a problem. Never throws; an unreadable file is one problem.
 */
export async function readServeConfig(file: string): Promise<{ servers: McpServerConfig[]; settings: ServeSettings; problems: ConfigProblem[] }> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_CONFIG_FILE_BYTES) return fileProblem(file, `larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    text = bytes.toString("utf8");
  } catch (err) {
    return fileProblem(file, `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`);
  }
  const decoded = parseJsonText(text, file);
  if (!decoded.ok) return { servers: [], settings: { isolation: {}, bearerTokens: [] }, problems: [decoded.problem] };
  const parsed = parseMcpJsonFile(decoded.value, file);
  const problems = [...parsed.problems];
  const enabled = parsed.servers.filter((s) => s.enabled !== false);
  for (const s of enabled) {
    if (s.trust === "untrusted") {
      problems.push({
        source: file,
        path: entryPath(decoded.value, s.name),
        severity: "warning",
        message: `server ${JSON.stringify(s.name)} is untrusted (the default for a file): its command must be an absolute path and serve refuses its tools, as there is no one to approve them; add "trust": "trusted" if you trust it`,
      });
    }
  }
  if (enabled.length > DEFAULT_MAX_SERVERS) {
    problems.push({ source: file, path: "", severity: "error", message: `${enabled.length} servers enabled; serve runs at most ${DEFAULT_MAX_SERVERS}` });
  }
  if (enabled.length === 0 && !problems.some((p) => p.severity === "error")) {
    problems.push({ source: file, path: "", severity: "error", message: "no enabled server to serve" });
  }
  const serve = readServeSettings(decoded.value, enabled.map((s) => s.name), file);
  problems.push(...serve.problems);
  const { settings } = serve;
  // One session must fit: the shared upstreams plus one connection to each per-client one.
  const maxUpstreams = settings.maxUpstreamConnections ?? DEFAULT_MAX_UPSTREAM_CONNECTIONS;
  if (enabled.length > maxUpstreams) {
    problems.push({ source: file, path: "/serve/maxUpstreamConnections", severity: "error", message: `${enabled.length} upstreams cannot serve even one session within ${maxUpstreams} upstream connections` });
  }
  return { servers: enabled, settings, problems };
}

/** The JSON pointer of a server's entry, whichever shape the file has. */
function entryPath(value: unknown, name: string): string {
  const escaped = name.replace(/~/g, "~0").replace(/\//g, "~1");
  if (Array.isArray(value)) return `/${value.findIndex((e: { name?: unknown }) => e?.name === name)}`;
  const file = value as { mcpServers?: Record<string, unknown>; servers?: unknown };
  if (file.mcpServers !== undefined && Object.hasOwn(file.mcpServers, name)) return `/mcpServers/${escaped}`;
  if (Array.isArray(file.servers)) return `/servers/${file.servers.findIndex((e: { name?: unknown }) => e?.name === name)}`;
  return `/servers/${escaped}`;
}

function fileProblem(file: string, message: string): { servers: McpServerConfig[]; settings: ServeSettings; problems: ConfigProblem[] } {
  return { servers: [], settings: { isolation: {}, bearerTokens: [] }, problems: [{ source: file, path: "", severity: "error", message }] };
}
