/**
 * The object guards. Node-free, so every layer (the core ones included) shares it.
 */

/**
 * Whether `v` is an object in the JSON sense: not `null`, not an array. Its prototype is not
 * checked: a value parsed from JSON that passes is a plain object, and callers that take
 * objects from code (options, handlers) only read own keys from it.
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Whether `v` has a callable `then`: a promise, or any value `await` would wait on. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}
