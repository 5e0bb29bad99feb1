/** Matchers for the OAuth flow's errors, in the style of test/helpers/errors.ts. */
import type { ErrorMatcher } from "../helpers/errors.ts";

/** Matches an `OAuthError` with `reason` and a message matching `message`. */
export function oauthFailure(reason: string, message: RegExp): ErrorMatcher {
  return { name: "OAuthError", code: "AUTH_FAILED", reason, message };
}
