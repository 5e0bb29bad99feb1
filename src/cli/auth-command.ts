/**
 * `mcp-bridge auth status <url>` and `mcp-bridge auth logout <url>`: what the CLI keeps for a
 * remote server in its token file (see auth-flow.ts), and forgetting it. Tokens are never
 * printed, not even with `--json`: only whether they are there, what they are for and when
 * they expire.
 */
import { FileTokenStore } from "../auth/file-token-store.ts";
import { showUrl } from "../auth/oauth-error.ts";
import { onlyPositionals, type ParsedArgs, UsageError } from "./args.ts";
import { tokenStorePath } from "./auth-flow.ts";
import type { CliIo } from "./io.ts";

const SYNOPSIS = "mcp-bridge auth status|logout <url>";

/** What `auth status` shows of stored tokens: never a token itself. */
export interface StoredAuthStatus {
  server: string;
  store: string;
  stored: boolean;
  issuer?: string;
  resource?: string;
  scope?: string;
  /** ISO 8601, when the authorization server said. */
  expiresAt?: string;
  refreshable?: boolean;
  /** Whether a client registration with that issuer is kept too. */
  registered?: boolean;
}

export async function runAuth(args: ParsedArgs, io: CliIo): Promise<number> {
  const [, action, url] = args.positionals;
  if ((action !== "status" && action !== "logout") || url === undefined) throw new UsageError(`auth needs status or logout and a server URL: ${SYNOPSIS}`);
  onlyPositionals(args, 3, SYNOPSIS);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`auth needs an http(s) server URL, got ${parsed.protocol}`);
  // The key OAuthProvider stores under: origin and path (a query may hold a secret).
  const server = showUrl(parsed);
  const path = tokenStorePath();
  const store = new FileTokenStore(path);
  const tokens = await store.getTokens(server);
  if (action === "logout") {
    if (tokens !== undefined) await store.deleteTokens(server);
    const text = tokens === undefined ? `nothing stored for ${server}` : `forgot the tokens of ${server} (the client registration with ${tokens.issuer} is kept)`;
    io.out(args.flags.has("json") ? JSON.stringify({ server, store: path, removed: tokens !== undefined }) : text);
    return 0;
  }
  const status: StoredAuthStatus = { server, store: path, stored: tokens !== undefined };
  if (tokens !== undefined) {
    status.issuer = tokens.issuer;
    if (tokens.resource !== undefined) status.resource = tokens.resource;
    if (tokens.scope !== undefined || tokens.requestedScope !== undefined) status.scope = tokens.scope ?? tokens.requestedScope;
    if (tokens.expiresAt !== undefined) status.expiresAt = new Date(tokens.expiresAt).toISOString();
    status.refreshable = tokens.refreshToken !== undefined;
    status.registered = (await store.getClient(tokens.issuer)) !== undefined;
  }
  io.out(args.flags.has("json") ? JSON.stringify(status, null, 2) : describe(status));
  return 0;
}

function describe(s: StoredAuthStatus): string {
  if (!s.stored) return `${s.server}: no tokens stored (in ${s.store}); the next command that reaches it authorizes when it asks`;
  const lines = [`${s.server}: authorized by ${s.issuer}`];
  if (s.scope !== undefined) lines.push(`  scope:      ${s.scope}`);
  if (s.resource !== undefined) lines.push(`  resource:   ${s.resource}`);
  lines.push(`  expires:    ${s.expiresAt ?? "not said"}`);
  lines.push(`  refresh:    ${s.refreshable === true ? "yes (renewed without asking you)" : "no"}`);
  lines.push(`  store:      ${s.store}`);
  return lines.join("\n");
}
