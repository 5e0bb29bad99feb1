import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { PolicyError, type PolicyErrorCode } from "../../src/security/policy.ts";
import { checkUrl, isLoopbackHost, type CheckUrlOptions } from "../../src/security/url.ts";

const SECRET = "tok-5ecret-value-42";

function refused(url: string, code: PolicyErrorCode, options: CheckUrlOptions = {}): PolicyError {
  try {
    checkUrl(url, { server: "remote", ...options });
  } catch (err) {
    assert.ok(err instanceof PolicyError, `expected PolicyError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.server, "remote");
    assert.match(err.message, /^server "remote": /);
    assert.ok(!err.message.includes(SECRET), `message leaks the secret: ${err.message}`);
    assert.ok(!JSON.stringify(err.details).includes(SECRET));
    return err;
  }
  assert.fail(`expected ${code} for ${url}`);
}

describe("checkUrl: schemes and transport security", () => {
  test("https is accepted and the parsed URL returned", () => {
    const url = checkUrl("https://mcp.example.com/mcp?x=1");
    assert.equal(url.hostname, "mcp.example.com");
    assert.equal(url.pathname, "/mcp");
  });

  test("plain http is accepted for loopback hosts only", () => {
    for (const url of [
      "http://localhost:3000/mcp",
      "http://LOCALHOST/mcp",
      "http://localhost./mcp",
      "http://127.0.0.1:8080/mcp",
      "http://127.45.6.7/mcp",
      "http://127.1/mcp",
      "http://0x7f.0.0.1/mcp",
      "http://[::1]:9000/mcp",
      "http://[0:0:0:0:0:0:0:1]/mcp",
      "http://[::ffff:127.0.0.1]/mcp",
    ]) {
      assert.doesNotThrow(() => checkUrl(url), url);
    }
  });

  test("plain http to anything else is refused, with the fix", () => {
    for (const url of [
      "http://example.com/mcp",
      "http://10.0.0.1/mcp",
      "http://128.0.0.1/mcp",
      "http://localhost.evil.com/mcp",
      "http://127.0.0.1.nip.io/mcp",
      "http://[::2]/mcp",
      "http://0.0.0.0/mcp",
    ]) {
      const err = refused(url, "INSECURE_URL");
      assert.match(err.message, /use https, or set allowInsecureHttp/);
    }
  });

  test("allowInsecureHttp admits plain http anywhere", () => {
    assert.equal(checkUrl("http://example.com/mcp", { allowInsecureHttp: true }).protocol, "http:");
  });

  test("only http and https", () => {
    for (const url of ["ftp://example.com/x", "file:///etc/passwd", "ws://localhost/x", "javascript:alert(1)", "data:text/plain,hi"]) {
      const err = refused(url, "URL_SCHEME_NOT_ALLOWED", { allowInsecureHttp: true });
      assert.match(err.message, /only http: and https: are allowed/);
    }
  });

  test("an unparseable URL is refused without being echoed", () => {
    const err = refused(`not a url ${SECRET}`, "INVALID_URL");
    assert.match(err.message, /not a valid absolute URL/);
    refused("/relative/mcp", "INVALID_URL");
  });
});

describe("checkUrl: credentials and secrets in the URL", () => {
  test("user:pass@ is refused, and neither part appears in the message", () => {
    const err = refused(`https://admin:${SECRET}@example.com/mcp`, "URL_CREDENTIALS");
    assert.ok(!err.message.includes("admin"));
    assert.match(err.message, /send them in a header/);
    refused(`https://${SECRET}@example.com/mcp`, "URL_CREDENTIALS");
    refused(`http://u:${SECRET}@localhost/mcp`, "URL_CREDENTIALS");
  });

  test("query values and fragments never reach the message", () => {
    const err = refused(`http://example.com/mcp?api_key=${SECRET}&v=2#${SECRET}`, "INSECURE_URL");
    assert.match(err.message, /http:\/\/example\.com\/mcp\?api_key=\[REDACTED\]&v=\[REDACTED\]#\[REDACTED\]/);
    refused(`ftp://example.com/x?${SECRET}`, "URL_SCHEME_NOT_ALLOWED");
    refused(`https://evil.com/?t=${SECRET}`, "HOST_NOT_ALLOWED", { allowedHosts: ["good.com"] });
  });
});

describe("checkUrl: host allow-list", () => {
  const allowedHosts = ["api.example.com", "*.corp.test", "Bücher.example", "::1", "10.1.2.3"];

  test("exact hosts, case- and trailing-dot-insensitive", () => {
    assert.doesNotThrow(() => checkUrl("https://api.example.com/mcp", { allowedHosts }));
    assert.doesNotThrow(() => checkUrl("https://API.Example.COM./mcp", { allowedHosts }));
    assert.doesNotThrow(() => checkUrl("https://10.1.2.3:8443/mcp", { allowedHosts }));
    assert.doesNotThrow(() => checkUrl("http://[::1]/mcp", { allowedHosts }));
  });

  test("internationalised names match in either spelling", () => {
    assert.doesNotThrow(() => checkUrl("https://xn--bcher-kva.example/mcp", { allowedHosts }));
    assert.doesNotThrow(() => checkUrl("https://bücher.example/mcp", { allowedHosts }));
  });

  test("*.domain matches subdomains at any depth, not the domain itself", () => {
    assert.doesNotThrow(() => checkUrl("https://a.corp.test/mcp", { allowedHosts }));
    assert.doesNotThrow(() => checkUrl("https://a.b.corp.test/mcp", { allowedHosts }));
    refused("https://corp.test/mcp", "HOST_NOT_ALLOWED", { allowedHosts });
  });

  test("look-alike hosts are refused, with the fix", () => {
    for (const url of [
      "https://example.com/mcp",
      "https://xapi.example.com/mcp",
      "https://api.example.com.evil.net/mcp",
      "https://evilcorp.test/mcp",
      "https://corp.test.evil/mcp",
      "https://10.1.2.4/mcp",
    ]) {
      const err = refused(url, "HOST_NOT_ALLOWED", { allowedHosts });
      assert.match(err.message, /add it \(or "\*\.<domain>"\) to allowedHosts/);
    }
  });

  test("entries that are not bare hosts match nothing", () => {
    const odd = ["api.example.com:443", "api.example.com/mcp", "user@api.example.com", "*."];
    refused("https://api.example.com/mcp", "HOST_NOT_ALLOWED", { allowedHosts: odd });
  });

  test("an empty list allows no host; no list allows any", () => {
    refused("https://api.example.com/mcp", "HOST_NOT_ALLOWED", { allowedHosts: [] });
    assert.doesNotThrow(() => checkUrl("https://anything.example/mcp"));
  });

  test("loopback still needs to be on the list when a list is given", () => {
    refused("http://127.0.0.1/mcp", "HOST_NOT_ALLOWED", { allowedHosts: ["api.example.com"] });
  });
});

describe("isLoopbackHost", () => {
  test("takes hostnames as URL gives them", () => {
    assert.equal(isLoopbackHost("[::1]"), true);
    assert.equal(isLoopbackHost("127.255.255.254"), true);
    assert.equal(isLoopbackHost("localhost"), true);
    assert.equal(isLoopbackHost("example.com"), false);
    assert.equal(isLoopbackHost("1127.0.0.1"), false);
  });
});
