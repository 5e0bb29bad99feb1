/**
 * How a {@link Conductor} relays a request from one ACP side to the other. The forwarded request
 * gets a new id on the far side; a `$/cancel_request` for the original id aborts the handler's
 * signal (the peer answers it `-32800` at once), and that cancels the forwarded request, which
 * sends the far side a `$/cancel_request` for its own id.
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcParams } from "../jsonrpc/message.ts";
import type { JsonRpcPeer, PeerOptions, RequestContext } from "../jsonrpc/peer.ts";
import type { Conductor } from "./conductor.ts";
import { acpPeerOptions } from "./peer-options.ts";

/** Options of the conductor's peers (editor and agent side); `timeoutMs` caps one forwarded request. */
export function relayPeerOptions(timeoutMs: number): PeerOptions {
  return acpPeerOptions({ requestTimeoutMs: timeoutMs, maxTotalTimeoutMs: timeoutMs });
}

/**
 * Sends a request on to the other side and returns its answer (an error answer is rethrown
 * as the same `RpcError`, so code and data pass through).
 */
export async function forwardRequest(to: JsonRpcPeer, method: string, params: unknown, ctx: RequestContext): Promise<unknown> {
  try {
    return await to.request(method, params as JsonRpcParams | undefined, { signal: ctx.signal });
  } catch (err) {
    // Once ctx.signal aborted (cancelled, or the connection ended) no answer goes out at all.
    if (err instanceof BridgeError) throw new RpcError(ErrorCode.InternalError, `conductor: ${method} could not be forwarded: ${err.message}`);
    throw err;
  }
}
