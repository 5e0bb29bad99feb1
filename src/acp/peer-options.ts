/**
 * How every ACP connection here (the agent side, and both sides of the conductor) sets up its
 * `JsonRpcPeer`: cancellation is `$/cancel_request` with `{requestId}` both ways, and a
 * request the other side cancelled is answered `-32800` at once (docs/decisions.md 28), where
 * MCP answers nothing. ACP has no progress notifications.
 */
import type { JsonRpcErrorObject, JsonRpcId } from "../jsonrpc/message.ts";
import type { PeerOptions } from "../jsonrpc/peer-types.ts";
import { ACP_METHODS, AcpErrorCode } from "./types.ts";

/** ACP's peer options, added to `extra` (timeouts, limits). */
export function acpPeerOptions(extra: PeerOptions): PeerOptions {
  return {
    ...extra,
    cancelMethod: ACP_METHODS.cancelRequest,
    cancelParams: (id) => ({ requestId: id }),
    cancelledReply: requestCancelled,
    progressMethod: null,
  };
}

/** The answer to a request cancelled with `$/cancel_request`; `data.requestId` names it. */
function requestCancelled(requestId: JsonRpcId): JsonRpcErrorObject {
  return { code: AcpErrorCode.RequestCancelled, message: "Request cancelled", data: { requestId } };
}
