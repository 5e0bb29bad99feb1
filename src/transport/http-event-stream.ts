/**
 * Reading a `text/event-stream` response for the HTTP client transports, and the delay before
 * reconnecting one that dropped.
 */
import type * as http from "node:http";
import { BridgeError } from "../jsonrpc/errors.ts";
import type { SseEvent, SseParser } from "../jsonrpc/sse.ts";
import type { HttpCall } from "./http-request.ts";

/**
 * Reads an event stream. `onEvents` gets each batch of complete events, in order, and may
 * abort the call. Resolves when the stream ends: with nothing for a clean end, with the error
 * otherwise (the abort reason, `LIMIT_EXCEEDED` from the parser, a dropped connection).
 * An event left incomplete by the end is dropped, as the SSE rules say.
 */
export function readSse(
  call: HttpCall,
  res: http.IncomingMessage,
  parser: SseParser,
  onEvents: (events: SseEvent[]) => void,
): Promise<Error | undefined> {
  return new Promise((resolve) => {
    const decoder = new TextDecoder();
    let done = false;
    const finish = (err: Error | undefined) => {
      if (done) return;
      done = true;
      resolve(err);
    };
    res.on("data", (chunk: Buffer) => {
      if (done) return;
      let events: SseEvent[];
      try {
        events = parser.feed(decoder.decode(chunk, { stream: true }));
      } catch (err) {
        call.abort(err as Error);
        finish(call.abortReason);
        return;
      }
      if (events.length > 0) onEvents(events);
      if (call.abortReason) finish(call.abortReason);
    });
    res.on("end", () => finish(undefined));
    res.on("error", () => undefined); // the 'close' below reports it
    res.on("close", () => {
      finish(call.abortReason ?? new BridgeError("HTTP_ERROR", "the event stream was cut off (connection closed)"));
    });
  });
}

/** Reconnect delay for attempt `n` (1-based): `retry` from the server first, then exponential backoff. */
export function reconnectDelay(n: number, retry: number | undefined, initialMs: number, maxMs: number): number {
  const backoff = Math.min(initialMs * 2 ** Math.max(0, n - 1), maxMs);
  if (retry === undefined) return backoff;
  const asked = Math.min(retry, maxMs);
  return n <= 1 ? asked : Math.max(asked, backoff);
}
