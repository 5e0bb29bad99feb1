/**
 * What a Streamable HTTP POST body holds, checked before it reaches a session: its request
 * ids, whether it is an `initialize`, or why it is not acceptable JSON-RPC.
 */
import { classifyMessage, type JsonRpcId } from "../jsonrpc/message.ts";

/** What a POST body holds, once checked. */
export interface BodyShape {
  ids: JsonRpcId[];
  initialize: boolean;
  /** Set when the body is not acceptable JSON-RPC: answer 400 with this. */
  invalid?: { id: JsonRpcId | null; message: string };
}

/** The id of a body holding exactly one request, so that an error about it can echo it. */
export function onlyId(shape: BodyShape): JsonRpcId | null {
  return shape.ids.length === 1 ? shape.ids[0]! : null;
}

/** Checks the body's JSON-RPC shape and collects its request ids. */
export function inspect(value: unknown): BodyShape {
  const ids: JsonRpcId[] = [];
  if (!Array.isArray(value)) {
    const c = classifyMessage(value);
    if (c.kind === "invalid") return { ids, initialize: false, invalid: { id: c.id, message: c.reason } };
    if (c.kind !== "request") return { ids, initialize: false };
    ids.push(c.message.id);
    return { ids, initialize: c.message.method === "initialize" };
  }
  if (value.length === 0) return { ids, initialize: false, invalid: { id: null, message: "empty batch" } };
  for (const item of value) {
    const c = classifyMessage(item);
    if (c.kind === "invalid") return { ids, initialize: false, invalid: { id: null, message: `batch item: ${c.reason}` } };
    if (c.kind !== "request") continue;
    if (c.message.method === "initialize") return { ids, initialize: false, invalid: { id: null, message: "initialize must not be part of a batch" } };
    if (ids.includes(c.message.id)) return { ids, initialize: false, invalid: { id: null, message: `duplicate id ${JSON.stringify(c.message.id)} in batch` } };
    ids.push(c.message.id);
  }
  return { ids, initialize: false };
}
