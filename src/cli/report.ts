/**
 * What a failed command becomes: an exit code, and either a message for a person or one JSON
 * object for a program (`--json`), both on stderr. Loaded only when something failed.
 */
import { BridgeError, type BridgeErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { UsageError } from "./args.ts";
import { printable } from "./format.ts";

/** The exit codes of `mcp-bridge`, as documented in `--help` and the README. */
export const ExitCode = {
  Ok: 0,
  /** The tool ran and returned `isError: true`, or a failure none of the codes below names. */
  Failed: 1,
  /** Bad command line or config file: nothing was started. */
  Usage: 2,
  /** The server could not be started or reached, or went away (spawn, exit, refused, 401). */
  Connect: 3,
  /** The server did not answer in time. */
  Timeout: 4,
  /** The server answered with a JSON-RPC error, or with something that breaks MCP. */
  Protocol: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** Every `BridgeError` code, so that a new code cannot be left out without the compiler noticing. */
const EXIT_OF_BRIDGE_CODE: Record<BridgeErrorCode, ExitCodeValue> = {
  TIMEOUT: ExitCode.Timeout,
  CANCELLED: ExitCode.Failed,
  CLOSED: ExitCode.Connect,
  NOT_CONNECTED: ExitCode.Connect,
  SPAWN_FAILED: ExitCode.Connect,
  PROCESS_EXITED: ExitCode.Connect,
  AUTH_FAILED: ExitCode.Connect,
  HTTP_ERROR: ExitCode.Connect,
  LINE_TOO_LONG: ExitCode.Protocol,
  PARSE_ERROR: ExitCode.Protocol,
  INVALID_UTF8: ExitCode.Protocol,
  INVALID_MESSAGE: ExitCode.Protocol,
  TOO_MANY_PENDING: ExitCode.Failed,
  // Our own request could not be encoded: a local failure, not the server's.
  INVALID_PARAMS: ExitCode.Failed,
  UNSUPPORTED_VERSION: ExitCode.Protocol,
  INVALID_RESULT: ExitCode.Protocol,
  OUTPUT_SCHEMA_MISMATCH: ExitCode.Protocol,
  OUTPUT_SCHEMA_UNDECIDED: ExitCode.Protocol,
  LIMIT_EXCEEDED: ExitCode.Protocol,
  // Misuse of the API by our own code: nothing the user or the server can fix.
  INVALID_STATE: ExitCode.Failed,
  // An unresolvable secret:// cannot reach the server (docs/decisions.md 69).
  SECRET_UNRESOLVED: ExitCode.Connect,
  COMMAND_NOT_FOUND: ExitCode.Connect,
  COMMAND_NOT_EXECUTABLE: ExitCode.Connect,
  // Refusals by a security check, path confinement and the manager's resource calls: the CLI
  // polices nothing itself (docs/decisions.md 71) and reported these as plain failures before
  // they were BridgeErrors; they keep exit 1.
  INVALID_COMMAND: ExitCode.Failed,
  COMMAND_NOT_ALLOWED: ExitCode.Failed,
  INVALID_ENV: ExitCode.Failed,
  INVALID_URL: ExitCode.Failed,
  URL_SCHEME_NOT_ALLOWED: ExitCode.Failed,
  INSECURE_URL: ExitCode.Failed,
  URL_CREDENTIALS: ExitCode.Failed,
  HOST_NOT_ALLOWED: ExitCode.Failed,
  NUL_BYTE: ExitCode.Failed,
  ROOT_NOT_FOUND: ExitCode.Failed,
  ESCAPES_ROOT: ExitCode.Failed,
  OUTSIDE_ROOT: ExitCode.Failed,
  SYMLINK_ESCAPE: ExitCode.Failed,
  BROKEN_SYMLINK: ExitCode.Failed,
  IO_ERROR: ExitCode.Failed,
  UNKNOWN_SERVER: ExitCode.Failed,
  NOT_READY: ExitCode.Failed,
  RESOURCES_DISABLED: ExitCode.Failed,
  RESOURCE_FILTERED: ExitCode.Failed,
  REQUEST_FAILED: ExitCode.Failed,
};

const KIND: Record<ExitCodeValue, string> = {
  0: "ok",
  1: "failed",
  2: "usage",
  3: "connect",
  4: "timeout",
  5: "protocol",
};

/** A failure the CLI itself diagnosed (a config file problem, an unresolved secret). */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;

  constructor(exitCode: ExitCodeValue, code: string, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.code = code;
  }
}

/** A failure while talking to a server, with the server's name and its last stderr lines. */
export class ServerFailure extends Error {
  /** `server "name" (pid N)` or `server <url>`. */
  readonly server: string;
  /** The last lines the server wrote to stderr ("" for none, or for a remote server). */
  readonly stderr: string;
  /** The lines were already streamed (`--verbose`), so the text report does not repeat them. */
  readonly stderrShown: boolean;
  /** Removes the server's secrets from the printed report. */
  readonly redact: (text: string) => string;

  constructor(
    cause: unknown,
    server: string,
    stderr: string,
    options: { stderrShown?: boolean; redact?: (text: string) => string } = {},
  ) {
    const message = errorMessage(cause);
    super(message.startsWith("server ") ? message : `${server}: ${message}`, { cause });
    this.name = "ServerFailure";
    this.server = server;
    this.stderr = stderr;
    this.stderrShown = options.stderrShown ?? false;
    this.redact = options.redact ?? ((text) => text);
  }
}

/** The machine-readable form of a failure, as printed by `--json`. */
export interface FailureReport {
  exitCode: ExitCodeValue;
  /** `usage`, `failed`, `connect`, `timeout` or `protocol`. */
  kind: string;
  /** A `BridgeError` code, `RPC_ERROR`, `USAGE`, or a CLI code such as `CONFIG`. */
  code: string;
  message: string;
  /** The JSON-RPC error code and data, when the server answered with an error. */
  rpcCode?: number;
  data?: unknown;
  /** The server's last stderr lines, when it wrote any. */
  serverStderr?: string;
}

/** Classifies any thrown value. */
function describeFailure(err: unknown): FailureReport {
  const failure = err instanceof ServerFailure ? err : undefined;
  const cause = failure ? failure.cause : err;
  const [exitCode, code] = classify(cause);
  const report: FailureReport = { exitCode, kind: KIND[exitCode], code, message: errorMessage(err) };
  if (cause instanceof RpcError) {
    report.rpcCode = cause.code;
    if (cause.data !== undefined) report.data = cause.data;
  }
  const exitStderr = cause instanceof BridgeError && typeof cause.details.stderr === "string" ? cause.details.stderr : "";
  const stderr = failure?.stderr || exitStderr;
  if (stderr !== "") report.serverStderr = stderr;
  return report;
}

function classify(cause: unknown): [ExitCodeValue, string] {
  if (cause instanceof UsageError) return [ExitCode.Usage, "USAGE"];
  if (cause instanceof CliError) return [cause.exitCode, cause.code];
  if (cause instanceof BridgeError) return [EXIT_OF_BRIDGE_CODE[cause.code] ?? ExitCode.Failed, cause.code];
  if (cause instanceof RpcError) return [ExitCode.Protocol, "RPC_ERROR"];
  return [ExitCode.Failed, "ERROR"];
}

const TIMEOUT_HINT = "hint: raise --timeout; --verbose shows what a stdio server writes to stderr meanwhile";

/**
 * Prints a failure and returns its exit code. With `json`, one line `{"error": {...}}` (see
 * {@link FailureReport}) and nothing else, so that a program reads stderr the same way every time.
 */
export function reportFailure(err: unknown, options: { json: boolean; write: (text: string) => void; usage: string }): ExitCodeValue {
  const report = describeFailure(err);
  const redact = err instanceof ServerFailure ? err.redact : (text: string) => text;
  if (options.json) {
    options.write(redact(JSON.stringify({ error: report })));
  } else if (report.code === "USAGE") {
    options.write(`mcp-bridge: ${report.message}\n${options.usage}`);
  } else {
    options.write(redact(textReport(report, err instanceof ServerFailure && err.stderrShown)));
  }
  return report.exitCode;
}

function textReport(report: FailureReport, stderrShown: boolean): string {
  const tag = report.rpcCode !== undefined ? `JSON-RPC ${report.rpcCode}` : report.code;
  const lines = [`mcp-bridge: ${printable(report.message)} [${tag}]`];
  // An exit report already quotes the server's stderr; --verbose has streamed it as it came.
  if (report.serverStderr !== undefined && report.code !== "PROCESS_EXITED" && !stderrShown) {
    lines.push("last stderr of the server:", ...report.serverStderr.split("\n").map((l) => `  ${printable(l)}`));
  }
  if (report.exitCode === ExitCode.Timeout && !stderrShown) lines.push(TIMEOUT_HINT);
  return lines.join("\n");
}
