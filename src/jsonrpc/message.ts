/**
 * JSON-RPC 2.0 wire types and the one function that classifies a received value.
 *
 * Classification looks at the *presence* of members, never their truthiness: `id: 0` and
 * `id: ""` are valid ids; `id: null` on a request is invalid.
 */
import { BridgeError, ErrorCode, errorMessage } from "./errors.ts";
import { isPlainObject } from "../util/object.ts";

/** A request id. Compared exactly: `"1"` and `1` are different ids. */
export type JsonRpcId = string | number;

/** Params are a by-name object or (rarely) a by-position array. */
export type JsonRpcParams = Record<string, unknown> | unknown[];

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: JsonRpcId;
  method: string;
  params?: JsonRpcParams;
}

export interface JsonRpcNotification {
  jsonrpc: "2.0";
  method: string;
  params?: JsonRpcParams;
}

export interface JsonRpcSuccess {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result: unknown;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcErrorResponse {
  jsonrpc: "2.0";
  /** `null` only when the id of the offending message could not be read. */
  id: JsonRpcId | null;
  error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** The result of {@link classifyMessage}. */
export type ClassifiedMessage =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; message: JsonRpcResponse }
  /**
   * Not a valid message. `id` is the readable id of a malformed request, to answer -32600 with
   * (null otherwise). `response` is set when the value is a malformed *response* (no `method`;
   * an `id`, `result` or `error`): such a value is never answered, since an error carrying its
   * id would read as the answer to the other side's own request of that id; `response.id` is
   * its readable id, so the request it answers can fail instead.
   */
  | { kind: "invalid"; id: JsonRpcId | null; reason: string; response?: { id: JsonRpcId | null } };

function isId(v: unknown): v is JsonRpcId {
  return typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
}

/**
 * Classifies one parsed JSON value (not an array: batches are split by the caller).
 *
 * ```ts
 * classifyMessage({ jsonrpc: "2.0", id: 0, method: "ping" }).kind // "request"
 * ```
 */
export function classifyMessage(value: unknown): ClassifiedMessage {
  if (!isPlainObject(value)) return { kind: "invalid", id: null, reason: "message is not an object" };
  const hasId = Object.prototype.hasOwnProperty.call(value, "id");
  const readableId = hasId && isId(value.id) ? value.id : null;
  const hasMethod = Object.prototype.hasOwnProperty.call(value, "method");
  const hasResult = Object.prototype.hasOwnProperty.call(value, "result");
  const hasError = Object.prototype.hasOwnProperty.call(value, "error");
  if (!hasMethod && (hasId || hasResult || hasError)) return classifyResponse(value, hasId, hasResult, hasError, readableId);
  if (value.jsonrpc !== "2.0") {
    return { kind: "invalid", id: readableId, reason: 'jsonrpc must be "2.0"' };
  }
  if (!hasMethod) return { kind: "invalid", id: null, reason: "message has neither method nor exactly one of result/error" };
  if (typeof value.method !== "string") {
    return { kind: "invalid", id: readableId, reason: "method must be a string" };
  }
  const params = value.params;
  if (params !== undefined && !isPlainObject(params) && !Array.isArray(params)) {
    return { kind: "invalid", id: readableId, reason: "params must be an object or an array" };
  }
  if (!hasId) return { kind: "notification", message: value as unknown as JsonRpcNotification };
  if (!isId(value.id)) {
    return { kind: "invalid", id: null, reason: "request id must be a string or a number" };
  }
  return { kind: "request", message: value as unknown as JsonRpcRequest };
}

/** A value without `method` that carries an id, a result or an error: a response, or a malformed one. */
function classifyResponse(
  value: Record<string, unknown>,
  hasId: boolean,
  hasResult: boolean,
  hasError: boolean,
  readableId: JsonRpcId | null,
): ClassifiedMessage {
  const malformed = (reason: string): ClassifiedMessage => ({ kind: "invalid", id: null, reason, response: { id: readableId } });
  if (value.jsonrpc !== "2.0") return malformed('jsonrpc must be "2.0"');
  if (hasResult === hasError) return malformed("message has neither method nor exactly one of result/error");
  if (hasResult) {
    if (!isId(value.id)) return malformed("response id must be a string or a number");
    return { kind: "response", message: value as unknown as JsonRpcSuccess };
  }
  const err = value.error;
  if (!isPlainObject(err) || !Number.isInteger(err.code) || typeof err.message !== "string") {
    return malformed("error must be {code: integer, message: string}");
  }
  // An error response may carry id null (or omit it) when the request id was unreadable.
  if (hasId && value.id !== null && !isId(value.id)) return malformed("response id must be a string, a number or null");
  const normalised: JsonRpcErrorResponse = {
    jsonrpc: "2.0",
    id: hasId ? (value.id as JsonRpcId | null) : null,
    error: err as unknown as JsonRpcErrorObject,
  };
  return { kind: "response", message: normalised };
}

/**
 * The JSON text of a message or batch: what every transport sends. A response always encodes:
 * one whose result cannot be serialised (a BigInt, a cycle, nesting deeper than the stack on
 * Node 20-24, a throwing `toJSON`) is replaced by a -32603 error for the same id, so the requester gets an
 * answer and the process goes on. A request or notification that cannot be serialised gives
 * back (not throws) a `BridgeError INVALID_PARAMS` naming its method, for `send()` to reject
 * with. `JSON.stringify` runs once when the message is fine; only a failure pays for more.
 *
 * ```ts
 * encodeMessage({ jsonrpc: "2.0", id: 1, result: { n: 10n } })
 * // '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the result cannot be serialised as JSON (Do not know how to serialize a BigInt)"}}'
 * ```
 */
export function encodeMessage(message: JsonRpcMessage | JsonRpcMessage[]): string | BridgeError {
  try {
    return JSON.stringify(message);
  } catch (err) {
    if (!Array.isArray(message)) return encodeFailed(message, err);
    const parts: string[] = [];
    for (const m of message) {
      const text = encodeMessage(m);
      if (typeof text !== "string") return text;
      parts.push(text);
    }
    return `[${parts.join(",")}]`;
  }
}

function encodeFailed(message: JsonRpcMessage, err: unknown): string | BridgeError {
  // The first line only: V8 describes a cycle over several lines, naming properties.
  const why = errorMessage(err).split("\n", 1)[0];
  if ("method" in message) {
    const what = "id" in message ? "request" : "notification";
    return new BridgeError("INVALID_PARAMS", `${what} "${String(message.method)}": params cannot be serialised as JSON (${why})`, {
      cause: err,
      details: { method: message.method },
    });
  }
  const id = typeof message.id === "string" || typeof message.id === "number" ? message.id : null;
  const error = { code: ErrorCode.InternalError, message: `Internal error: the result cannot be serialised as JSON (${why})` };
  return JSON.stringify({ jsonrpc: "2.0", id, error });
}

/** True when the response is an error response. */
export function isErrorResponse(r: JsonRpcResponse): r is JsonRpcErrorResponse {
  return Object.prototype.hasOwnProperty.call(r, "error");
}

/**
 * A table keyed by JSON-RPC id, for what is in flight per request (pending requests, running
 * handlers, open HTTP exchanges). Numbers and strings are kept apart, so `"1"` never finds `1`.
 *
 * Plain null-prototype dictionaries rather than a Map, on purpose: with an entry added and
 * removed per request, a long-lived Map rehashes into fresh tables whose obsolete predecessors
 * still point at entries of the day, and under load that promoted request garbage to the old
 * generation (docs/decisions.md 32 has the figures). One entry is kept in two fields instead,
 * and the dictionaries are made only for a second one: a table that holds one entry at a time
 * (a stateless POST's transport and peer, a client calling in sequence) then allocates
 * nothing, where a dictionary given a large integer key allocates a number dictionary
 * (docs/decisions.md 153).
 */
export class IdTable<V> {
  /** The entry kept in fields (`undefined` while that slot is free). */
  private oneId: JsonRpcId | undefined;
  private oneValue: V | undefined;
  private numbers: Record<number, V> | undefined;
  private strings: Record<string, V> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: JsonRpcId): V | undefined {
    if (id === this.oneId) return this.oneValue;
    return typeof id === "number" ? this.numbers?.[id] : typeof id === "string" ? this.strings?.[id] : undefined;
  }

  has(id: JsonRpcId): boolean {
    return this.get(id) !== undefined;
  }

  /** Sets `id` to `value` (which must not be undefined: undefined marks a free slot). */
  set(id: JsonRpcId, value: V): void {
    if (id === this.oneId) {
      this.oneValue = value;
      return;
    }
    const known: Record<string | number, V> | undefined = typeof id === "number" ? this.numbers : this.strings;
    if (known !== undefined && known[id] !== undefined) {
      known[id] = value;
      return;
    }
    this.count++;
    if (this.oneId === undefined) {
      this.oneId = id;
      this.oneValue = value;
    } else if (typeof id === "number") {
      (this.numbers ??= Object.create(null) as Record<number, V>)[id] = value;
    } else {
      (this.strings ??= Object.create(null) as Record<string, V>)[id] = value;
    }
  }

  /** Removes `id`; true if it was there. */
  delete(id: JsonRpcId): boolean {
    if (id === this.oneId) {
      this.oneId = this.oneValue = undefined;
      this.count--;
      return true;
    }
    const table: Record<string | number, V> | undefined = typeof id === "number" ? this.numbers : this.strings;
    if (table === undefined || table[id] === undefined) return false;
    delete table[id];
    this.count--;
    return true;
  }

  values(): V[] {
    if (this.count === 0) return [];
    const all: V[] = this.oneId === undefined ? [] : [this.oneValue as V];
    if (this.numbers !== undefined) all.push(...Object.values(this.numbers));
    if (this.strings !== undefined) all.push(...Object.values(this.strings));
    return all;
  }

  clear(): void {
    this.oneId = this.oneValue = undefined;
    this.numbers = this.strings = undefined;
    this.count = 0;
  }
}
