/**
 * The transport contract lives in jsonrpc/transport.ts, beside the peer that consumes it, so
 * that jsonrpc/ imports nothing from transport/ (docs/decisions.md 89). This re-export
 * keeps the old import path working.
 */
export type { AuthInfo, MessageHeaders, Transport, TransportSendOptions } from "../jsonrpc/transport.ts";
