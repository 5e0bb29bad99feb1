/**
 * What a secret looks like in a config, without resolving anything: the `secret://` reference
 * syntax and env/header names that look like credentials. Pure (no I/O, no imports), so the
 * parsers can use it; secrets.ts re-exports it for other layers.
 */

/** `secret://<scheme>/<ref>` found in a value, with the text before it. */
export interface SecretReference {
  /** Text before the reference, e.g. `"Bearer "`; empty when the whole value is a reference. */
  prefix: string;
  scheme: string;
  /** Everything after `secret://<scheme>/`, to the end of the value. */
  ref: string;
  /** `secret://<scheme>/<ref>`: safe to show, it names where the secret lives. */
  text: string;
}

const SECRET_PREFIX = "secret://";

/**
 * Finds the reference in a value. A value is either a whole reference
 * (`secret://env/TOKEN`) or text ending in whitespace followed by one
 * (`Bearer secret://env/TOKEN`); the reference always runs to the end of the value.
 */
export function findSecretReference(value: string): SecretReference | undefined {
  let at = value.indexOf(SECRET_PREFIX);
  while (at > 0 && !/\s/.test(value[at - 1]!)) at = value.indexOf(SECRET_PREFIX, at + 1);
  if (at === -1) return undefined;
  const text = value.slice(at);
  const rest = text.slice(SECRET_PREFIX.length);
  const slash = rest.indexOf("/");
  const scheme = slash === -1 ? rest : rest.slice(0, slash);
  const ref = slash === -1 ? "" : rest.slice(slash + 1);
  return { prefix: value.slice(0, at), scheme, ref, text };
}

/** Matched anywhere in the name, after lowercasing and dropping separators. */
const CREDENTIAL_SUBSTRINGS = [
  "token",
  "secret",
  "password",
  "passwd",
  "apikey",
  "auth",
  "bearer",
  "privatekey",
  "accesskey",
  "credential",
  "session",
  "cookie",
];
/** Matched only as a whole word of the name (`OPENAI_KEY`, not `KEYBOARD`). */
const CREDENTIAL_WORDS = new Set(["key", "pwd", "pass", "pat", "jwt"]);

/**
 * True if an env or header name looks like it holds a credential (`GITHUB_TOKEN`,
 * `Authorization`, `x-api-key`, `OPENAI_KEY`, `dbPassword`). Errs towards yes: a false
 * positive costs a warning or a redaction, a false negative a leak.
 */
export function isCredentialKey(name: string): boolean {
  const squashed = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (CREDENTIAL_SUBSTRINGS.some((s) => squashed.includes(s))) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => CREDENTIAL_WORDS.has(w));
}
