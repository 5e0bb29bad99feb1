/**
 * The option and callback types of {@link JsonRpcPeer}, apart from its code. Types only: this
 * file is erased at run time, so it costs the peer's importers no extra module load.
 */
import type { JsonRpcErrorObject, JsonRpcId, JsonRpcParams } from "./message.ts";
import type { RequestContext } from "./inbound.ts";

/** Progress reported for an outgoing request. */
export interface ProgressInfo {
  progress: number;
  total?: number;
  message?: string;
}

export interface PeerOptions {
  /** Default timeout of an outgoing request, ms. Default 60 000. */
  requestTimeoutMs?: number;
  /** Hard cap on a request's total time even when progress resets its timeout. Default 600 000. */
  maxTotalTimeoutMs?: number;
  /** Outgoing requests allowed in flight at once. Default 10 000. */
  maxPendingRequests?: number;
  /** Answer undecodable input with `-32700` and `id: null`. Default true. */
  answerParseErrors?: boolean;
  /** Whether an incoming array is processed as a batch (else `-32600`). Default: never. */
  batchesAllowed?: () => boolean;
  /** Notification that cancels a request. Default `notifications/cancelled` (MCP). */
  cancelMethod?: string;
  /** Builds the params of the cancel notification. Default `{requestId, reason}` (MCP). */
  cancelParams?: (id: JsonRpcId, reason: string) => JsonRpcParams;
  /** Reads the cancelled id out of a received cancel notification's params. */
  cancelledId?: (params: unknown) => JsonRpcId | undefined;
  /**
   * What an incoming request that the requester cancelled is answered with. `null` (default):
   * nothing, as MCP requires of a cancelled request. A function: that error, sent as soon as
   * the cancel notification arrives (the handler's later result is dropped); ACP answers
   * `-32800` this way.
   */
  cancelledReply?: ((id: JsonRpcId) => JsonRpcErrorObject) | null;
  /** Progress notification method; `null` disables progress routing. Default `notifications/progress`. */
  progressMethod?: string | null;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Overrides the peer's default timeout, ms. */
  timeoutMs?: number;
  /** Progress callback; sets `params._meta.progressToken` to the request id. */
  onProgress?: (progress: ProgressInfo) => void;
  /** Restart the timeout whenever progress arrives. Default true. */
  resetTimeoutOnProgress?: boolean;
  /** Overrides the hard total cap, ms. With `timeoutMs`, `Infinity` means no timer at all (a long-lived stream). */
  maxTotalTimeoutMs?: number;
  /** The incoming request this one is sent on behalf of (see `TransportSendOptions`). */
  relatedRequestId?: JsonRpcId;
}

/** Options of {@link JsonRpcPeer.notify}. */
export interface NotifyOptions {
  /** The incoming request this notification belongs to (see `TransportSendOptions`). */
  relatedRequestId?: JsonRpcId;
}

export type RequestHandler = (params: unknown, ctx: RequestContext) => unknown;
export type NotificationHandler = (params: unknown) => void | Promise<void>;

/** Counters for what the peer ignored or refused. */
export interface PeerStats {
  /** Responses to requests that already timed out or were cancelled. */
  lateResponses: number;
  /** Responses whose id was never sent. */
  unknownResponses: number;
  /** Undecodable input (not JSON, bad UTF-8, line too long). */
  parseErrors: number;
  /** Values that were JSON but not JSON-RPC. */
  invalidMessages: number;
}

/** @internal A request in flight (JsonRpcPeer's bookkeeping). */
export interface Pending {
  id: number;
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  timeoutMs: number;
  deadline: number;
  onProgress: ((p: ProgressInfo) => void) | undefined;
  resetOnProgress: boolean;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}
