/**
 * Secret references in env and header values, resolved only when a server is spawned or
 * connected (never at parse time, so a parsed config holds no secret).
 *
 * - `secret://env/NAME`: the variable NAME of our own environment.
 * - `secret://file/PATH`: the file's text, one trailing newline stripped. A relative PATH is
 *   relative to the resolver's `baseDir`; an absolute one is written with a double slash,
 *   `secret://file//run/secrets/token`.
 * - `secret://<scheme>/<ref>`: a resolver the user registered, e.g.
 *   `registerSecretResolver("vault", (ref) => vault.read(ref))`.
 *
 * A value may also end in a reference after a space: `"Bearer secret://env/TOKEN"`.
 * Failures throw {@link SecretError}, whose message names the reference and never a value.
 */
import { isAbsolute, resolve as resolvePath } from "node:path";
import { BridgeError, type BridgeErrorOptions } from "../jsonrpc/errors.ts";
import { findSecretReference } from "./credentials.ts";
import type { McpServerConfig } from "./types.ts";

export { findSecretReference, isCredentialKey, type SecretReference } from "./credentials.ts";

/**
 * A secret could not be resolved. `message` names the reference(s), never a value; `details`
 * holds `reference` and, when several failed, `references`.
 *
 * ```ts
 * throw new SecretError("SECRET_UNRESOLVED", "secret://vault/x is sealed", { details: { reference: "secret://vault/x" } });
 * ```
 */
export class SecretError extends BridgeError {
  declare readonly code: "SECRET_UNRESOLVED";
  /** The (first) reference that failed, e.g. `secret://env/GITHUB_TOKEN`. */
  readonly reference: string;
  /** Every reference that failed, in config order (env first, then headers). */
  readonly references: readonly string[];

  constructor(
    code: "SECRET_UNRESOLVED",
    message: string,
    options: Omit<BridgeErrorOptions, "details"> & { details: { reference: string; references?: string[] } },
  ) {
    super(code, message, options);
    this.name = "SecretError";
    this.reference = options.details.reference;
    this.references = options.details.references ?? [this.reference];
  }
}

function unresolved(reference: string, message: string, cause?: unknown): SecretError {
  return new SecretError("SECRET_UNRESOLVED", message, { cause, details: { reference } });
}

/** Turns the part after `secret://<scheme>/` into the secret. May be async. */
export type SecretResolver = (ref: string) => Promise<string> | string;

export interface SecretResolversOptions {
  /** Base of relative `secret://file/` paths. Default: `process.cwd()` at resolution time. */
  baseDir?: string;
  /** Source of `secret://env/` values. Default: `process.env` at resolution time. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Largest secret file read. Default 64 KiB; secrets are small, devices are not. */
  maxFileBytes?: number;
}

const SCHEME = /^[a-z][a-z0-9+.-]*$/;

/**
 * A registry of resolvers by scheme, with `env` and `file` built in. Tests and embedders make
 * their own instance; {@link defaultSecretResolvers} is the one used when none is passed.
 */
export class SecretResolvers {
  private readonly resolvers = new Map<string, SecretResolver>();
  private readonly options: SecretResolversOptions;

  constructor(options: SecretResolversOptions = {}) {
    this.options = options;
    this.resolvers.set("env", (ref) => this.fromEnv(ref));
    this.resolvers.set("file", (ref) => this.fromFile(ref));
  }

  /** Adds (or replaces) the resolver for `secret://<scheme>/...`. */
  register(scheme: string, resolver: SecretResolver): void {
    if (!SCHEME.test(scheme)) throw new TypeError(`invalid secret scheme ${JSON.stringify(scheme)} (expected lowercase letters, digits, + . -)`);
    if (typeof resolver !== "function") throw new TypeError("a secret resolver must be a function");
    this.resolvers.set(scheme, resolver);
  }

  has(scheme: string): boolean {
    return this.resolvers.has(scheme);
  }

  /** Resolves one whole reference such as `secret://env/TOKEN`. */
  async resolve(reference: string): Promise<string> {
    const parsed = findSecretReference(reference);
    const shown = showReference(reference);
    if (parsed === undefined || parsed.prefix !== "") throw unresolved(shown, `${shown} is not a secret:// reference`);
    if (!SCHEME.test(parsed.scheme) || !reference.startsWith(`secret://${parsed.scheme}/`)) {
      throw unresolved(shown, `${shown} is malformed (expected secret://<scheme>/<name>)`);
    }
    const resolver = this.resolvers.get(parsed.scheme);
    if (resolver === undefined) {
      throw unresolved(shown, `${shown}: no resolver registered for ${JSON.stringify(parsed.scheme)}`);
    }
    let value: unknown;
    try {
      value = await resolver(parsed.ref);
    } catch (err) {
      // Our own errors are written to be shown; a foreign error's text is unknown, so it
      // travels only as `cause`.
      if (err instanceof SecretError) throw err;
      throw unresolved(shown, `${shown}: the ${JSON.stringify(parsed.scheme)} resolver failed`, err);
    }
    if (typeof value !== "string") {
      throw unresolved(shown, `${shown}: the resolver returned ${value === null ? "null" : typeof value}, not a string`);
    }
    if (value === "") throw unresolved(shown, `${shown} resolved to an empty value`);
    return value;
  }

  private fromEnv(name: string): string {
    const shown = showReference(`secret://env/${name}`);
    if (name === "" || name.includes("=") || name.includes("\0")) throw unresolved(shown, `${shown} does not name a variable`);
    const value = (this.options.env ?? process.env)[name];
    if (value === undefined) throw unresolved(shown, `${shown} is not set`);
    return value;
  }

  private async fromFile(ref: string): Promise<string> {
    const shown = showReference(`secret://file/${ref}`);
    if (ref === "") throw unresolved(shown, `${shown} names no file`);
    if (ref.includes("\0")) throw unresolved(shown, `${shown}: the path contains a NUL character`);
    const path = isAbsolute(ref) ? ref : resolvePath(this.options.baseDir ?? process.cwd(), ref);
    const where = path === ref ? "" : ` (resolved to ${showReference(path)})`;
    const max = this.options.maxFileBytes ?? 64 * 1024;
    let bytes: Uint8Array;
    try {
      // Loaded here, where a file is read: node:fs/promises brings a dozen of Node's own
      // modules that a CLI start without file secrets should not pay for.
      const { constants: fsConstants, open, stat } = await import("node:fs/promises");
      // stat first and open non-blocking: a FIFO or device must not hang or flood us.
      if (!(await stat(path)).isFile()) throw unresolved(shown, `${shown}${where} is not a regular file`);
      const handle = await open(path, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
      try {
        const buffer = new Uint8Array(max + 1);
        const { bytesRead } = await handle.read(buffer, 0, max + 1, 0);
        if (bytesRead > max) throw unresolved(shown, `${shown}${where} is larger than ${max} bytes`);
        bytes = buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (err instanceof SecretError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? "unknown error";
      throw unresolved(shown, `${shown}${where} cannot be read (${code})`, err);
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw unresolved(shown, `${shown}${where} is not UTF-8 text`);
    }
    return text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
  }
}

/** The registry used when none is passed. */
export const defaultSecretResolvers = new SecretResolvers();

/** Registers a resolver on {@link defaultSecretResolvers}: `secret://<scheme>/<ref>`. */
export function registerSecretResolver(scheme: string, resolver: SecretResolver): void {
  defaultSecretResolvers.register(scheme, resolver);
}

/**
 * Resolves every reference in `config.env` and `config.headers`; call it right before spawn or
 * connect. Returns a copy with the values filled in and the list of resolved secrets, which
 * the caller hands to its redactor. Throws one {@link SecretError} naming every failed
 * reference; the server must then stay unstarted.
 */
export async function resolveSecrets(
  config: McpServerConfig,
  registry: SecretResolvers = defaultSecretResolvers,
): Promise<{ config: McpServerConfig; secrets: string[] }> {
  const entries = [
    ...Object.entries(config.env ?? {}).map(([key, value]) => ({ kind: "env" as const, key, value })),
    ...Object.entries(config.headers ?? {}).map(([key, value]) => ({ kind: "header" as const, key, value })),
  ];
  // Settled in config order (env first, then headers), so the message is stable.
  const results = await Promise.all(entries.map((e) => resolveValue(e.value, e.kind, registry)));

  const failures: SecretError[] = [];
  const secrets = new Set<string>();
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  results.forEach((result, i) => {
    const { kind, key } = entries[i]!;
    if (result instanceof SecretError) {
      failures.push(unresolved(result.reference, `${kind} ${key}: ${result.message}`, result.cause));
      return;
    }
    if (result.secret !== undefined) secrets.add(result.secret);
    (kind === "env" ? env : headers)[key] = result.value;
  });
  if (failures.length > 0) {
    const label = `server ${JSON.stringify(config.name)}`;
    throw new SecretError("SECRET_UNRESOLVED", `${label}: ${failures.map((f) => f.message).join("; ")}`, {
      cause: failures[0]!.cause,
      details: { reference: failures[0]!.reference, references: failures.map((f) => f.reference) },
    });
  }
  const out: McpServerConfig = { ...config };
  if (config.env !== undefined) out.env = env;
  if (config.headers !== undefined) out.headers = headers;
  return { config: out, secrets: [...secrets] };
}

/** One env or header value with its reference (if any) resolved; failures are returned. */
async function resolveValue(
  value: string,
  kind: "env" | "header",
  registry: SecretResolvers,
): Promise<{ value: string; secret?: string } | SecretError> {
  const found = findSecretReference(value);
  if (found === undefined) return { value };
  const shown = showReference(found.text);
  let secret: string;
  try {
    secret = await registry.resolve(found.text);
  } catch (err) {
    return err instanceof SecretError ? err : unresolved(shown, `${shown} could not be resolved`, err);
  }
  const bad = kind === "header" ? /[\r\n\0]/ : /\0/;
  if (bad.test(secret)) {
    const chars = kind === "header" ? "CR, LF or NUL" : "a NUL character";
    return unresolved(shown, `${shown} resolved to a value containing ${chars}`);
  }
  return { value: found.prefix + secret, secret };
}

/** A reference or path as shown in a message: one line, bounded length. */
function showReference(text: string): string {
  const oneLine = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}...` : oneLine;
}
