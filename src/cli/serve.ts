/**
 * `mcp-bridge serve --config <file> (--stdio | --http HOST:PORT)`: one MCP server in front of
 * every server of a config file. The upstreams run under an McpManager (restarts, limits,
 * redaction, untrusted marking) and are served merged through an McpServer with the gateway's
 * {@link ManagerProvider}: tools as `mcp__<server>__<tool>`, prompts likewise, resources
 * under `mcp-bridge://<server>/<uri>`.
 *
 * `--check` reads the config, prints every problem at once and exits (2 on any error, 0
 * otherwise); nothing is started.
 *
 * stdout carries nothing but MCP messages (with `--stdio`); every log line goes to stderr. The
 * command ends, every upstream stopped, when stdin ends (`--stdio`) or on SIGTERM/SIGINT.
 */
import { readFile } from "node:fs/promises";
import { formatProblem, MAX_CONFIG_FILE_BYTES } from "../config/parse-common.ts";
import { parseJsonText, parseMcpJsonFile } from "../config/parse-files.ts";
import type { ConfigProblem, McpServerConfig } from "../config/types.ts";
import { CallForwarding } from "../gateway/forwarding.ts";
import { ManagerProvider } from "../gateway/manager-provider.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import { DEFAULT_MAX_SERVERS, McpManager, type McpManagerOptions, type ServerStatus } from "../manager/manager.ts";
import { McpServer } from "../mcp/server.ts";
import type { StreamableHttpServer } from "../transport/http-server.ts";
import { StdioServerTransport } from "../transport/stdio-server.ts";
import { flag, intFlag, onlyPositionals, UsageError, type ParsedArgs } from "./args.ts";
import { ExitCode } from "./report.ts";
import { packageVersion } from "./version.ts";

const SYNOPSIS = "serve --config <file> (--stdio | --http 127.0.0.1:PORT) [--rate-limit N|off] [--health-interval ms] [--no-namespace] | serve --check --config <file>";

/** Time between pings of each ready upstream, ms (docs/decisions.md 139). */
const DEFAULT_HEALTH_INTERVAL_MS = 30_000;

/**
 * The server's bound on each provider answer. The manager already bounds every upstream
 * request (`timeout`, `toolTimeout` reset by progress, under the peer's 10-minute hard cap),
 * with clearer errors, so this only catches what it would not: the server's 60-second default
 * would cut long tools and calls waiting on a person's elicitation (docs/decisions.md 139).
 */
const PROVIDER_TIMEOUT_MS = 605_000;

/** Hosts `--http` may bind: there is no inbound authentication yet (docs/decisions.md 128). */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** Where to serve, from the command line. */
type Listen = { kind: "stdio" } | { kind: "http"; host: string; port: number };

/** Runs the command; resolves with the exit code once serving ended and every upstream is stopped. */
export async function runServe(args: ParsedArgs, io: { out: (text: string) => void; err: (text: string) => void }): Promise<number> {
  onlyPositionals(args, 1, SYNOPSIS);
  if (args.command.length > 0) throw new UsageError(`serve takes its servers from --config, not after --: ${SYNOPSIS}`);
  const file = flag(args, "config");
  if (file === undefined) throw new UsageError(`serve needs --config <file>: ${SYNOPSIS}`);
  const log = (line: string): void => io.err(`mcp-bridge serve: ${line}`);

  if (args.flags.has("check")) {
    if (args.flags.has("stdio") || args.flags.has("http")) throw new UsageError("--check starts nothing: drop --stdio and --http");
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
  const options: ServeOptions = {
    healthIntervalMs: intFlag(args, "health-interval", DEFAULT_HEALTH_INTERVAL_MS),
    namespaced: !args.flags.has("no-namespace"),
    rateLimit: rateLimitFrom(args),
  };
  const { servers, problems } = await readServeConfig(file);
  for (const problem of problems) log(formatProblem(problem));
  if (problems.some((p) => p.severity === "error")) {
    log(`${file} has errors; nothing was started (see them all with: mcp-bridge serve --check --config ${file})`);
    return ExitCode.Usage;
  }
  if (!options.namespaced && servers.length !== 1) throw new UsageError(`--no-namespace serves one upstream under its own names; ${file} has ${servers.length}`);
  return serve(servers, listen, options, log);
}

/**
 * `--rate-limit N|off`: the manager's per-upstream token bucket (default 100 calls a minute,
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

/** How to serve, beyond where. */
interface ServeOptions {
  healthIntervalMs: number;
  /** False (`--no-namespace`): the one upstream's names as they are (docs/decisions.md 141). */
  namespaced: boolean;
  /** The manager's per-upstream bucket (`--rate-limit`); undefined: its default. */
  rateLimit: McpManagerOptions["rateLimit"];
}

/** Starts the upstreams, serves them until the downstream side ends, then stops everything. */
async function serve(servers: McpServerConfig[], listen: Listen, options: ServeOptions, log: (line: string) => void): Promise<number> {
  // processGuard: a crash or a signal still stops every child (manager/process-guard.ts).
  // What an upstream asks during a call goes to the client of that call (gateway/forwarding.ts).
  const forwarding = new CallForwarding();
  const manager = new McpManager({
    processGuard: true,
    clientFeatures: forwarding.clientFeatures,
    health: { intervalMs: options.healthIntervalMs, timeoutMs: Math.min(5_000, Math.max(1_000, options.healthIntervalMs)) },
    ...(options.namespaced ? {} : { naming: (_prefix: string, tool: string) => tool }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
  });
  manager.on("warning", (w) => log(`warning: ${w.message}`));
  let started = false;
  manager.on("state", (change) => {
    // Each upstream's first start is reported once, below, when all of them have settled.
    if (started && change.to === "failed" || change.to === "restarting") log(`upstream ${JSON.stringify(change.server)} is ${change.to}${change.error ? `: ${change.error}` : ""}`);
  });
  let stopped: () => void = () => {};
  const ended = new Promise<void>((resolve) => (stopped = resolve));
  // Our own listeners: the process guard then closes the manager without re-raising the
  // signal, and the command ends through the same path as on stdin's end (exit 0).
  let signalled = false;
  const onSignal = (): void => {
    signalled = true;
    stopped();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  let http: StreamableHttpServer | undefined;
  const server = new McpServer(
    { name: "mcp-bridge-serve", version: packageVersion() ?? "0.0.0" },
    { providers: [new ManagerProvider(manager, { forwarding, namespaced: options.namespaced })], instructions: manager.instructions(), providerTimeoutMs: PROVIDER_TIMEOUT_MS, onProviderError: (e) => log(`upstream list failed: ${errorMessage(e)}`) },
  );
  try {
    const statuses = await manager.connect(servers);
    started = true;
    for (const s of statuses) log(describe(s));
    if (listen.kind === "stdio") {
      const session = await server.connect(new StdioServerTransport());
      session.onclose = () => stopped();
      log(`serving ${statuses.length} upstream(s) on stdio`);
    } else {
      const { StreamableHttpServer } = await import("../transport/http-server.ts");
      http = new StreamableHttpServer({ onSession: (t) => server.connect(t) });
      const { url } = await http.listen(listen.port, listen.host);
      log(`serving ${statuses.length} upstream(s) at ${url.href}`);
    }
    await ended;
  } finally {
    // After a signal ours stay: the guard re-raises it once the manager has closed unless
    // someone still listens, and this process is ending anyway.
    if (!signalled) {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    }
    await http?.close();
    await server.close();
    await manager.close();
    log("stopped; every upstream is closed");
  }
  return ExitCode.Ok;
}

/** One line per upstream after its first start: ready with its tool count, or why it failed. */
function describe(s: ServerStatus): string {
  const name = JSON.stringify(s.name);
  if (s.state === "ready") return `upstream ${name} ready (${s.transport}${s.pid === undefined ? "" : `, pid ${s.pid}`}, ${s.exposed} tool(s))`;
  return `upstream ${name} ${s.state}${s.lastError === undefined ? "" : `: ${s.lastError}`}; the others are served without it`;
}

/** `--stdio` or `--http HOST:PORT` (exactly one). */
function listenFrom(args: ParsedArgs): Listen {
  const address = flag(args, "http");
  const stdio = args.flags.has("stdio");
  if (stdio === (address !== undefined)) throw new UsageError(`serve needs one of --stdio or --http 127.0.0.1:PORT: ${SYNOPSIS}`);
  if (address === undefined) return { kind: "stdio" };
  const colon = address.lastIndexOf(":");
  const host = colon === -1 ? "127.0.0.1" : address.slice(0, colon);
  const portText = colon === -1 ? address : address.slice(colon + 1);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError(`--http: ${JSON.stringify(portText)} is not a TCP port (0 picks a free one)`);
  if (!LOOPBACK_HOSTS.has(host)) {
    throw new UsageError(`--http: ${JSON.stringify(host)} is not a loopback address; serve has no inbound authentication yet, so it binds 127.0.0.1, ::1 or localhost only`);
  }
  return { kind: "http", host: host.replace(/^\[(.*)\]$/, "$1"), port };
}

/**
 * Reads and checks a config for serving: the parsers' problems (every format they take), plus
 * what only serving makes a problem. Never throws; an unreadable file is one problem.
 */
export async function readServeConfig(file: string): Promise<{ servers: McpServerConfig[]; problems: ConfigProblem[] }> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_CONFIG_FILE_BYTES) return fileProblem(file, `larger than ${MAX_CONFIG_FILE_BYTES} bytes`);
    text = bytes.toString("utf8");
  } catch (err) {
    return fileProblem(file, `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`);
  }
  const decoded = parseJsonText(text, file);
  if (!decoded.ok) return { servers: [], problems: [decoded.problem] };
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
  return { servers: enabled, problems };
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

function fileProblem(file: string, message: string): { servers: McpServerConfig[]; problems: ConfigProblem[] } {
  return { servers: [], problems: [{ source: file, path: "", severity: "error", message }] };
}
