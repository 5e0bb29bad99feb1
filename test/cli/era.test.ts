/** `--era auto|legacy|modern`: the CLI's client speaks the era asked for, over HTTP and stdio. */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { echoCommand, run } from "./helpers.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { createEchoServer } from "../../fixtures/servers/echo.ts";

const dual = createEchoServer();
// A server of the handshake era only: it answers server/discover with -32601.
const legacyOnly = createEchoServer({ statelessVersions: [] });
const dualHttp = new StreamableHttpServer({ onSession: (t) => dual.connect(t) });
const legacyHttp = new StreamableHttpServer({ onSession: (t) => legacyOnly.connect(t) });
let dualUrl = "";
let legacyUrl = "";

before(async () => {
  dualUrl = (await dualHttp.listen(0)).url.href;
  legacyUrl = (await legacyHttp.listen(0)).url.href;
});

after(async () => {
  await Promise.all([dualHttp.close(), legacyHttp.close()]);
  await Promise.all([dual.close(), legacyOnly.close()]);
});

async function inspectVersion(argv: string[]): Promise<string> {
  const r = await run(["inspect", "--json", ...argv]);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { protocolVersion: string }).protocolVersion;
}

test("--era picks the protocol era of a dual-era HTTP server; auto (the default) finds the stateless one", async () => {
  assert.equal(await inspectVersion(["--url", dualUrl, "--transport", "http"]), "2026-07-28");
  assert.equal(await inspectVersion(["--url", dualUrl, "--transport", "http", "--era", "auto"]), "2026-07-28");
  assert.equal(await inspectVersion(["--url", dualUrl, "--transport", "http", "--era", "legacy"]), "2025-11-25");
  assert.equal(await inspectVersion(["--url", dualUrl, "--transport", "http", "--era=modern"]), "2026-07-28");
});

test("--era legacy over stdio sends initialize; call works in both pinned eras", async () => {
  assert.equal(await inspectVersion(["--era", "legacy", "--", ...echoCommand]), "2025-11-25");
  for (const era of ["legacy", "modern"]) {
    const r = await run(["call", "add", '{"a":40,"b":2}', "--era", era, "--url", dualUrl, "--transport", "http"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^42$/m);
  }
});

test("--era modern against a server of the handshake era fails as a protocol error (exit 5); auto falls back", async () => {
  const r = await run(["inspect", "--era", "modern", "--url", legacyUrl, "--transport", "http"]);
  assert.equal(r.code, 5, r.err);
  assert.match(r.err, /does not speak the stateless era/);
  assert.equal(await inspectVersion(["--era", "auto", "--url", legacyUrl, "--transport", "http"]), "2025-11-25");
});

test("an unknown --era is a usage error (exit 2) before any server starts", async () => {
  const r = await run(["call", "echo", '{"text":"x"}', "--era", "2026", "--", "/nonexistent/never-spawned"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /--era must be one of auto, legacy, modern; got "2026"/);
  const missing = await run(["inspect", "--era"]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /--era needs a value/);
});

test("--help lists --era and its choices", async () => {
  const r = await run(["--help"]);
  assert.equal(r.code, 0);
  assert.match(r.out, /--era <era> +protocol era: auto/);
  assert.match(r.out, /legacy \(initialize/);
  assert.match(r.out, /modern \(2026-07-28 only/);
});
