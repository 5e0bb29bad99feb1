import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  defaultSecretResolvers,
  findSecretReference,
  isCredentialKey,
  registerSecretResolver,
  resolveSecrets,
  SecretError,
  SecretResolvers,
} from "../../src/config/secrets.ts";
import { findPlaintextCredentials } from "../../src/config/parse-common.ts";
import type { McpServerConfig } from "../../src/config/types.ts";

const GH = "ghp_resolved_GH_SECRET_111";
const VAULT = "vault-resolved-SECRET-222";
const FILE_SECRET = "file-resolved-SECRET-333";
const LEAKY = "leaky-resolver-SECRET-444";

let dir = "";
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcp-secrets-"));
  await mkdir(join(dir, "sub"));
  await writeFile(join(dir, "token"), `${FILE_SECRET}\n`);
  await writeFile(join(dir, "two-newlines"), "abc\n\n");
  await writeFile(join(dir, "crlf"), "abc\r\n");
  await writeFile(join(dir, "empty"), "");
  await writeFile(join(dir, "big"), "x".repeat(100));
  await writeFile(join(dir, "latin1"), new Uint8Array([0x61, 0xff, 0x62]));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The error `fn` rejects with, asserted to be a SecretError. */
async function secretError(fn: () => Promise<unknown>): Promise<SecretError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof SecretError, `expected SecretError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected a rejection");
}

describe("SecretResolvers: built-in providers", () => {
  test("secret://env/NAME reads the given environment at resolution time", async () => {
    const env: Record<string, string | undefined> = {};
    const resolvers = new SecretResolvers({ env });
    env.GITHUB_TOKEN = GH;
    assert.equal(await resolvers.resolve("secret://env/GITHUB_TOKEN"), GH);
  });

  test("an unset variable names the reference", async () => {
    const resolvers = new SecretResolvers({ env: {} });
    const err = await secretError(() => resolvers.resolve("secret://env/GITHUB_TOKEN"));
    assert.equal(err.message, "secret://env/GITHUB_TOKEN is not set");
    assert.equal(err.reference, "secret://env/GITHUB_TOKEN");
    assert.equal(err.code, "SECRET_UNRESOLVED");
  });

  test("secret://file/PATH: relative to baseDir, absolute with a double slash, one newline stripped", async () => {
    const resolvers = new SecretResolvers({ baseDir: dir });
    assert.equal(await resolvers.resolve("secret://file/token"), FILE_SECRET);
    assert.equal(await resolvers.resolve(`secret://file/${join(dir, "token")}`), FILE_SECRET);
    assert.ok(join(dir, "token").startsWith("/") || process.platform === "win32");
    assert.equal(await resolvers.resolve("secret://file/two-newlines"), "abc\n");
    assert.equal(await resolvers.resolve("secret://file/crlf"), "abc");
    assert.equal(await resolvers.resolve("secret://file/sub/../token"), FILE_SECRET);
  });

  test("file failures name the reference and never the content", async () => {
    const resolvers = new SecretResolvers({ baseDir: dir, maxFileBytes: 50 });
    const cases: [string, RegExp][] = [
      ["secret://file/missing", /^secret:\/\/file\/missing \(resolved to .*missing\) cannot be read \(ENOENT\)$/],
      ["secret://file/sub", /is not a regular file/],
      ["secret://file/empty", /^secret:\/\/file\/empty resolved to an empty value$/],
      ["secret://file/big", /is larger than 50 bytes/],
      ["secret://file/latin1", /is not UTF-8 text/],
      ["secret://file/tok\0en", /^secret:\/\/file\/tok\\u0000en: the path contains a NUL character$/],
      ["secret://file/", /names no file/],
    ];
    for (const [ref, pattern] of cases) {
      const err = await secretError(() => resolvers.resolve(ref));
      assert.match(err.message, pattern, ref);
      assert.ok(!err.message.includes("xxxx"));
    }
  });

  test("malformed references and unknown schemes", async () => {
    const resolvers = new SecretResolvers();
    assert.match((await secretError(() => resolvers.resolve("secret://vault/a"))).message, /no resolver registered for "vault"/);
    assert.match((await secretError(() => resolvers.resolve("secret://ENV/A"))).message, /is malformed/);
    assert.match((await secretError(() => resolvers.resolve("secret://env"))).message, /is malformed/);
    assert.match((await secretError(() => resolvers.resolve("plain"))).message, /is not a secret:\/\/ reference/);
  });
});

describe("SecretResolvers: user providers", () => {
  test("a registered scheme gets the part after secret://<scheme>/, sync or async", async () => {
    const resolvers = new SecretResolvers();
    const seen: string[] = [];
    resolvers.register("vault", async (ref) => {
      seen.push(ref);
      return VAULT;
    });
    resolvers.register("const", () => "c");
    assert.equal(await resolvers.resolve("secret://vault/kv/gh#token"), VAULT);
    assert.equal(await resolvers.resolve("secret://const/x"), "c");
    assert.deepEqual(seen, ["kv/gh#token"]);
    assert.ok(resolvers.has("vault") && !new SecretResolvers().has("vault"));
  });

  test("a failing provider: its own text stays in cause, out of the message", async () => {
    const resolvers = new SecretResolvers();
    resolvers.register("leaky", () => {
      throw new Error(`backend said: ${LEAKY}`);
    });
    resolvers.register("typed", () => {
      throw new SecretError("SECRET_UNRESOLVED", "secret://typed/x is sealed", { details: { reference: "secret://typed/x" } });
    });
    resolvers.register("num", () => 42 as unknown as string);
    const leaky = await secretError(() => resolvers.resolve("secret://leaky/a"));
    assert.equal(leaky.message, 'secret://leaky/a: the "leaky" resolver failed');
    assert.ok(leaky.cause instanceof Error);
    assert.equal((await secretError(() => resolvers.resolve("secret://typed/x"))).message, "secret://typed/x is sealed");
    assert.match((await secretError(() => resolvers.resolve("secret://num/x"))).message, /returned number, not a string/);
  });

  test("invalid schemes and non-functions are refused at registration", () => {
    const resolvers = new SecretResolvers();
    assert.throws(() => resolvers.register("Vault", () => ""), TypeError);
    assert.throws(() => resolvers.register("a/b", () => ""), TypeError);
    assert.throws(() => resolvers.register("ok", "nope" as unknown as () => string), TypeError);
  });

  test("registerSecretResolver adds to the default registry", async () => {
    registerSecretResolver("test-default-reg", (ref) => `v:${ref}`);
    assert.equal(await defaultSecretResolvers.resolve("secret://test-default-reg/q"), "v:q");
  });
});

describe("resolveSecrets", () => {
  const config: McpServerConfig = {
    name: "gh",
    transport: "stdio",
    command: "/bin/gh",
    env: { GITHUB_TOKEN: "secret://env/GITHUB_TOKEN", LOG_LEVEL: "debug", FROM_FILE: "secret://file/token" },
    headers: { Authorization: "Bearer secret://vault/gh", "X-Plain": "plain" },
  };

  test("resolves env and headers, keeps prefixes, returns the secrets, leaves the input alone", async () => {
    const resolvers = new SecretResolvers({ env: { GITHUB_TOKEN: GH }, baseDir: dir });
    resolvers.register("vault", () => VAULT);
    const before = structuredClone(config);
    const { config: resolved, secrets } = await resolveSecrets(config, resolvers);
    assert.deepEqual(resolved.env, { GITHUB_TOKEN: GH, LOG_LEVEL: "debug", FROM_FILE: FILE_SECRET });
    assert.deepEqual(resolved.headers, { Authorization: `Bearer ${VAULT}`, "X-Plain": "plain" });
    assert.deepEqual(secrets.sort(), [FILE_SECRET, GH, VAULT].sort());
    assert.deepEqual(config, before);
    assert.equal(resolved.command, "/bin/gh");
  });

  test("every failure is named by key and reference; no resolved value in the error", async () => {
    const resolvers = new SecretResolvers({ env: {}, baseDir: dir });
    resolvers.register("vault", () => {
      throw new Error(LEAKY);
    });
    const err = await secretError(() => resolveSecrets(config, resolvers));
    assert.equal(
      err.message,
      'server "gh": env GITHUB_TOKEN: secret://env/GITHUB_TOKEN is not set; header Authorization: secret://vault/gh: the "vault" resolver failed',
    );
    assert.equal(err.reference, "secret://env/GITHUB_TOKEN");
    assert.deepEqual(err.references, ["secret://env/GITHUB_TOKEN", "secret://vault/gh"]);
    for (const s of [FILE_SECRET, LEAKY, GH]) assert.ok(!err.message.includes(s));
  });

  test("a resolved header value with CR/LF is refused without showing it", async () => {
    const resolvers = new SecretResolvers();
    resolvers.register("bad", () => `${VAULT}\r\nX-Injected: 1`);
    const err = await secretError(() =>
      resolveSecrets({ name: "h", transport: "http", url: "https://h", headers: { Authorization: "secret://bad/x" } }, resolvers),
    );
    assert.equal(err.message, 'server "h": header Authorization: secret://bad/x resolved to a value containing CR, LF or NUL');
    assert.ok(!err.message.includes(VAULT));
  });

  test("a config without references comes back equal, with no secrets", async () => {
    const plain: McpServerConfig = { name: "p", transport: "stdio", command: "/p", env: { A: "1" } };
    const result = await resolveSecrets(plain, new SecretResolvers());
    assert.deepEqual(result, { config: plain, secrets: [] });
  });
});

describe("reference syntax and credential keys", () => {
  test("findSecretReference: whole values and a trailing reference after whitespace", () => {
    assert.deepEqual(findSecretReference("secret://env/A"), { prefix: "", scheme: "env", ref: "A", text: "secret://env/A" });
    assert.deepEqual(findSecretReference("Bearer secret://file//run/t"), {
      prefix: "Bearer ",
      scheme: "file",
      ref: "/run/t",
      text: "secret://file//run/t",
    });
    assert.equal(findSecretReference("xsecret://env/A"), undefined);
    assert.equal(findSecretReference("plain"), undefined);
  });

  test("isCredentialKey", () => {
    for (const name of ["GITHUB_TOKEN", "Authorization", "x-api-key", "API_KEY", "apikey", "OPENAI_KEY", "dbPassword", "DB_PASSWD", "PRIVATE_KEY", "client_secret", "SESSION_ID", "Cookie", "AWS_ACCESS_KEY_ID", "BEARER", "MY_CREDENTIALS", "proxy-auth"]) {
      assert.equal(isCredentialKey(name), true, name);
    }
    for (const name of ["PATH", "HOME", "LOG_LEVEL", "KEYBOARD", "Content-Type", "NODE_ENV", "DEBUG", "PORT"]) {
      assert.equal(isCredentialKey(name), false, name);
    }
  });

  test("findPlaintextCredentials: warnings by path, values never shown", () => {
    const problems = findPlaintextCredentials(
      {
        name: "x",
        transport: "auto",
        url: "https://x",
        env: { API_TOKEN: GH, SAFE: "v", REF_TOKEN: "secret://env/T", EMPTY_TOKEN: "" },
        headers: { Authorization: `Bearer ${VAULT}`, "X-Api-Key": "Bearer secret://vault/k" },
      },
      "/servers/0",
    );
    assert.deepEqual(problems.map((p) => [p.path, p.severity]), [
      ["/servers/0/env/API_TOKEN", "warning"],
      ["/servers/0/headers/Authorization", "warning"],
    ]);
    const text = JSON.stringify(problems);
    assert.ok(!text.includes(GH) && !text.includes(VAULT));
  });
});
