/**
 * The CLI against an OAuth-protected server, as a person uses it: real `mcp-bridge` processes,
 * the loopback authorization server fixture and a protected echo server on 127.0.0.1. The
 * browser step is a plain HTTP GET of the URL the CLI prints (the fixture consents at once and
 * redirects to the CLI's loopback listener). Tokens land in a private config directory.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { AUTHORIZE_PROMPT } from "../../src/cli/auth-flow.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { eachProtectedServer } from "../auth/auth-server-hooks.ts";
import { ROOT } from "../e2e/helpers.ts";

let configHome: string;
const children = new Set<number>();

before(() => {
  configHome = mkdtempSync(join(tmpdir(), "mcp-bridge-oauth-cli-"));
});
after(() => {
  for (const pid of children) process.kill(pid, "SIGKILL");
  rmSync(configHome, { recursive: true, force: true });
});
const servers = eachProtectedServer();

const storeFile = () => join(configHome, "mcp-bridge", "oauth", "tokens.json");

interface CliResult {
  code: number | null;
  out: string;
  err: string;
  /** The authorization URLs the CLI printed. */
  prompted: string[];
}

/**
 * Runs the CLI as a child process with its config directory in `configHome`. Whenever it
 * prints an authorization URL, `consent` plays the browser (default: a GET that follows the
 * redirects). A child still running after 60 s is killed by its pid.
 */
function cli(argv: string[], consent: (url: string) => Promise<void> = browse): Promise<CliResult> {
  const { command, args } = nodeModuleCommand(join(ROOT, "src", "cli", "main.ts"), argv);
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, XDG_CONFIG_HOME: configHome }, stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid !== undefined) children.add(child.pid);
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const result: CliResult = { code: null, out: "", err: "", prompted: [] };
  child.stdout.on("data", (c: Buffer) => (result.out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => {
    result.err += c.toString("utf8");
    const m = new RegExp(`${AUTHORIZE_PROMPT}\\n  (\\S+)\\n`).exec(result.err.slice(result.err.lastIndexOf(AUTHORIZE_PROMPT)));
    if (m !== null && !result.prompted.includes(m[1]!)) {
      result.prompted.push(m[1]!);
      void consent(m[1]!);
    }
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(guard);
      if (child.pid !== undefined) children.delete(child.pid);
      resolve({ ...result, code });
    });
  });
}

/** The user's browser: follows the authorization URL, and the redirect to the CLI's listener. */
async function browse(url: string): Promise<void> {
  const res = await fetch(url);
  await res.text();
}

/** The tokens in the store file (the test may read them; the CLI never prints them). */
function storedTokens(): { accessToken: string; refreshToken?: string; expiresAt?: number } {
  const doc = JSON.parse(readFileSync(storeFile(), "utf8")) as { tokens: Record<string, { accessToken: string; refreshToken?: string; expiresAt?: number }> };
  return doc.tokens[servers.rs.url]!;
}

test("inspect runs the flow once, a later call reuses the tokens, an expired token is refreshed; status and logout", async () => {
  const first = await cli(["inspect", "--json", "--url", servers.rs.url, "--transport", "http"]);
  assert.equal(first.code, 0, first.err);
  assert.equal(first.prompted.length, 1, "one authorization URL printed");
  assert.match(first.err, /waiting for the authorization: \d+:\d\d left/);
  assert.ok((JSON.parse(first.out) as { tools: { name: string }[] }).tools.some((t) => t.name === "echo"));
  assert.equal(new URL(first.prompted[0]!).searchParams.get("redirect_uri")?.startsWith("http://127.0.0.1:"), true);
  assert.equal(statSync(storeFile()).mode & 0o777, 0o600);
  assert.equal(statSync(join(configHome, "mcp-bridge", "oauth")).mode & 0o777, 0o700);
  const { accessToken, refreshToken } = storedTokens();
  for (const text of [first.out, first.err]) assert.ok(!text.includes(accessToken) && !text.includes(refreshToken!), "no token printed");

  const again = await cli(["call", "echo", '{"text":"hi"}', "--url", servers.rs.url, "--transport", "http"]);
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /^hi$/m);
  assert.deepEqual([again.prompted.length, servers.as.requestsTo("/authorize").length], [0, 1], "the stored token was reused");

  // The token is near its end: the next run refreshes it without asking anyone.
  const doc = JSON.parse(readFileSync(storeFile(), "utf8")) as { tokens: Record<string, { expiresAt?: number }> };
  doc.tokens[servers.rs.url]!.expiresAt = Date.now() - 1000;
  writeFileSync(storeFile(), JSON.stringify(doc), { mode: 0o600 });
  const refreshed = await cli(["call", "echo", '{"text":"again"}', "--url", servers.rs.url, "--transport", "http"]);
  assert.equal(refreshed.code, 0, refreshed.err);
  assert.equal(refreshed.prompted.length, 0);
  const grants = servers.as.requestsTo("/token").map((r) => new URLSearchParams(r.body).get("grant_type"));
  assert.deepEqual(grants, ["authorization_code", "refresh_token"]);

  const status = await cli(["auth", "status", servers.rs.url, "--json"]);
  assert.equal(status.code, 0, status.err);
  const shown = JSON.parse(status.out) as Record<string, unknown>;
  assert.deepEqual([shown.stored, shown.issuer, shown.refreshable, shown.registered], [true, servers.as.issuer, true, true]);
  const now = storedTokens();
  assert.ok(!status.out.includes(now.accessToken) && !status.out.includes(now.refreshToken!), "status never shows a token, not even in --json");

  const logout = await cli(["auth", "logout", servers.rs.url]);
  assert.equal(logout.code, 0, logout.err);
  assert.match(logout.out, /forgot the tokens of/);
  const gone = await cli(["auth", "status", servers.rs.url]);
  assert.match(gone.out, /no tokens stored/);
});

test("a redirect carrying an error fails with a typed error, exit 3, and the listener is gone", async () => {
  servers.as.route("/authorize", (req) => {
    const back = new URL(req.query.get("redirect_uri")!);
    back.searchParams.set("error", "access_denied");
    back.searchParams.set("state", req.query.get("state") ?? "");
    back.searchParams.set("iss", servers.as.issuer);
    return { status: 302, headers: { location: back.href } };
  });
  let redirectUri = "";
  const r = await cli(["inspect", "--url", servers.rs.url, "--transport", "http"], async (url) => {
    redirectUri = new URL(url).searchParams.get("redirect_uri") ?? "";
    await browse(url);
  });
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /access_denied/);
  assert.equal(servers.as.requestsTo("/token").length, 0, "no code was redeemed");
  await assert.rejects(fetch(redirectUri), "the one-shot listener is closed");
});

test("a static Authorization header is used as given: no flow, the 401 is reported", async () => {
  const r = await cli(["inspect", "--url", servers.rs.url, "--transport", "http", "--header", "Authorization: Bearer hand-made-token"]);
  assert.equal(r.code, 3);
  assert.equal(r.prompted.length, 0);
  assert.equal(servers.as.requests.length, 0, "the authorization server was never asked");
  assert.match(r.err, /HTTP 401/);
});
