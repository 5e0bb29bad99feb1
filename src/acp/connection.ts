/**
 * The agent side of an ACP connection, on the same ndjson framing and {@link JsonRpcPeer} as
 * MCP. An agent implements {@link Agent}; the connection validates params, negotiates the
 * protocol version, answers `$/cancel_request` with `-32800`, and gives the agent what it
 * needs to talk back (`sessionUpdate`, `requestPermission`, and raw `request`/`notify` for
 * extensions such as MCP over ACP).
 *
 * ```ts
 * const connection = new AcpAgentConnection((conn) => new MyAgent(conn));
 * await connection.start(); // serves this process's stdin/stdout
 * await connection.closed;  // stdin ended (or close() was called)
 * ```
 *
 * Contract:
 * - Requests other than `initialize` before `initialize` get `-32600`.
 * - Malformed params get `-32602` naming the field; a missing optional agent method `-32601`.
 * - A cancelled request (`$/cancel_request`) is answered at once with `-32800`; its handler's
 *   signal aborts and whatever it returns later is dropped.
 * - Methods starting with `_` go to handlers set with {@link AcpAgentConnection.setRequestHandler}
 *   / `setNotificationHandler`, else to `Agent.onExtMethod` / `onExtNotification`.
 */
import { ErrorCode, errorMessage, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcId, JsonRpcParams } from "../jsonrpc/message.ts";
import { JsonRpcPeer, type RequestContext, type RequestOptions } from "../jsonrpc/peer.ts";
import { StdioServerTransport } from "../transport/stdio-server.ts";
import type { Transport } from "../transport/transport.ts";
import { acpPeerOptions } from "./peer-options.ts";
import {
  ACP_METHODS,
  ACP_PROTOCOL_VERSION,
  SUPPORTED_ACP_VERSIONS,
  type CancelNotification,
  type ClientCapabilities,
  type CloseSessionRequest,
  type CloseSessionResponse,
  type Implementation,
  type InitializeRequest,
  type InitializeResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type ResumeSessionRequest,
  type ResumeSessionResponse,
  type SessionUpdate,
} from "./types.ts";
import { isPlainObject as isObject } from "../util/object.ts";

type MaybePromise<T> = T | Promise<T>;

/** What an agent's request handler gets besides its params. */
export interface AcpRequestContext {
  /** Aborted when the client cancels this request or the connection ends. */
  readonly signal: AbortSignal;
  readonly requestId: JsonRpcId;
}

/**
 * The methods an agent implements. Optional ones answer `-32601` when absent; advertise
 * them (`loadSession`, `sessionCapabilities.resume/close`) only when implemented.
 */
export interface Agent {
  /** The connection adds the negotiated `protocolVersion` to what this returns. */
  initialize(params: InitializeRequest, ctx: AcpRequestContext): MaybePromise<Omit<InitializeResponse, "protocolVersion">>;
  newSession(params: NewSessionRequest, ctx: AcpRequestContext): MaybePromise<NewSessionResponse>;
  loadSession?(params: LoadSessionRequest, ctx: AcpRequestContext): MaybePromise<LoadSessionResponse>;
  resumeSession?(params: ResumeSessionRequest, ctx: AcpRequestContext): MaybePromise<ResumeSessionResponse>;
  prompt(params: PromptRequest, ctx: AcpRequestContext): MaybePromise<PromptResponse>;
  /** `session/cancel`: stop the turn; the pending `prompt` must answer `stopReason: "cancelled"`. */
  cancel(params: CancelNotification): MaybePromise<void>;
  closeSession?(params: CloseSessionRequest, ctx: AcpRequestContext): MaybePromise<CloseSessionResponse>;
  /** Requests whose method starts with `_` and has no handler of its own. */
  onExtMethod?(method: string, params: Record<string, unknown>, ctx: AcpRequestContext): MaybePromise<Record<string, unknown>>;
  /** Notifications whose method starts with `_` and has no handler of its own. */
  onExtNotification?(method: string, params: Record<string, unknown>): MaybePromise<void>;
}

export interface AcpAgentConnectionOptions {
  /** Default: this process's stdin/stdout (`StdioServerTransport`, 32 MiB line limit). */
  transport?: Transport;
  /** Default timeout of requests to the client, ms. Default 60 000. */
  requestTimeoutMs?: number;
  /** Diagnostics (never protocol output); default none. */
  log?: (message: string) => void;
}

/** The `-32002` error for a session id this agent does not know: `data.sessionId` names it. */
export function sessionNotFound(sessionId: string): RpcError {
  return new RpcError(ErrorCode.ResourceNotFound, `Resource not found: session ${JSON.stringify(sessionId)}`, { sessionId });
}

/** A `-32602` error: `what` says which field is wrong and how. */
export function invalidParams(what: string, data?: unknown): RpcError {
  return new RpcError(ErrorCode.InvalidParams, `Invalid params: ${what}`, data);
}

/** Echo the client's version when we speak it, else answer our latest (the client decides). */
export function negotiateAcpVersion(requested: number): number {
  return SUPPORTED_ACP_VERSIONS.includes(requested) ? requested : ACP_PROTOCOL_VERSION;
}

export class AcpAgentConnection {
  /** The JSON-RPC peer underneath, for extensions that need more than the helpers below. */
  readonly peer: JsonRpcPeer;
  /** Called once when the connection ends (stdin EOF, a stream error, or `close()`). */
  onclose?: (reason?: Error) => void;
  /** Resolves when the connection has ended. */
  readonly closed: Promise<void>;

  private readonly agent: Agent;
  private readonly transport: Transport;
  private readonly log: (message: string) => void;
  private readonly requestTimeoutMs: number;
  private readonly extraRequests = new Map<string, (params: unknown, ctx: AcpRequestContext) => unknown>();
  private readonly extraNotifications = new Map<string, (params: unknown) => unknown>();
  private initialized: { version: number; capabilities: ClientCapabilities; info: Implementation | undefined } | undefined;
  private markClosed!: () => void;

  constructor(agent: Agent | ((connection: AcpAgentConnection) => Agent), options: AcpAgentConnectionOptions = {}) {
    this.transport = options.transport ?? new StdioServerTransport();
    this.log = options.log ?? (() => {});
    this.requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.peer = new JsonRpcPeer(this.transport, acpPeerOptions({ requestTimeoutMs: this.requestTimeoutMs }));
    this.agent = typeof agent === "function" ? agent(this) : agent;
    this.wire();
  }

  /** The negotiated protocol version, once `initialize` was answered. */
  get protocolVersion(): number | undefined {
    return this.initialized?.version;
  }

  /** What the client said it can do in `initialize` (empty before). */
  get clientCapabilities(): ClientCapabilities {
    return this.initialized?.capabilities ?? {};
  }

  get clientInfo(): Implementation | undefined {
    return this.initialized?.info;
  }

  /** Starts reading from the transport. */
  start(): Promise<void> {
    return this.peer.start();
  }

  /** Ends the connection; pending requests to the client reject with `CLOSED`. Idempotent. */
  close(): Promise<void> {
    return this.peer.close();
  }

  /**
   * Sends a `session/update` notification. Never rejects: once the connection has ended,
   * updates are dropped (and logged).
   */
  async sessionUpdate(sessionId: string, update: SessionUpdate): Promise<void> {
    try {
      await this.peer.notify(ACP_METHODS.sessionUpdate, { sessionId, update } as unknown as JsonRpcParams);
    } catch (err) {
      this.log(`session/update for session ${JSON.stringify(sessionId)} not sent: ${errorMessage(err)}`);
    }
  }

  /**
   * Asks the user through `session/request_permission`. Aborting `signal` sends
   * `$/cancel_request` and rejects. A malformed answer reads as `{outcome: "cancelled"}`.
   */
  async requestPermission(params: RequestPermissionRequest, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<RequestPermissionResponse> {
    const timeoutMs = options.timeoutMs ?? 600_000;
    const raw = await this.peer.request<unknown>(ACP_METHODS.requestPermission, params as unknown as JsonRpcParams, {
      signal: options.signal,
      timeoutMs,
      maxTotalTimeoutMs: timeoutMs,
    });
    const outcome = isObject(raw) && isObject(raw.outcome) ? raw.outcome : undefined;
    if (outcome?.outcome === "selected" && typeof outcome.optionId === "string") {
      return { outcome: { outcome: "selected", optionId: outcome.optionId } };
    }
    return { outcome: { outcome: "cancelled" } };
  }

  /** Sends any request to the client (extension methods such as `_mcp/*`). */
  request<T = unknown>(method: string, params?: JsonRpcParams, options?: RequestOptions): Promise<T> {
    return this.peer.request<T>(method, params, options);
  }

  /** Sends any notification to the client. */
  notify(method: string, params?: JsonRpcParams): Promise<void> {
    return this.peer.notify(method, params);
  }

  /**
   * Handles an extra request method (e.g. `_mcp/client_to_server/request`) before the agent's
   * `onExtMethod`. It runs like every other method: after `initialize`, cancellable.
   */
  setRequestHandler(method: string, handler: (params: unknown, ctx: AcpRequestContext) => unknown): void {
    this.extraRequests.set(method, handler);
  }

  removeRequestHandler(method: string): void {
    this.extraRequests.delete(method);
  }

  /** Handles an extra notification method before the agent's `onExtNotification`. */
  setNotificationHandler(method: string, handler: (params: unknown) => unknown): void {
    this.extraNotifications.set(method, handler);
  }

  removeNotificationHandler(method: string): void {
    this.extraNotifications.delete(method);
  }

  private wire(): void {
    const a = this.agent;
    const peer = this.peer;
    peer.setRequestHandler(ACP_METHODS.initialize, (p, ctx) => {
      // Checked and recorded at once, so that requests pipelined behind it are not refused.
      const request = readInitialize(p);
      const version = negotiateAcpVersion(request.protocolVersion);
      this.initialized = { version, capabilities: request.clientCapabilities ?? {}, info: request.clientInfo ?? undefined };
      return this.run(ctx, async (c) => ({ ...(await a.initialize(request, c)), protocolVersion: version }), false);
    });
    const session = <P, R>(method: string, read: (p: Record<string, unknown>) => P, call: ((p: P, c: AcpRequestContext) => MaybePromise<R>) | undefined) => {
      peer.setRequestHandler(method, (p, ctx) =>
        this.run(ctx, (c) => {
          if (call === undefined) throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`, { method });
          return call(read(paramsObject(p)), c);
        }),
      );
    };
    session(ACP_METHODS.sessionNew, readNewSession, a.newSession.bind(a));
    session(ACP_METHODS.sessionLoad, readLoadSession, a.loadSession?.bind(a));
    session(ACP_METHODS.sessionResume, readResumeSession, a.resumeSession?.bind(a));
    session(ACP_METHODS.sessionPrompt, readPrompt, a.prompt.bind(a));
    session(ACP_METHODS.sessionClose, (p) => ({ ...p, sessionId: readString(p, "sessionId") }), a.closeSession?.bind(a));

    peer.setNotificationHandler(ACP_METHODS.sessionCancel, (p) => {
      if (this.initialized === undefined) return;
      if (!isObject(p) || typeof p.sessionId !== "string") {
        this.log("session/cancel without a sessionId was ignored");
        return;
      }
      return a.cancel({ ...p, sessionId: p.sessionId });
    });
    peer.fallbackRequestHandler = (method, p, ctx) =>
      this.run(ctx, (c) => {
        const extra = this.extraRequests.get(method);
        if (extra !== undefined) return extra(p, c);
        if (method.startsWith("_") && a.onExtMethod !== undefined) return a.onExtMethod(method, isObject(p) ? p : {}, c);
        throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`, { method });
      });
    peer.fallbackNotificationHandler = (method, p) => {
      if (this.initialized === undefined) return;
      const extra = this.extraNotifications.get(method);
      const done = extra !== undefined ? extra(p) : method.startsWith("_") ? a.onExtNotification?.(method, isObject(p) ? p : {}) : undefined;
      if (done instanceof Promise) done.catch((err: unknown) => this.log(`notification ${method} failed: ${errorMessage(err)}`));
    };
    peer.onerror = (err) => this.log(`connection: ${errorMessage(err)}`);
    peer.onclose = (reason) => {
      this.markClosed();
      this.onclose?.(reason);
    };
  }

  /**
   * Runs one request handler, refused before `initialize`. Cancellation is the peer's: a
   * `$/cancel_request` aborts `ctx.signal` and is answered `-32800` at once (`cancelledReply`).
   */
  private run<T>(ctx: RequestContext, handler: (c: AcpRequestContext) => MaybePromise<T>, needsInit = true): MaybePromise<T> {
    if (needsInit && this.initialized === undefined) {
      throw new RpcError(ErrorCode.InvalidRequest, `Invalid request: ${ctx.method} before initialize; send initialize first`);
    }
    // The signal is read through, not copied: the peer creates it only for a handler that reads it.
    return handler({ get signal() { return ctx.signal; }, requestId: ctx.id });
  }
}

// ---------------------------------------------------------------------------------------------
// Param readers: each returns the params typed, or throws -32602 naming the field.

function readInitialize(p: unknown): InitializeRequest {
  const params = paramsObject(p);
  const version = params.protocolVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0 || version > 0xffff) {
    throw invalidParams("protocolVersion must be an integer from 0 to 65535 (ACP version 1 is 1)");
  }
  const clientCapabilities = isObject(params.clientCapabilities) ? (params.clientCapabilities as ClientCapabilities) : {};
  const clientInfo = isImplementation(params.clientInfo) ? params.clientInfo : undefined;
  return { ...params, protocolVersion: version, clientCapabilities, ...(clientInfo === undefined ? {} : { clientInfo }) };
}

function readNewSession(p: Record<string, unknown>): NewSessionRequest {
  return { ...p, cwd: readCwd(p), mcpServers: readServers(p, true) } as NewSessionRequest;
}

/** `mcpServers` is required by the schema; tolerated absent (as in resume): the session keeps its servers. */
function readLoadSession(p: Record<string, unknown>): LoadSessionRequest {
  return readResumeSession(p);
}

function readResumeSession(p: Record<string, unknown>): ResumeSessionRequest {
  const servers = p.mcpServers === undefined ? {} : { mcpServers: readServers(p, false) };
  return { ...p, sessionId: readString(p, "sessionId"), cwd: readCwd(p), ...servers } as ResumeSessionRequest;
}

function readPrompt(p: Record<string, unknown>): PromptRequest {
  const sessionId = readString(p, "sessionId");
  if (!Array.isArray(p.prompt)) throw invalidParams("prompt must be an array of content blocks");
  p.prompt.forEach((block: unknown, i) => {
    if (!isObject(block) || typeof block.type !== "string") throw invalidParams(`prompt[${i}] must be a content block with a "type"`);
  });
  return { ...p, sessionId, prompt: p.prompt } as PromptRequest;
}

function readString(p: Record<string, unknown>, key: string): string {
  const value = p[key];
  if (typeof value !== "string" || value === "") throw invalidParams(`${key} must be a non-empty string`);
  return value;
}

function readCwd(p: Record<string, unknown>): string {
  const cwd = readString(p, "cwd");
  if (!cwd.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(cwd) && !cwd.startsWith("\\\\")) {
    throw invalidParams("cwd must be an absolute path");
  }
  return cwd;
}

/** The array itself; its entries are the session layer's to parse. `null` means none. */
function readServers(p: Record<string, unknown>, required: boolean): unknown[] {
  const value = p.mcpServers;
  if (value === null || (value === undefined && !required)) return [];
  if (!Array.isArray(value)) throw invalidParams(`mcpServers must be an array${value === undefined ? " (it is required)" : ""}`);
  return value;
}

function paramsObject(p: unknown): Record<string, unknown> {
  if (!isObject(p)) throw invalidParams("params must be an object");
  return p;
}

function isImplementation(v: unknown): v is Implementation {
  return isObject(v) && typeof v.name === "string" && typeof v.version === "string";
}
