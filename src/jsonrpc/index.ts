/** The JSON-RPC layer on its own: messages, errors, ndjson framing, the peer. */
export * from "./errors.ts";
export * from "./message.ts";
export * from "./ndjson.ts";
export * from "./peer.ts";
