/**
 * The context a tool, resource or prompt handler of a {@link ServerSession} is given.
 */
import type { RequestContext } from "../jsonrpc/peer.ts";
import type { HandlerContext } from "./server-registry.ts";
import type { ServerSession } from "./server-session.ts";
import type { LoggingLevel } from "./types.ts";

/**
 * What a tool, resource or prompt handler sees. `signal` is read through to the request's
 * context only when used, so handlers that never look at it cost no AbortController.
 */
export class ToolCallContext implements HandlerContext {
  readonly session: ServerSession;
  private readonly ctx: RequestContext;

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
  sendProgress(progress: number, total?: number, message?: string): Promise<void> {
    return this.ctx.sendProgress(progress, total, message);
  }
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void> {
    return this.session.log(level, data, logger, { relatedRequestId: this.ctx.id });
  }
}
