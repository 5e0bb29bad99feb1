/**
 * Error matchers for tests. `assert.rejects` / `assert.throws` given an object compare each of
 * its keys with the error (a RegExp is matched against a string) and, on failure, print which
 * key differed; a predicate returning `false` prints only "The validation function is expected
 * to return true". So tests match errors with objects, built here where they repeat.
 */
import assert from "node:assert/strict";

/** An object matcher for a `BridgeError` (or a subclass, named by `name`). */
export interface ErrorMatcher {
  name: string;
  code: string | number;
  message?: RegExp | string;
  [key: string]: unknown;
}

/** Matches a `BridgeError` with `code`, and a message matching `message` when given. */
export function bridgeError(code: string, message?: RegExp | string, more: Record<string, unknown> = {}): ErrorMatcher {
  return message === undefined ? { name: "BridgeError", code, ...more } : { name: "BridgeError", code, message, ...more };
}

/**
 * Asserts that a value (an error handed to a callback, a settled promise's reason) is a
 * `BridgeError` with `code` (and a matching message), with the same diff as `assert.rejects`.
 */
export function assertBridgeError(value: unknown, code: string, message?: RegExp | string): void {
  assert.throws(() => {
    throw value;
  }, bridgeError(code, message));
}
