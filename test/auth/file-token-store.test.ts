import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, test } from "node:test";
import { FileTokenStore } from "../../src/auth/file-token-store.ts";
import { oauthFailure } from "./oauth-matchers.ts";

describe("FileTokenStore", () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "token-store-"));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  test("survives a new instance; the file is 0600 in a 0700 directory it made, with no temporary file left", async () => {
    const path = join(root, "state", "oauth.json");
    const store = new FileTokenStore(path);
    await store.saveClient({ issuer: "https://as.example", clientId: "c", clientSecret: "pw" });
    await store.saveTokens("https://mcp.example/mcp", { accessToken: "at", tokenType: "Bearer", issuer: "https://as.example", expiresAt: 5 });
    const again = new FileTokenStore(path);
    assert.deepEqual(await again.getClient("https://as.example"), { issuer: "https://as.example", clientId: "c", clientSecret: "pw" });
    assert.equal((await again.getTokens("https://mcp.example/mcp"))?.accessToken, "at");
    if (process.platform !== "win32") {
      assert.equal((await stat(path)).mode & 0o777, 0o600);
      assert.equal((await stat(join(root, "state"))).mode & 0o777, 0o700);
    }
    assert.deepEqual(await readdir(join(root, "state")), ["oauth.json"]);
    await again.deleteTokens("https://mcp.example/mcp");
    await again.deleteClient("https://as.example");
    assert.deepEqual([await store.getTokens("https://mcp.example/mcp"), await store.getClient("https://as.example")], [undefined, undefined]);
  });

  test("concurrent saves in one process all land", async () => {
    const store = new FileTokenStore(join(root, "oauth.json"));
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.saveTokens(`https://mcp.example/${i}`, { accessToken: `at${i}`, tokenType: "Bearer", issuer: "x" })));
    const saved = JSON.parse(await readFile(join(root, "oauth.json"), "utf8")) as { tokens: Record<string, unknown> };
    assert.equal(Object.keys(saved.tokens).length, 10);
  });

  test("a private key is never written; a file of another shape is refused", async () => {
    const path = join(root, "oauth.json");
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await new FileTokenStore(path).saveClient({ issuer: "https://as.example", clientId: "svc", privateKey });
    assert.deepEqual(JSON.parse(await readFile(path, "utf8")).clients, { "https://as.example": { issuer: "https://as.example", clientId: "svc" } });
    await writeFile(path, "[1, 2]");
    await assert.rejects(new FileTokenStore(path).getTokens("x"), oauthFailure("TOKEN_STORE_INVALID", /is not a token store file of this version/));
  });
});
