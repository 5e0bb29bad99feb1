/**
 * Command-line parsing for `mcp-bridge`: flags before `--`, the server command after it.
 * Small and strict: an unknown flag is an error, never silently ignored.
 */

export interface ParsedArgs {
  /** Positional words before `--` (the subcommand first). */
  positionals: string[];
  /** Flags seen, by name without dashes. Repeatable flags collect every value. */
  flags: Map<string, string[]>;
  /** Everything after `--`: the server command and its arguments. */
  command: string[];
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Parses `argv` (without node and script). `valued` names the flags that take a value
 * (`--flag value` or `--flag=value`); `boolean` the ones that do not.
 */
export function parseArgs(argv: readonly string[], spec: { valued: readonly string[]; boolean: readonly string[] }): ParsedArgs {
  const out: ParsedArgs = { positionals: [], flags: new Map(), command: [] };
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === "--") {
      out.command = argv.slice(i + 1);
      break;
    }
    if (!word.startsWith("--") || word.length === 2) {
      out.positionals.push(word);
      continue;
    }
    const eq = word.indexOf("=");
    const name = word.slice(2, eq === -1 ? undefined : eq);
    let value: string;
    if (spec.boolean.includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      value = "true";
    } else if (spec.valued.includes(name)) {
      if (eq !== -1) value = word.slice(eq + 1);
      else if (i + 1 < argv.length && argv[i + 1] !== "--") value = argv[++i]!;
      else throw new UsageError(`--${name} needs a value`);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
    const list = out.flags.get(name) ?? [];
    list.push(value);
    out.flags.set(name, list);
  }
  return out;
}

/** The last value of a flag, if given. */
export function flag(args: ParsedArgs, name: string): string | undefined {
  const list = args.flags.get(name);
  return list?.[list.length - 1];
}

/** Parses a positive integer flag, or returns the fallback. */
export function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const v = flag(args, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** The values of `--era`: McpClient's `era` option (docs/decisions.md 129). */
const ERAS = ["auto", "legacy", "modern"] as const;

/** `--era auto|legacy|modern`: which protocol era to speak, if given. */
export function eraFlag(args: ParsedArgs): (typeof ERAS)[number] | undefined {
  const era = flag(args, "era");
  if (era === undefined) return undefined;
  if (!(ERAS as readonly string[]).includes(era)) throw new UsageError(`--era must be one of ${ERAS.join(", ")}; got ${JSON.stringify(era)}`);
  return era as (typeof ERAS)[number];
}

/** Refuses positional words beyond the first `count` (the subcommand counts as one). */
export function onlyPositionals(args: ParsedArgs, count: number, usage: string): void {
  const extra = args.positionals.slice(count);
  if (extra.length > 0) throw new UsageError(`unexpected ${JSON.stringify(extra[0])}: ${usage}`);
}

/** Parses a JSON object given on the command line (tool or prompt arguments). */
export function jsonObjectArg(raw: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`${what} are not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** Prompt arguments and completion context are strings in MCP; anything else is refused here. */
export function stringValues(value: Record<string, unknown>, what: string): Record<string, string> {
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new UsageError(`${what}: ${JSON.stringify(key)} must be a string`);
  }
  return value as Record<string, string>;
}
