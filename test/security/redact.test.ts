import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, test } from "node:test";
import type { McpServerConfig } from "../../src/config/types.ts";
import { REDACTED, Redactor, redactUrl } from "../../src/security/redact.ts";

const SECRET = "sk-live-9f8e7d6c5b4a";

function withSecrets(...secrets: string[]): Redactor {
  const r = new Redactor();
  for (const s of secrets) r.addSecret(s);
  return r;
}

describe("Redactor.redact", () => {
  test("every occurrence of a secret is replaced", () => {
    const r = withSecrets(SECRET);
    assert.equal(r.redact(`key=${SECRET}, again ${SECRET}.`), `key=${REDACTED}, again ${REDACTED}.`);
    assert.equal(r.redact("nothing here"), "nothing here");
  });

  test("with no secrets, text passes through", () => {
    assert.equal(new Redactor().redact(`x ${SECRET}`), `x ${SECRET}`);
  });

  test("secrets shorter than 4 characters are ignored (configurable)", () => {
    const r = withSecrets("abc", "a", "");
    assert.equal(r.size, 0);
    assert.equal(r.redact("abc a"), "abc a");
    const strict = new Redactor({ minLength: 2 });
    strict.addSecret("ab");
    assert.equal(strict.redact("xaby"), `x${REDACTED}y`);
  });

  test("regex metacharacters in secrets are literal", () => {
    const tricky = "a.b*c+d?(e)[f]{g}|h^$\\i/j-k";
    const r = withSecrets(tricky);
    assert.equal(r.redact(`<${tricky}>`), `<${REDACTED}>`);
    assert.equal(r.redact("aXbbbcdde)[f]{g}|h^$\\i/j-k"), "aXbbbcdde)[f]{g}|h^$\\i/j-k");
    assert.equal(r.redact("a.b*c+d?"), "a.b*c+d?");
  });

  test("URL-encoded, form-encoded, JSON-escaped and base64 forms are redacted too", () => {
    const secret = 'p@ss w0rd/"quoted"\\slash\n';
    const r = withSecrets(secret);
    const forms = [
      encodeURIComponent(secret),
      new URLSearchParams({ q: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
      JSON.stringify(JSON.stringify({ password: secret })),
      Buffer.from(secret).toString("base64"),
      Buffer.from(secret).toString("base64url"),
    ];
    for (const form of forms) {
      const out = r.redact(`before ${form} after`);
      assert.ok(out.includes(REDACTED), `not redacted: ${form}`);
      assert.ok(!out.includes("w0rd"), `leaks part of the secret: ${out}`);
    }
    // A request body logged as JSON: the decoded secret must not come back out.
    const logged = r.redact(JSON.stringify({ params: { arguments: { pw: secret } } }));
    assert.ok(!JSON.stringify(JSON.parse(logged)).includes("w0rd"));
  });

  test("overlapping secrets are redacted as one span, leaving no tail", () => {
    const r = withSecrets("abcdef", "defghi");
    assert.equal(r.redact("xxabcdefghixx"), `xx${REDACTED}xx`);
    assert.equal(r.redact("xxdefghixx"), `xx${REDACTED}xx`);
    const chain = withSecrets("1111aaaa", "aaaa2222", "22223333");
    assert.equal(chain.redact("<1111aaaa22223333>"), `<${REDACTED}>`);
  });

  test("the longest of nested secrets wins", () => {
    const r = withSecrets("tokenvalue", "tokenvalue-extended");
    assert.equal(r.redact("a tokenvalue-extended b tokenvalue c"), `a ${REDACTED} b ${REDACTED} c`);
  });

  test("thousands of secrets, all redacted, added after earlier use", () => {
    const r = new Redactor();
    r.addSecret("first-secret");
    assert.equal(r.redact("first-secret"), REDACTED);
    const secrets = Array.from({ length: 3000 }, (_, i) => `secret-${i.toString(36)}-${(i * 7919).toString(16)}`);
    for (const s of secrets) r.addSecret(s);
    const text = secrets.map((s, i) => `line ${i}: ${s};`).join("\n");
    const out = r.redact(text);
    for (const s of secrets) assert.ok(!out.includes(s), s);
    assert.equal(out.split(REDACTED).length - 1, secrets.length);
    assert.ok(out.startsWith(`line 0: ${REDACTED};`));
  });
});

describe("Redactor.addFromConfig", () => {
  const config: McpServerConfig = {
    name: "gh",
    transport: "http",
    url: "https://mcp.example.com/mcp?api_key=url-key-12345&page=2",
    env: { GITHUB_TOKEN: "ghp_envtoken123", LOG_LEVEL: "verbose-logging", DB_PASSWORD: "secret://env/DB_PASSWORD" },
    headers: { Authorization: "Bearer bearer-abc-123", "X-Api-Key": "hdr-key-999", Accept: "application/json" },
    args: ["--api-key=arg-key-1111", "--token", "arg-token-2222", "--verbose", "--name", "public-name"],
  };

  test("values under credential-like keys are redacted; others are not", () => {
    const r = new Redactor();
    r.addFromConfig(config);
    const text = [
      "ghp_envtoken123",
      "Bearer bearer-abc-123",
      "bearer-abc-123",
      "hdr-key-999",
      "url-key-12345",
      "arg-key-1111",
      "arg-token-2222",
    ].join(" | ");
    assert.equal(r.redact(text), Array(7).fill(REDACTED).join(" | "));
    assert.equal(r.redact("verbose-logging application/json public-name page=2"), "verbose-logging application/json public-name page=2");
  });

  test("an unresolved secret:// reference stays readable", () => {
    const r = new Redactor();
    r.addFromConfig(config);
    r.addFromConfig({ name: "x", transport: "http", headers: { Authorization: "Bearer secret://env/TOKEN" } });
    assert.equal(r.redact("secret://env/DB_PASSWORD secret://env/TOKEN"), "secret://env/DB_PASSWORD secret://env/TOKEN");
  });

  test("Basic credentials: the header, the encoded part, user:password and the password", () => {
    const r = new Redactor();
    const encoded = Buffer.from("alice:open-sesame-77").toString("base64");
    r.addFromConfig({ name: "x", transport: "http", headers: { authorization: `Basic ${encoded}` } });
    assert.equal(r.redact(`sent ${encoded}`), `sent ${REDACTED}`);
    assert.equal(r.redact("login alice:open-sesame-77"), `login ${REDACTED}`);
    assert.equal(r.redact("password was open-sesame-77"), `password was ${REDACTED}`);
  });
});

describe("Redactor.redactValue", () => {
  test("deep copy: strings redacted everywhere, credential keys redacted whatever they hold", () => {
    const r = withSecrets(SECRET);
    const input = {
      message: `failed with ${SECRET}`,
      list: ["ok", `x${SECRET}x`, 3, null],
      nested: { deeper: { note: SECRET } },
      password: "abc",
      apiKey: 123456,
      token: { anything: "inside" },
      authRequired: true,
      session_id: null,
      [SECRET]: "key is a secret",
    };
    const out = r.redactValue(input);
    assert.deepEqual(out, {
      message: `failed with ${REDACTED}`,
      list: ["ok", `x${REDACTED}x`, 3, null],
      nested: { deeper: { note: REDACTED } },
      password: REDACTED,
      apiKey: REDACTED,
      token: REDACTED,
      authRequired: true,
      session_id: null,
      [REDACTED]: "key is a secret",
    });
    assert.equal(input.message, `failed with ${SECRET}`, "the input is not modified");
  });

  test("errors keep their prototype, with message, stack and cause redacted", () => {
    const r = withSecrets(SECRET);
    const err = new TypeError(`bad ${SECRET}`, { cause: new Error(`inner ${SECRET}`) });
    const out = r.redactValue({ err }).err;
    assert.ok(out instanceof TypeError);
    assert.equal(out.message, `bad ${REDACTED}`);
    assert.ok(!String(out.stack).includes(SECRET));
    assert.equal((out.cause as Error).message, `inner ${REDACTED}`);
  });

  test("maps, sets and class instances are walked; cycles are kept", () => {
    const r = withSecrets(SECRET);
    class Box {
      content: string;
      constructor(content: string) {
        this.content = content;
      }
    }
    const cyclic: Record<string, unknown> = { text: SECRET };
    cyclic.self = cyclic;
    const out = r.redactValue({
      map: new Map<string, string>([["a", SECRET], ["Authorization", "Bearer x"]]),
      set: new Set([SECRET]),
      box: new Box(SECRET),
      cyclic,
    });
    assert.deepEqual([...out.map], [["a", REDACTED], ["Authorization", REDACTED]]);
    assert.deepEqual([...out.set], [REDACTED]);
    assert.ok(out.box instanceof Box);
    assert.equal(out.box.content, REDACTED);
    assert.equal(out.cyclic.text, REDACTED);
    assert.equal(out.cyclic.self, out.cyclic);
  });

  test("nesting beyond the depth limit is replaced, not leaked", () => {
    const r = withSecrets(SECRET);
    let deep: unknown = SECRET;
    for (let i = 0; i < 200; i++) deep = { next: deep };
    assert.ok(!JSON.stringify(r.redactValue(deep)).includes(SECRET));
  });

  test("a __proto__ key (as JSON.parse makes) stays a key of the copy, never its prototype", () => {
    const r = withSecrets(SECRET);
    const out = r.redactValue(JSON.parse(`{"__proto__":{"polluted":"${SECRET}"}}`) as Record<string, unknown>);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { polluted: REDACTED });
  });
});

describe("Redactor.redactJson", () => {
  test("copies only what held a secret: untouched subtrees keep their identity", () => {
    const r = withSecrets(SECRET);
    const clean = { type: "object", properties: { a: { type: "string" } } };
    const input = { name: "t", description: `uses ${SECRET}`, inputSchema: clean, list: ["x", { [SECRET]: 1 }] };
    const out = r.redactJson(input);
    assert.deepEqual(out, { name: "t", description: `uses ${REDACTED}`, inputSchema: clean, list: ["x", { [REDACTED]: 1 }] });
    assert.equal(out.inputSchema, clean, "the schema without a secret is the same object");
    assert.equal(input.description, `uses ${SECRET}`, "the input is not modified");
    const plain = { a: [1, "two", { three: null }] };
    assert.equal(r.redactJson(plain), plain, "nothing to redact: the value itself");
    assert.equal(new Redactor().redactJson(input), input, "no secrets known: the value itself");
  });

  test("a __proto__ key stays a key; deep nesting is kept when clean and replaced when it holds a secret", () => {
    const r = withSecrets(SECRET);
    const parsed = JSON.parse(`{"__proto__":{"x":"${SECRET}"}}`) as Record<string, unknown>;
    const out = r.redactJson(parsed);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__")?.value, { x: REDACTED });
    let cleanDeep: unknown = "leaf";
    let secretDeep: unknown = SECRET;
    for (let i = 0; i < 200; i++) {
      cleanDeep = { next: cleanDeep };
      secretDeep = { next: secretDeep };
    }
    assert.equal(r.redactJson(cleanDeep), cleanDeep);
    assert.ok(!JSON.stringify(r.redactJson(secretDeep)).includes(SECRET));
  });
});

describe("redactUrl", () => {
  test("credentials, query values and the fragment are removed; keys stay", () => {
    assert.equal(
      redactUrl(`https://bob:${SECRET}@example.com:8443/mcp/v1?token=${SECRET}&mode=x&flag=#frag`),
      `https://${REDACTED}@example.com:8443/mcp/v1?token=${REDACTED}&mode=${REDACTED}&flag=#${REDACTED}`,
    );
    assert.equal(redactUrl("https://example.com/mcp"), "https://example.com/mcp");
  });

  test("a bare query token is itself redacted", () => {
    assert.equal(redactUrl(`https://example.com/hook?${SECRET}`), `https://example.com/hook?${REDACTED}`);
  });

  test("host-less and unparseable URLs keep nothing that could be secret", () => {
    assert.equal(redactUrl(`mailto:${SECRET}@example.com`), `mailto:${REDACTED}`);
    const broken = redactUrl(`//user:${SECRET}@host/p?q=${SECRET}`);
    assert.ok(!broken.includes(SECRET), broken);
    assert.ok(!redactUrl(`not a url ?${SECRET}`).includes(SECRET));
  });
});
