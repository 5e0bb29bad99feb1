/**
 * The {@link ServingContext} of one request served from providers: the handler context the
 * session made, plus who the client is, its era, and asking it for input. Built only by a
 * server that has providers or middleware.
 */
import type { JsonRpcId } from "../jsonrpc/message.ts";
import type { InputRequest } from "./input-round.ts";
import type { AuthenticatedTransport, ClientIdentity, ProtocolEra, ServingContext } from "./provider-types.ts";
import type { HandlerContext } from "./server-registry.ts";
import type { ServerSession } from "./server-session.ts";
import type { ElicitRequestParams, ElicitResult, LoggingLevel } from "./types.ts";
import { isModernVersion } from "./versions.ts";

export class ProviderCallContext implements ServingContext {
  private readonly handler: HandlerContext;
  private identity: ClientIdentity | undefined;

  constructor(handler: HandlerContext) {
    this.handler = handler;
  }

  /** Read when first asked: most calls never look. */
  get client(): ClientIdentity {
    this.identity ??= identityOf(this.handler.session);
    return this.identity;
  }
  get era(): ProtocolEra {
    return isModernVersion(this.handler.session.protocolVersion) ? "stateless" : "handshake";
  }
  get protocolVersion(): string {
    return this.handler.session.protocolVersion ?? "";
  }
  get signal(): AbortSignal {
    return this.handler.signal;
  }
  get session(): ServerSession {
    return this.handler.session;
  }
  get requestId(): JsonRpcId {
    return this.handler.requestId;
  }
  get progressToken(): string | number | undefined {
    return this.handler.progressToken;
  }
  sendProgress(progress: number, total?: number, message?: string): Promise<void> {
    return this.handler.sendProgress(progress, total, message);
  }
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void> {
    return this.handler.log(level, data, logger);
  }
  requestInputs(requests: Record<string, InputRequest>): Promise<Record<string, unknown>> {
    return this.handler.session.requestInputs(requests, { relatedRequestId: this.handler.requestId });
  }
  elicit(params: ElicitRequestParams, key?: string): Promise<ElicitResult> {
    const options = key === undefined ? { relatedRequestId: this.handler.requestId } : { relatedRequestId: this.handler.requestId, inputKey: key };
    return this.handler.session.elicit(params, options);
  }
}

/** The context a provider sees: the same object when the session already made one. */
export function servingContext(handler: HandlerContext): ServingContext {
  return handler instanceof ProviderCallContext ? handler : new ProviderCallContext(handler);
}

function identityOf(session: ServerSession): ClientIdentity {
  const principal = (session.transport as AuthenticatedTransport).principal;
  const info = session.clientInfo;
  const out: { principal?: string; name?: string; version?: string } = {};
  if (typeof principal === "string") out.principal = principal;
  if (typeof info?.name === "string") out.name = info.name;
  if (typeof info?.version === "string") out.version = info.version;
  return out;
}
