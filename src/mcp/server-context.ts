/**
 * What the handlers of a {@link ServerSession} are given: their context, the options of a
 * request to the client, and the check of the client's answer.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { RequestContext, RequestOptions } from "../jsonrpc/peer.ts";
import { isPlainObject } from "../util/object.ts";
import type { HandlerContext } from "./server-registry.ts";
import type { ServerSession } from "./server-session.ts";
import type { AuthInfo } from "../jsonrpc/transport.ts";
import type { LoggingLevel } from "./types.ts";

/** Options of a request to the client; `inputKey` names it in the stateless era's `inputRequests`. */
export interface InputOptions extends RequestOptions {
  inputKey?: string;
}

/** Refuses a client answer that lacks what callers will read from it. */
export function checked<T>(value: T, method: string, ok: (v: Record<string, unknown>) => boolean): T {
  if (isPlainObject(value) && ok(value)) return value;
  throw new BridgeError("INVALID_RESULT", `${method}: the client sent a malformed result`, { details: { method } });
}

/**
 * What a tool, resource or prompt handler sees. `signal` is read through to the request's
 * context only when used, so handlers that never look at it cost no AbortController.
 */
export class ToolCallContext implements HandlerContext {
  readonly session: ServerSession;
  /** The peer's context of the request (a subclass may make another context of the same request). */
  protected readonly ctx: RequestContext;

  constructor(session: ServerSession, ctx: RequestContext) {
    this.session = session;
    this.ctx = ctx;
  }

  get signal(): AbortSignal {
    return this.ctx.signal;
  }
  get requestId(): RequestContext["id"] {
    return this.ctx.id;
  }
  get progressToken(): string | number | undefined {
    return this.ctx.progressToken;
  }
  get auth(): AuthInfo | undefined {
    return this.session.transport.authInfo;
  }
  sendProgress(progress: number, total?: number, message?: string): Promise<void> {
    return this.ctx.sendProgress(progress, total, message);
  }
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void> {
    return this.session.log(level, data, logger, { relatedRequestId: this.ctx.id });
  }
}
