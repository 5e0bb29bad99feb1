/**
 * The {@link ServingContext} of one request on a server with providers or middleware: the
 * handler context, plus who the client is, its era, and asking it for input. Sessions make
 * it in place of a plain `ToolCallContext` once the server serves from providers.
 */
import { BridgeError } from "../jsonrpc/errors.ts";
import type { InputRequest } from "./input-round.ts";
import type { ClientIdentity, ProtocolEra, ServingContext } from "./provider-types.ts";
import { ToolCallContext } from "./server-context.ts";
import type { HandlerContext } from "./server-registry.ts";
import type { ServerSession } from "./server-session.ts";
import type { ElicitRequestParams, ElicitResult } from "./types.ts";
import { isModernVersion } from "./versions.ts";

export class ProviderCallContext extends ToolCallContext implements ServingContext {
  private identity: ClientIdentity | undefined;
  /** Set on a bounded context: it may be stopped (see {@link stopWith}). */
  private stoppable = false;
  /** Why the answer was stopped, once it was. */
  private stopReason: Error | undefined;
  private stopOrCancel: AbortController | undefined;

  /**
   * This request's context for one provider answer, whose `signal` also aborts on
   * {@link stopWith} (the answer's time ran out), so a provider that listens gives up the
   * work nobody waits for.
   */
  bounded(): ProviderCallContext {
    const scoped = new ProviderCallContext(this.session, this.ctx);
    scoped.identity = this.identity;
    scoped.stoppable = true;
    return scoped;
  }

  /** Aborts this bounded context's signal with `reason` (now, or when it is first read). */
  stopWith(reason: Error): void {
    this.stopReason ??= reason;
    this.stopOrCancel?.abort(reason);
  }

  /** True for a context made by {@link bounded}: its `signal` also aborts on {@link stopWith}. */
  get isBounded(): boolean {
    return this.stoppable;
  }

  /**
   * Made only when read, like the request's own. A bounded context's is one controller that
   * the request's cancellation and {@link stopWith} both abort: both live as long as the
   * request, so a plain listener does what `AbortSignal.any` would, at a fraction of its cost
   * on every call (it tracks its sources through weak references). The request is followed
   * through its context's `onAbort` where it has one, so the request makes no controller of
   * its own for it (on Node 20 each one costs as much as the rest of a gateway's call).
   */
  override get signal(): AbortSignal {
    if (!this.stoppable) return super.signal;
    if (this.stopOrCancel === undefined) {
      const both = new AbortController();
      this.stopOrCancel = both;
      if (this.stopReason !== undefined) both.abort(this.stopReason);
      else if (this.ctx.onAbort !== undefined) this.ctx.onAbort((reason) => both.abort(reason));
      else {
        const request = super.signal;
        if (request.aborted) both.abort(request.reason);
        else request.addEventListener("abort", () => both.abort(request.reason), { once: true });
      }
    }
    return this.stopOrCancel.signal;
  }

  /** Read when first asked: most calls never look. */
  get client(): ClientIdentity {
    this.identity ??= identityOf(this.session);
    return this.identity;
  }
  get era(): ProtocolEra {
    return isModernVersion(this.session.protocolVersion) ? "stateless" : "handshake";
  }
  get protocolVersion(): string {
    return this.session.protocolVersion ?? "";
  }
  requestInputs(requests: Record<string, InputRequest>, options?: { signal?: AbortSignal }): Promise<Record<string, unknown>> {
    const signal = options?.signal;
    return this.session.requestInputs(requests, signal === undefined ? { relatedRequestId: this.requestId } : { relatedRequestId: this.requestId, signal });
  }
  elicit(params: ElicitRequestParams, key?: string): Promise<ElicitResult> {
    const options = key === undefined ? { relatedRequestId: this.requestId } : { relatedRequestId: this.requestId, inputKey: key };
    return this.session.elicit(params, options);
  }
}

/** The handler context as the ServingContext it is on a server that serves from providers. */
export function servingContext(handler: HandlerContext): ServingContext {
  if (handler instanceof ProviderCallContext) return handler;
  throw new BridgeError("INVALID_STATE", "a session of a server with providers made a plain handler context (a bug in McpServer)");
}

function identityOf(session: ServerSession): ClientIdentity {
  // Only a transport that verified a token knows who is there (a protected HTTP server): the
  // token's subject, else the OAuth client it was issued to.
  const auth = session.transport.authInfo;
  const principal = auth?.subject ?? (auth?.clientId === undefined ? undefined : `client:${auth.clientId}`);
  const info = session.clientInfo;
  const out: { principal?: string; name?: string; version?: string } = {};
  if (principal !== undefined) out.principal = principal;
  if (typeof info?.name === "string") out.name = info.name;
  if (typeof info?.version === "string") out.version = info.version;
  return out;
}
