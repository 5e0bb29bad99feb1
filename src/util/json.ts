/**
 * JSON helpers for values that came from elsewhere (a server's tool list, a log payload) and
 * may not serialise: a cycle or a BigInt must not throw out of the code that compares or logs.
 */

/** `JSON.stringify(value)`, or "" when it throws or yields nothing (undefined, a function). */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

/**
 * Whether two values serialise to the same JSON text (key order counts). A value that does
 * not serialise is never the same as anything, so a change is never hidden by it.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const x = safeJson(a);
  return x !== "" && x === safeJson(b);
}
