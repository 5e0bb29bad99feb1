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

/** `string`, `number`, `array`, `null`, ...: what a value is, never what it holds. */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/**
 * What `value` is when it is not a non-empty string ("an empty string", or its type, as
 * {@link describeType} says); undefined when it is one. For "must be a non-empty string" errors.
 */
export function notNonEmptyString(value: unknown): string | undefined {
  if (value === "") return "an empty string";
  return typeof value === "string" ? undefined : describeType(value);
}

/** Whether `v` has a callable `then`: a promise, or any value `await` would wait on. */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

/**
 * Copies `source`'s own enumerable string-keyed fields into `target` as data properties and
 * returns `target`: `{ ...target, ...source }` without the spread, for objects built once per
 * message. On Node 20 (V8 11.3) an object that starts as a spread copy and then gets one more
 * property costs about 1 us, 20-50 times this loop; Node 22 and later have no such cost
 * (docs/decisions.md 160). A `__proto__` key is defined, as spread defines it, never set.
 * Keys in `skip` are left out, as rest destructuring leaves out the names it takes.
 */
export function copyFields<T extends object>(target: T, source: object, skip?: ReadonlySet<string>): T {
  const into = target as Record<string, unknown>;
  const from = source as Record<string, unknown>;
  for (const key of Object.keys(from)) {
    if (skip?.has(key) === true) continue;
    if (key === "__proto__") Object.defineProperty(into, key, { value: from[key], enumerable: true, writable: true, configurable: true });
    else into[key] = from[key];
  }
  return target;
}
