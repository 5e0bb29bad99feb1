/**
 * How a {@link Conductor} relays a request from one ACP side to the other: the forwarded request
 * gets a new id on the far side, so a `$/cancel_request` for the original id is translated here.
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import { IdTable, type JsonRpcParams } from "../jsonrpc/message.ts";
import type { JsonRpcPeer, PeerOptions, RequestContext } from "../jsonrpc/peer.ts";
import type { Conductor } from "./conductor.ts";
import { ACP_METHODS, AcpErrorCode } from "./types.ts";

/** Forwarded requests that can still be cancelled, by their id on the side they came from. */
export type CancelsById = IdTable<AbortController>;

/** Options of the conductor's peers (editor and agent side); `timeoutMs` caps one forwarded request. */
export function relayPeerOptions(timeoutMs: number): PeerOptions {
  return {
    requestTimeoutMs: timeoutMs,
    maxTotalTimeoutMs: timeoutMs,
    cancelMethod: ACP_METHODS.cancelRequest,
    cancelParams: (id) => ({ requestId: id }),
    // Received cancellations are translated by cancelById (the ids differ on each side).
    cancelledId: () => undefined,
    progressMethod: null,
  };
}

/**
 * Sends a request on to the other side and returns its answer (an error answer is rethrown
 * as the same `RpcError`, so code and data pass through). A `$/cancel_request` for the
 * original id cancels the forwarded one and answers `-32800` at once.
 */
export async function forwardRequest(
  to: JsonRpcPeer,
  method: string,
  params: unknown,
  ctx: RequestContext,
  cancels: CancelsById,
): Promise<unknown> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  cancels.set(ctx.id, controller);
  try {
    return await to.request(method, params as JsonRpcParams | undefined, { signal: controller.signal });
  } catch (err) {
    if (err instanceof BridgeError && err.code === "CANCELLED") {
      throw new RpcError(AcpErrorCode.RequestCancelled, "Request cancelled", { requestId: ctx.id });
    }
    if (err instanceof BridgeError) throw new RpcError(ErrorCode.InternalError, `conductor: ${method} could not be forwarded: ${err.message}`);
    throw err;
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    if (cancels.get(ctx.id) === controller) cancels.delete(ctx.id);
  }
}

/** Handles a `$/cancel_request` from one side: aborts the forwarded request it names, if any. */
export function cancelById(cancels: CancelsById, params: unknown): void {
  const id = (params as { requestId?: unknown } | undefined)?.requestId;
  if (typeof id === "string" || typeof id === "number") cancels.get(id)?.abort(new Error("cancelled with $/cancel_request"));
}
