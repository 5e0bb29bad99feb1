/** prepareServer and createTransport: secrets resolved and registered, checks run before anything starts. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { withDefaults } from "../../src/config/parse-common.ts";
import { SecretResolvers } from "../../src/config/secrets.ts";
import { createTransport, prepareServer, transportPid } from "../../src/manager/transport-factory.ts";
import { Redactor } from "../../src/security/redact.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { SseClientTransport } from "../../src/transport/sse-client.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";

const resolvers = new SecretResolvers({ env: { API_TOKEN: "tok-1234567890", OTHER: "other-value-99" } });

test("stdio: secrets resolved into the child env, registered for redaction, command checked", async () => {
  const redactor = new Redactor();
  const config = withDefaults({
    name: "s",
    transport: "stdio",
    command: process.execPath,
    env: { API_TOKEN: "secret://env/API_TOKEN", PLAIN: "visible", DB_PASSWORD: "plain-password-1" },
  });
  const prepared = await prepareServer(config, { redactor, secretResolvers: resolvers });
  assert.equal(prepared.command, process.execPath);
  assert.equal(prepared.env?.API_TOKEN, "tok-1234567890");
  assert.equal(prepared.env?.PLAIN, "visible");
  assert.ok(prepared.env?.PATH !== undefined, "the minimal base is there");
  assert.equal(config.env.API_TOKEN, "secret://env/API_TOKEN", "the input config is not modified");
  assert.equal(redactor.redact("tok-1234567890 plain-password-1 visible"), "[REDACTED] [REDACTED] visible");
  const transport = createTransport(prepared);
  assert.ok(transport instanceof StdioClientTransport);
  assert.equal(transportPid(transport), undefined, "nothing spawned yet");
});

test("a failed secret names the reference; an untrusted bare command is refused", async () => {
  const redactor = new Redactor();
  const missing = withDefaults({ name: "s", transport: "stdio", command: process.execPath, env: { K: "secret://env/NOPE" } });
  await assert.rejects(prepareServer(missing, { redactor, secretResolvers: resolvers }), { name: "SecretError", message: /secret:\/\/env\/NOPE/ });
  const bare = withDefaults({ name: "s", transport: "stdio", command: "node" });
  await assert.rejects(prepareServer(bare, { redactor }), { name: "PolicyError", code: "COMMAND_NOT_ALLOWED" });
  const allowed = await prepareServer(bare, { redactor, allowCommands: ["node"] });
  assert.ok(allowed.command?.startsWith("/"));
});

test("http: headers resolved and redacted, URL checked, the right transport per kind", async () => {
  const redactor = new Redactor();
  const config = withDefaults({ name: "h", transport: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer secret://env/OTHER" } });
  const prepared = await prepareServer(config, { redactor, secretResolvers: resolvers });
  assert.equal(prepared.config.headers.Authorization, "Bearer other-value-99");
  assert.equal(prepared.url?.host, "mcp.example.com");
  assert.equal(redactor.redact("Bearer other-value-99"), "[REDACTED]");
  assert.ok(createTransport(prepared) instanceof StreamableHttpClientTransport);
  assert.ok(createTransport({ ...prepared, config: { ...prepared.config, transport: "sse" } }) instanceof SseClientTransport);
  assert.ok(createTransport({ ...prepared, config: { ...prepared.config, transport: "auto" } }) instanceof AutoHttpClientTransport);

  const insecure = withDefaults({ name: "h", transport: "http", url: "http://mcp.example.com/mcp" });
  await assert.rejects(prepareServer(insecure, { redactor }), { name: "PolicyError", code: "INSECURE_URL" });
  assert.ok((await prepareServer(insecure, { redactor, allowInsecureHttp: true })).url);
  const noUrl = withDefaults({ name: "h", transport: "sse" });
  await assert.rejects(prepareServer(noUrl, { redactor }), { name: "PolicyError", code: "INVALID_URL" });
  const hosts = withDefaults({ name: "h", transport: "http", url: "https://evil.example.org/mcp" });
  await assert.rejects(prepareServer(hosts, { redactor, allowedHosts: ["*.example.com"] }), { name: "PolicyError", code: "HOST_NOT_ALLOWED" });
});
