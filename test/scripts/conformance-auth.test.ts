/**
 * The conformance client's auth scenarios (fixtures/clients/conformance-auth.ts) as the suite
 * runs them: a real child process against a protected echo server and the loopback
 * authorization server fixture, completing the consent headlessly.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { eachProtectedServer } from "../auth/auth-server-hooks.ts";
import { contextCredentials } from "../../fixtures/clients/conformance-auth.ts";
import { nodeModuleCommand } from "../../src/util/node-command.ts";
import { ROOT } from "../../scripts/conformance-setup.ts";

const FIXTURE = join(ROOT, "fixtures", "clients", "conformance.ts");

const servers = eachProtectedServer();

/** Runs the fixture as the suite does; a child still running after 60 s is killed by its pid. */
function runFixture(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const { command, args } = nodeModuleCommand(FIXTURE, [servers.rs.url]);
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
    const guard = setTimeout(() => child.pid !== undefined && process.kill(child.pid, "SIGKILL"), 60_000);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stderr });
    });
  });
}

test("auth/metadata-default: discovery, registration, a headless consent, and the tools with the token", async () => {
  const r = await runFixture({ MCP_CONFORMANCE_SCENARIO: "auth/metadata-default" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(servers.as.requestsTo("/register").length, 1);
  assert.equal(servers.as.requestsTo("/authorize").length, 1);
  assert.equal(servers.rs.seen[0], undefined, "the first request goes without a token");
  assert.ok(servers.rs.seen.slice(1).every((h) => h !== undefined && servers.as.accessTokens.has(h.slice("Bearer ".length))));
});

test("auth/client-credentials-basic: the context's credentials, no user, no registration", async () => {
  servers.as.clients.set("svc-client", { secret: "svc-secret", redirectUris: [] });
  const context = JSON.stringify({ name: "auth/client-credentials-basic", client_id: "svc-client", client_secret: "svc-secret" });
  const r = await runFixture({ MCP_CONFORMANCE_SCENARIO: "auth/client-credentials-basic", MCP_CONFORMANCE_CONTEXT: context });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([servers.as.requestsTo("/register").length, servers.as.requestsTo("/authorize").length], [0, 0]);
  assert.equal(new URLSearchParams(servers.as.requestsTo("/token")[0]!.body).get("grant_type"), "client_credentials");
  assert.match(String(servers.as.requestsTo("/token")[0]!.headers.authorization), /^Basic /);
});

test("the context's credentials serve whichever issuer the scenario's server names, and nothing without a client_id", () => {
  const creds = contextCredentials({ client_id: "c", client_secret: "s" })!;
  assert.deepEqual(creds["https://servers.as.example"], { clientId: "c", clientSecret: "s" });
  assert.equal(contextCredentials({ name: "auth/dpop" }), undefined);
});
