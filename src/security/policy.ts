/**
 * Who may do what: the typed error of every security check, the allow/deny policy on bridged
 * tool names, and the approval gate for first use of a tool from an `untrusted` server.
 *
 * Nothing here throws at call time: `ToolPolicy.permits` answers yes or no, `ApprovalGate.check`
 * resolves to `{ ok }`, so the bridge can turn a refusal into an error result (docs/decisions.md 8).
 */
import { compileGlob, type GlobMatcher } from "../util/glob.ts";
import { describeType } from "../util/object.ts";
import { BridgeError, type BridgeErrorOptions, type RefusalCode } from "../jsonrpc/errors.ts";
import type { TrustLevel } from "../config/types.ts";

/**
 * Stable codes of {@link PolicyError}.
 *
 * - `INVALID_COMMAND`: no command, or a NUL byte in the command or an argument.
 * - `COMMAND_NOT_ALLOWED`: an `untrusted` server names a command that is neither absolute nor
 *   on the allow-list (or is a relative path).
 * - `COMMAND_NOT_FOUND` / `COMMAND_NOT_EXECUTABLE`: the file is missing, not a regular file, or
 *   may not be executed.
 * - `INVALID_ENV`: an environment variable name or value the OS cannot carry.
 * - `INVALID_URL`, `URL_SCHEME_NOT_ALLOWED`, `INSECURE_URL`, `URL_CREDENTIALS`,
 *   `HOST_NOT_ALLOWED`: see `checkUrl`.
 */
export type PolicyErrorCode = RefusalCode | "COMMAND_NOT_FOUND" | "COMMAND_NOT_EXECUTABLE";

/**
 * A configuration refused by a security check before anything was spawned or connected.
 *
 * A `BridgeError` whose code says we refused to try (docs/decisions.md 22): a failure of
 * something that was tried has another code, and the fix of a refusal is always a change of
 * configuration. The message names the server and says what to change; it never contains a
 * secret (no argument values, no URL credentials or query values). `details.server` names the
 * server the check was about, when known.
 *
 * ```ts
 * new PolicyError("INSECURE_URL", 'server "api": ...', { details: { server: "api" } })
 * ```
 */
export class PolicyError extends BridgeError {
  declare readonly code: PolicyErrorCode;
  /** The server the check was about, when known (`details.server`). */
  readonly server: string | undefined;

  constructor(code: PolicyErrorCode, message: string, options: BridgeErrorOptions = {}) {
    super(code, message, options);
    this.name = "PolicyError";
    const server = this.details.server;
    this.server = typeof server === "string" ? server : undefined;
  }
}

/** `server "fs"`, or `server` when the name is unknown: the start of every message here. */
export function serverLabel(server: string | undefined): string {
  return server === undefined ? "server" : `server ${JSON.stringify(server)}`;
}

// ---------------------------------------------------------------------------------------------
// Allow and deny lists on bridged tool names

export interface ToolPolicyOptions {
  /**
   * Globs (see `util/glob.ts`): when given, only matching tools are exposed. Undefined means
   * every tool; an empty list means none (an explicit list is taken literally).
   */
  allow?: readonly string[];
  /** Globs: matching tools are hidden and refused, whatever `allow` says. */
  deny?: readonly string[];
  /** The server the lists belong to, named in {@link ToolPolicy.explain}. */
  server?: string;
}

/**
 * `allow`/`deny` globs on bridged tool names (`mcp__fs__write`), applied both when tools are
 * listed (`filter`) and when one is called (`permits`), so a tool hidden from the list cannot
 * be called by guessing its name. Deny wins.
 *
 * ```ts
 * const policy = new ToolPolicy({ deny: ["mcp__fs__write*"], server: "fs" });
 * policy.permits("mcp__fs__write_file") // false
 * ```
 */
export class ToolPolicy {
  private readonly allow: readonly Pattern[] | undefined;
  private readonly deny: readonly Pattern[];
  private readonly server: string | undefined;

  constructor(options: ToolPolicyOptions = {}) {
    this.allow = options.allow?.map(compilePattern);
    this.deny = (options.deny ?? []).map(compilePattern);
    this.server = options.server;
  }

  permits(bridgedName: string): boolean {
    if (this.deny.some((p) => p.match(bridgedName))) return false;
    return this.allow === undefined || this.allow.some((p) => p.match(bridgedName));
  }

  /** The items whose name is permitted, in their order. */
  filter<T>(items: readonly T[], nameOf: (item: T) => string): T[] {
    return items.filter((item) => this.permits(nameOf(item)));
  }

  /** Why `bridgedName` is permitted or refused, and for a refusal, what to change. */
  explain(bridgedName: string): string {
    const label = serverLabel(this.server);
    const tool = `tool ${JSON.stringify(bridgedName)}`;
    const denied = this.deny.find((p) => p.match(bridgedName));
    if (denied !== undefined) {
      return `${label}: ${tool} is refused by deny pattern ${JSON.stringify(denied.source)}; remove that pattern from "deny" to use it`;
    }
    if (this.allow === undefined) return `${label}: ${tool} is permitted (no allow list, no deny pattern matches)`;
    const allowed = this.allow.find((p) => p.match(bridgedName));
    if (allowed !== undefined) return `${label}: ${tool} is permitted by allow pattern ${JSON.stringify(allowed.source)}`;
    const list = this.allow.length === 0 ? "the allow list is empty" : "it matches no pattern in \"allow\"";
    return `${label}: ${tool} is refused: ${list}; add a matching pattern to "allow" to use it`;
  }
}

interface Pattern {
  source: string;
  match: GlobMatcher;
}

function compilePattern(source: string): Pattern {
  return { source, match: compileGlob(source) };
}

// ---------------------------------------------------------------------------------------------
// Approval on first use

/** What an approver answers. Only `allow_always` is remembered (for the gate's lifetime). */
export type ApprovalDecision = "allow_once" | "allow_always" | "deny";

/** One tool call waiting for a person (or a program) to allow it. */
export interface ApprovalRequest {
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The name the agent sees (`mcp__<server>__<tool>`). */
  bridgedName: string;
  args: unknown;
}

/** Decides whether a call to a tool of an `untrusted` server may go ahead. */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalDecision> | ApprovalDecision;

/** The outcome of {@link ApprovalGate.check}. A refusal carries a message for the model. */
export type ApprovalResult = { ok: true } | { ok: false; message: string };

const DECISIONS: readonly string[] = ["allow_once", "allow_always", "deny"];

/** An approver's answer, or why there is none. */
type Outcome = { decision: ApprovalDecision } | { failure: "threw" | "invalid" };

/**
 * Asks before the first call to each tool of an `untrusted` server. Use one gate per session:
 * `allow_always` is remembered by the gate instance and forgotten with it.
 *
 * - `trusted` servers are never asked.
 * - Without an approver, calls to tools of `untrusted` servers are refused with a message that
 *   says how to approve them.
 * - An approver that throws, rejects or answers something else counts as `deny`.
 * - Concurrent first calls to the same tool share one question. If the answer is `allow_once`,
 *   only the call that asked goes ahead; each other waiting call asks again (one at a time), so
 *   `allow_once` never lets more than one call through.
 *
 * ```ts
 * const gate = new ApprovalGate(async ({ bridgedName }) => (await ask(bridgedName)) ? "allow_once" : "deny");
 * const verdict = await gate.check("fs", "write", "mcp__fs__write", args, config.trust);
 * if (!verdict.ok) return errorResult(verdict.message);
 * ```
 */
export class ApprovalGate {
  private readonly approver: Approver | undefined;
  private readonly always = new Set<string>();
  private readonly inFlight = new Map<string, Promise<Outcome>>();

  constructor(approver?: Approver) {
    if (approver !== undefined && typeof approver !== "function") {
      throw new TypeError(`approve must be a function (a request -> "allow_once" | "allow_always" | "deny"), got ${describeType(approver)}`);
    }
    this.approver = approver;
  }

  /** Whether `allow_always` was given for this tool during the gate's lifetime. */
  isAlwaysAllowed(server: string, tool: string): boolean {
    return this.always.has(keyOf(server, tool));
  }

  /**
   * True when the call may go ahead without asking: a trusted server, or a tool allowed
   * always. Synchronous, so the hot path of a trusted call awaits nothing here.
   */
  allowsWithoutAsking(server: string, tool: string, trust: TrustLevel | undefined): boolean {
    return trust === "trusted" || this.always.has(keyOf(server, tool));
  }

  /**
   * Resolves to `{ ok: true }` when the call may go ahead. Never rejects.
   * `trust` defaults to `untrusted`, the safe side.
   */
  async check(
    server: string,
    tool: string,
    bridgedName: string,
    args: unknown,
    trust: TrustLevel | undefined,
  ): Promise<ApprovalResult> {
    if (trust === "trusted") return { ok: true };
    const key = keyOf(server, tool);
    const what = `${serverLabel(server)} is untrusted: tool ${JSON.stringify(tool)} (${bridgedName})`;
    const approver = this.approver;
    if (approver === undefined) {
      return {
        ok: false,
        message:
          `${what} needs approval on first use and no approver is configured; ` +
          `pass an approve callback to allow it, or mark the server trusted`,
      };
    }
    for (;;) {
      if (this.always.has(key)) return { ok: true };
      const pending = this.inFlight.get(key);
      if (pending !== undefined) {
        const outcome = await pending;
        // Someone else's `allow_once` was theirs alone: loop and ask for this call.
        if ("decision" in outcome && outcome.decision === "allow_once") continue;
        return this.verdict(outcome, what);
      }
      // The gate's state is updated before any waiter resumes, so a waiter that loops never
      // finds the settled question still in flight. `ask` never rejects.
      const asking = ask(approver, { server, tool, bridgedName, args }).then((outcome) => {
        this.inFlight.delete(key);
        if ("decision" in outcome && outcome.decision === "allow_always") this.always.add(key);
        return outcome;
      });
      this.inFlight.set(key, asking);
      return this.verdict(await asking, what);
    }
  }

  private verdict(outcome: Outcome, what: string): ApprovalResult {
    if ("failure" in outcome) {
      // The approver's own error text is not echoed: it may quote the arguments.
      const why = outcome.failure === "threw" ? "the approve callback failed" : "the approve callback gave no valid decision";
      return {
        ok: false,
        message: `${what} was not approved: ${why}, so the call was refused; fix the callback or mark the server trusted`,
      };
    }
    if (outcome.decision === "deny") {
      return { ok: false, message: `${what} was denied by the approver; do not retry this call unless the user approves it` };
    }
    return { ok: true };
  }
}

async function ask(approver: Approver, request: ApprovalRequest): Promise<Outcome> {
  try {
    const decision: unknown = await approver(request);
    if (typeof decision === "string" && DECISIONS.includes(decision)) {
      return { decision: decision as ApprovalDecision };
    }
    return { failure: "invalid" };
  } catch {
    return { failure: "threw" };
  }
}

/**
 * One key per (server, tool) pair, unambiguous whatever the names hold: the server name's
 * length comes first. Built on every untrusted call, so a template rather than JSON.stringify.
 */
function keyOf(server: string, tool: string): string {
  return `${server.length}:${server}/${tool}`;
}
