/**
 * The tool calls of one ACP session: each is reported to the editor as it runs
 * (`tool_call` pending → `tool_call_update` in_progress → completed or failed), and a tool of
 * an `untrusted` server is put to the user with `session/request_permission` before its first
 * call. "Always" answers are remembered for the session; the manager's approval gate asks
 * through {@link SessionToolCalls.approve}.
 */
import { errorResult } from "../bridge/failures.ts";
import type { BridgedResult } from "../bridge/types.ts";
import type { TrustLevel } from "../config/types.ts";
import { errorMessage } from "../jsonrpc/errors.ts";
import type { McpManager } from "../manager/manager.ts";
import type { ApprovalDecision, ApprovalRequest } from "../security/policy.ts";
import type { AcpAgentConnection } from "./connection.ts";
import { toolCallContent, toolKind } from "./content.ts";
import type { PermissionOption, PermissionOptionKind, SessionUpdate, ToolKind } from "./types.ts";

/** The four answers ACP knows, offered in this order. */
export const PERMISSION_OPTIONS: readonly PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow in this session", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
  { optionId: "reject_always", name: "Always reject in this session", kind: "reject_always" },
];

/** What the tool calls need from their session. */
export interface ToolCallSession {
  readonly id: string;
  readonly manager: McpManager;
  /** Trust of each server of the session, by name. */
  readonly trust: ReadonlyMap<string, TrustLevel>;
  /** Aborted by `session/cancel`: calls and questions of the current turn listen to it. */
  turnSignal(): AbortSignal;
  /** Sends (or queues) a session update. */
  send(update: SessionUpdate): void;
  log(line: string): void;
}

interface CallInfo {
  title: string;
  kind: ToolKind;
  rawInput: unknown;
  started: boolean;
}

export class SessionToolCalls {
  private readonly session: ToolCallSession;
  private readonly connection: AcpAgentConnection;
  private readonly calls = new Map<string, CallInfo>();
  /** Bridged name to the calls waiting for its approval, oldest first. */
  private readonly waiting = new Map<string, string[]>();
  private readonly allowAlways = new Set<string>();
  private readonly rejectAlways = new Set<string>();
  private next = 0;

  constructor(session: ToolCallSession, connection: AcpAgentConnection) {
    this.session = session;
    this.connection = connection;
  }

  /** Runs one call and reports it. Never throws for the tool's sake (failures are results). */
  async call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<BridgedResult> {
    const s = this.session;
    const tool = (await s.manager.tools()).find((t) => t.name === name);
    const toolCallId = `call_${++this.next}`;
    const info: CallInfo = { title: tool === undefined ? name : `${tool.title} (${tool.server})`, kind: toolKind(tool?.annotations), rawInput: args, started: false };
    this.calls.set(toolCallId, info);
    s.send({ sessionUpdate: "tool_call", toolCallId, title: info.title, name, kind: info.kind, status: "pending", rawInput: args });
    let result: BridgedResult;
    if (this.rejectAlways.has(name)) {
      result = errorResult("denied", `The user rejected tool ${JSON.stringify(name)} for this session; do not call it again.`, { retryable: false });
    } else {
      // A call that will be put to the user stays pending until the answer (see `approve`).
      const asks = tool !== undefined && s.trust.get(tool.server) === "untrusted" && !this.allowAlways.has(name);
      if (asks) this.waiting.set(name, [...(this.waiting.get(name) ?? []), toolCallId]);
      else this.start(toolCallId);
      try {
        result = await s.manager.callTool(name, args, { signal });
      } finally {
        const left = (this.waiting.get(name) ?? []).filter((id) => id !== toolCallId);
        if (left.length > 0) this.waiting.set(name, left);
        else this.waiting.delete(name);
      }
    }
    this.calls.delete(toolCallId);
    const done: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId, status: result.isError ? "failed" : "completed", content: toolCallContent(result) };
    if (result.structured !== undefined) done.rawOutput = result.structured;
    s.send(done);
    return result;
  }

  /** The manager's approver: asks the editor about the oldest call waiting for this tool. */
  async approve(req: ApprovalRequest): Promise<ApprovalDecision> {
    const name = req.bridgedName;
    const toolCallId = this.waiting.get(name)?.[0];
    const info = toolCallId === undefined ? undefined : this.calls.get(toolCallId);
    if (this.rejectAlways.has(name) || toolCallId === undefined || info === undefined) return "deny";
    let kind: PermissionOptionKind | undefined;
    try {
      const answer = await this.connection.requestPermission(
        {
          sessionId: this.session.id,
          toolCall: { toolCallId, title: info.title, kind: info.kind, status: "pending", rawInput: info.rawInput },
          options: [...PERMISSION_OPTIONS],
        },
        { signal: this.session.turnSignal() },
      );
      const chosen = answer.outcome.outcome === "selected" ? answer.outcome.optionId : undefined;
      kind = PERMISSION_OPTIONS.find((o) => o.optionId === chosen)?.kind;
    } catch (err) {
      this.session.log(`permission for ${name} not given: ${errorMessage(err)}`);
    }
    switch (kind) {
      case "allow_always":
        this.allowAlways.add(name);
        for (const id of this.waiting.get(name) ?? []) this.start(id);
        return "allow_always";
      case "allow_once":
        this.start(toolCallId);
        return "allow_once";
      case "reject_always":
        this.rejectAlways.add(name);
        return "deny";
      default:
        return "deny";
    }
  }

  private start(toolCallId: string): void {
    const info = this.calls.get(toolCallId);
    if (info === undefined || info.started) return;
    info.started = true;
    this.session.send({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
  }
}
