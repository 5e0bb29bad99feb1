/**
 * Redaction of secrets from everything a person or a model reads: log lines, error messages,
 * events, status reports, audit records.
 *
 * A {@link Redactor} knows two kinds of secrets: values it was told about (resolved
 * `secret://` references, via `addSecret`) and values found in a config under credential-like
 * keys (via `addFromConfig`). Each known secret is replaced by `[REDACTED]` wherever it occurs,
 * also in its URL-encoded, form-encoded, JSON-escaped and base64 forms.
 */
import { Buffer } from "node:buffer";
import { findSecretReference, isCredentialKey } from "../config/secrets.ts";
import type { McpServerConfig } from "../config/types.ts";

/** What every secret is replaced with. */
export const REDACTED = "[REDACTED]";

/**
 * Secrets shorter than this are ignored by default: redacting every `a` or `on` would make
 * output unreadable while protecting nothing a guess would not find. Configurable.
 */
const DEFAULT_MIN_SECRET_LENGTH = 4;

/** Nesting depth past which `redactValue` replaces a value wholesale rather than walk it. */
const MAX_DEPTH = 64;

export interface RedactorOptions {
  /** Ignore secrets (and encodings of them) shorter than this. Default 4. */
  minLength?: number;
}

/**
 * ```ts
 * const redactor = new Redactor();
 * redactor.addFromConfig(resolvedConfig);
 * redactor.addSecret(await resolveSecret("secret://env/API_KEY"));
 * log(redactor.redact(message));
 * ```
 */
export class Redactor {
  private readonly minLength: number;
  private readonly secrets = new Set<string>();
  /** Built on first use after a change: one combined pattern, longest secret first. */
  private matchers: { search: RegExp; sticky: RegExp } | undefined;

  constructor(options: RedactorOptions = {}) {
    this.minLength = Math.max(1, options.minLength ?? DEFAULT_MIN_SECRET_LENGTH);
  }

  /** Number of distinct strings (secrets and their encodings) being redacted. */
  get size(): number {
    return this.secrets.size;
  }

  /** Redacts `value` (and its common encodings) from now on. Short values are ignored. */
  addSecret(value: string): void {
    if (typeof value !== "string" || value.length < this.minLength) return;
    const before = this.secrets.size;
    for (const form of encodings(value)) {
      if (form.length >= this.minLength) this.secrets.add(form);
    }
    if (this.secrets.size !== before) this.matchers = undefined;
  }

  /**
   * Adds every value under a credential-like key of a config: `env` values, `headers` values
   * (and, for `Authorization`-style `<scheme> <credential>` values, the credential alone, and
   * the decoded `user:password` of `Basic`), query values of `url`, and the values of
   * credential-like flags in `args` (`--api-key=x`, `--token x`).
   *
   * Pass the config with secrets resolved (`resolveSecrets(config).config`, and add its
   * `secrets` with `addSecret`): a value still holding a `secret://` reference is skipped, as
   * the reference is not itself secret and errors must be able to name it.
   */
  addFromConfig(config: McpServerConfig): void {
    for (const [key, value] of Object.entries(config.env ?? {})) {
      if (isCredentialKey(key)) this.addCredential(value);
    }
    for (const [key, value] of Object.entries(config.headers ?? {})) {
      if (isCredentialKey(key)) this.addCredential(value);
    }
    if (config.url !== undefined) {
      try {
        for (const [key, value] of new URL(config.url).searchParams) {
          if (isCredentialKey(key)) this.addCredential(value);
        }
      } catch {
        // An invalid URL is refused by checkUrl; nothing to learn from it here.
      }
    }
    const args = config.args ?? [];
    for (let i = 0; i < args.length; i++) {
      const flag = /^--?([A-Za-z0-9_.-]+)(?:=([\s\S]*))?$/.exec(args[i] ?? "");
      if (flag === null || !isCredentialKey(flag[1] ?? "")) continue;
      if (flag[2] !== undefined) this.addCredential(flag[2]);
      else if (i + 1 < args.length) this.addCredential(args[i + 1] ?? "");
    }
  }

  /** `text` with every known secret replaced by `[REDACTED]`. */
  redact(text: string): string {
    if (this.secrets.size === 0 || text.length < this.minLength) return text;
    const { search, sticky } = this.compile();
    search.lastIndex = 0;
    let match = search.exec(text);
    if (match === null) return text;
    let out = "";
    let last = 0;
    while (match !== null) {
      const start = match.index;
      let end = start + match[0].length;
      // Overlaps: a secret starting inside this match may run past its end ("abcd" and
      // "cdef" in "abcdef"); extend until no known secret crosses the end.
      for (let p = start + 1; p < end; p++) {
        sticky.lastIndex = p;
        const inner = sticky.exec(text);
        if (inner !== null && p + inner[0].length > end) end = p + inner[0].length;
      }
      out += text.slice(last, start) + REDACTED;
      last = end;
      search.lastIndex = end;
      match = search.exec(text);
    }
    return out + text.slice(last);
  }

  /**
   * A deep copy of `value` with every string redacted (object keys too), and every value under
   * a credential-like key replaced by `[REDACTED]` whatever it holds (booleans and null are
   * kept). Arrays, Maps, Sets, plain objects, errors and class instances (own enumerable
   * properties, same prototype) are copied; Dates, RegExps, binary data and promises are
   * returned as they are. Cycles are preserved; nesting deeper than 64 becomes `[REDACTED]`.
   */
  redactValue<T>(value: T): T {
    return this.walk(value, 0, new Map()) as T;
  }

  /**
   * JSON data a server sent (plain objects, arrays, primitives) with every known secret
   * replaced in every string, keys included. Copy on write: what holds no secret keeps its
   * identity, so a tool's schema stays the very object the server sent unless it carried a
   * secret. A subtree nested deeper than 64 is kept when its JSON holds no secret and becomes
   * `[REDACTED]` when it does (or cannot be serialised). Other objects go to {@link redactValue}.
   */
  redactJson<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    return this.json(value, 0) as T;
  }

  private json(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.redact(value);
    if (typeof value !== "object" || value === null) return value;
    if (depth >= MAX_DEPTH) {
      try {
        const text = JSON.stringify(value);
        return this.redact(text) === text ? value : REDACTED;
      } catch {
        return REDACTED;
      }
    }
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const clean = this.json(item, depth + 1);
        if (clean !== item) copy ??= value.slice(0, i);
        copy?.push(clean);
      }
      return copy ?? value;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype) return this.redactValue(value);
    const entries = Object.entries(value);
    let changed = false;
    for (const entry of entries) {
      const [key, item] = entry;
      entry[0] = this.redact(key);
      entry[1] = this.json(item, depth + 1);
      changed ||= entry[0] !== key || entry[1] !== item;
    }
    // fromEntries defines own properties: a `__proto__` key stays a key.
    return changed ? Object.fromEntries(entries) : value;
  }

  private walk(value: unknown, depth: number, seen: Map<object, unknown>): unknown {
    if (typeof value === "string") return this.redact(value);
    if (typeof value !== "object" || value === null) return value;
    const done = seen.get(value);
    if (done !== undefined) return done;
    if (depth >= MAX_DEPTH) return REDACTED;
    const next = (item: unknown): unknown => this.walk(item, depth + 1, seen);
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      seen.set(value, copy);
      for (const item of value) copy.push(next(item));
      return copy;
    }
    if (value instanceof Map) {
      const copy = new Map<unknown, unknown>();
      seen.set(value, copy);
      for (const [key, item] of value) {
        copy.set(next(key), typeof key === "string" && isCredentialKey(key) && isSensitive(item) ? REDACTED : next(item));
      }
      return copy;
    }
    if (value instanceof Set) {
      const copy = new Set<unknown>();
      seen.set(value, copy);
      for (const item of value) copy.add(next(item));
      return copy;
    }
    // Values without string content worth walking, or that cannot be copied faithfully.
    if (value instanceof Date || value instanceof RegExp || ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof Promise) {
      return value;
    }
    // Plain objects, errors and class instances: own enumerable properties, same prototype.
    const copy = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
    seen.set(value, copy);
    if (value instanceof Error) {
      // message and stack are own but not enumerable on real errors.
      Object.defineProperty(copy, "message", { value: this.redact(value.message), writable: true, configurable: true });
      if (value.stack !== undefined) {
        Object.defineProperty(copy, "stack", { value: this.redact(value.stack), writable: true, configurable: true });
      }
      if (value.cause !== undefined) {
        Object.defineProperty(copy, "cause", { value: next(value.cause), writable: true, configurable: true });
      }
    }
    for (const [key, item] of Object.entries(value)) {
      // Defined, not assigned: a `__proto__` key must not set the copy's prototype.
      Object.defineProperty(copy, this.redact(key), {
        value: isCredentialKey(key) && isSensitive(item) ? REDACTED : next(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  }

  private addCredential(value: string): void {
    // Still a reference (`secret://env/X`, `Bearer secret://env/X`): nothing secret in it yet.
    if (typeof value !== "string" || findSecretReference(value) !== undefined) return;
    this.addSecret(value);
    const scheme = /^([A-Za-z][A-Za-z0-9_-]*)\s+(\S+)\s*$/.exec(value);
    if (scheme === null) return;
    const credential = scheme[2] ?? "";
    this.addSecret(credential);
    if ((scheme[1] ?? "").toLowerCase() === "basic") {
      const decoded = Buffer.from(credential, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon !== -1) {
        this.addSecret(decoded);
        this.addSecret(decoded.slice(colon + 1));
      }
    }
  }

  private compile(): { search: RegExp; sticky: RegExp } {
    if (this.matchers === undefined) {
      // Longest first: at any position the alternation then takes the longest secret there.
      const source = [...this.secrets]
        .sort((a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0))
        .map(escapeRegExp)
        .join("|");
      this.matchers = { search: new RegExp(source, "g"), sticky: new RegExp(source, "y") };
    }
    return this.matchers;
  }
}

/**
 * `url` without credentials, query values or fragment, for messages:
 * `https://user:pw@h/p?token=abc#x` becomes `https://[REDACTED]@h/p?token=[REDACTED]#[REDACTED]`.
 * Query keys stay readable; a bare key (`?abc123`) is itself redacted. Text that is not a URL
 * is returned with anything that looks like userinfo, query or fragment cut.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url.replace(/\/\/[^/?#]*@/, `//${REDACTED}@`).replace(/[?#][\s\S]*$/, `?${REDACTED}`);
  }
  // Opaque and file URLs (mailto:, data:, file:) have no host; all of the rest may be secret.
  if (parsed.host === "") return `${parsed.protocol}${REDACTED}`;
  const userinfo = parsed.username !== "" || parsed.password !== "" ? `${REDACTED}@` : "";
  let query = "";
  if (parsed.search !== "") {
    const parts = parsed.search
      .slice(1)
      .split("&")
      .map((pair) => {
        const eq = pair.indexOf("=");
        if (eq === -1) return pair === "" ? "" : REDACTED;
        return eq === pair.length - 1 ? pair : `${pair.slice(0, eq)}=${REDACTED}`;
      });
    query = `?${parts.join("&")}`;
  }
  const hash = parsed.hash !== "" ? `#${REDACTED}` : "";
  return `${parsed.protocol}//${userinfo}${parsed.host}${parsed.pathname}${query}${hash}`;
}

/** The forms a secret commonly takes in text we did not produce ourselves. */
function encodings(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const bytes = Buffer.from(value, "utf8");
  return [
    value,
    encodeURIComponent(value),
    new URLSearchParams([["", value]]).toString().slice(1),
    json,
    // A JSON string inside a JSON string (a logged request body).
    JSON.stringify(json).slice(1, -1),
    bytes.toString("base64"),
    bytes.toString("base64").replace(/=+$/, ""),
    bytes.toString("base64url"),
  ];
}

function isSensitive(value: unknown): boolean {
  return value !== null && value !== undefined && typeof value !== "boolean";
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}
