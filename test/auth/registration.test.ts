import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { registerClient } from "../../src/auth/registration.ts";
import { MemoryTokenStore } from "../../src/auth/token-store.ts";
import { json } from "../../fixtures/oauth/authorization-server.ts";
import { eachAuthServer } from "./auth-server-hooks.ts";
import { oauthFailure } from "./oauth-matchers.ts";

const REDIRECT = "http://127.0.0.1:9/callback";
const CIMD = "https://client.example/oauth/client.json";

describe("client registration", () => {
  const s = eachAuthServer();

  test("pre-registered credentials for this issuer come first, and only for this issuer", async () => {
    const preRegistered = { [s.as.issuer]: { clientId: "given", clientSecret: "pw-given" }, "https://other.example": { clientId: "not-this" } };
    const got = await registerClient({ ...s.metadata, clientIdMetadataDocumentSupported: true }, { redirectUri: REDIRECT, preRegistered, clientMetadataUrl: CIMD });
    assert.deepEqual(got, { client: { issuer: s.as.issuer, clientId: "given", clientSecret: "pw-given" }, via: "pre-registered" });
    const other = await registerClient(s.metadata, { redirectUri: REDIRECT, preRegistered: { "https://other.example": { clientId: "not-this" } } });
    assert.equal(other.via, "dynamic-registration");
    assert.notEqual(other.client.clientId, "not-this");
    assert.equal(s.as.requestsTo("/register").length, 1);
  });

  test("a client metadata document URL is the client_id where the server supports it, with no request", async () => {
    const got = await registerClient({ ...s.metadata, clientIdMetadataDocumentSupported: true }, { redirectUri: REDIRECT, clientMetadataUrl: CIMD });
    assert.deepEqual(got, { client: { issuer: s.as.issuer, clientId: CIMD, tokenEndpointAuthMethod: "none" }, via: "client-metadata-document" });
    assert.equal(s.as.requests.length, 1, "only the metadata fetch of beforeEach");
    await assert.rejects(
      registerClient({ ...s.metadata, clientIdMetadataDocumentSupported: true }, { redirectUri: REDIRECT, clientMetadataUrl: "https://client.example/" }),
      oauthFailure("REGISTRATION_FAILED", /must be https with a path/),
    );
  });

  test("Dynamic Client Registration: a public client for the code flow, native for a loopback redirect", async () => {
    const got = await registerClient(s.metadata, { redirectUri: REDIRECT, clientMetadataUrl: CIMD, scope: "read" });
    assert.equal(got.via, "dynamic-registration");
    assert.deepEqual(JSON.parse(s.as.requestsTo("/register")[0]!.body), {
      client_name: "mcp-bridge",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "read",
      application_type: "native",
    });
    assert.deepEqual(s.as.clients.get(got.client.clientId), { redirectUris: [REDIRECT] });
    assert.deepEqual(got.client, { issuer: s.as.issuer, clientId: got.client.clientId, tokenEndpointAuthMethod: "none" });
    await registerClient(s.metadata, { redirectUri: "https://app.example/callback" });
    await registerClient(s.metadata, { redirectUri: REDIRECT, applicationType: "web" });
    assert.deepEqual(s.as.requestsTo("/register").slice(1).map((r) => JSON.parse(r.body).application_type), ["web", "web"]);
  });

  test("a server that takes no public client is asked for a secret, sent the way it lists", async () => {
    const onlyPost = { ...s.metadata, tokenEndpointAuthMethodsSupported: ["private_key_jwt", "client_secret_post"] };
    const got = await registerClient(onlyPost, { redirectUri: REDIRECT });
    assert.equal(JSON.parse(s.as.requestsTo("/register")[0]!.body).token_endpoint_auth_method, "client_secret_post");
    assert.equal(got.client.tokenEndpointAuthMethod, "client_secret_post");
    assert.equal(got.client.clientSecret, s.as.clients.get(got.client.clientId)?.secret);
  });

  test("a refused, malformed or impossible registration is REGISTRATION_FAILED", async () => {
    s.as.route("/register", json(400, { error: "invalid_redirect_uri", error_description: "loopback only" }));
    await assert.rejects(registerClient(s.metadata, { redirectUri: REDIRECT }), oauthFailure("REGISTRATION_FAILED", /refused the registration \(HTTP 400\) with "invalid_redirect_uri": loopback only/));
    s.as.route("/register", { status: 201, headers: { "content-type": "text/html" }, body: "<p>hi</p>" });
    await assert.rejects(registerClient(s.metadata, { redirectUri: REDIRECT }), oauthFailure("REGISTRATION_FAILED", /answered HTTP 201 that is not a JSON object/));
    s.as.route("/register", json(201, { client_id: 42 }));
    await assert.rejects(registerClient(s.metadata, { redirectUri: REDIRECT }), oauthFailure("REGISTRATION_FAILED", /"client_id" must be a string/));
    s.as.route("/register", json(201, { client_id: "x", token_endpoint_auth_method: "private_key_jwt" }));
    await assert.rejects(registerClient(s.metadata, { redirectUri: REDIRECT }), oauthFailure("REGISTRATION_FAILED", /"private_key_jwt", which this client does not do/));
    const { registrationEndpoint: _, ...none } = s.metadata;
    await assert.rejects(registerClient(none, { redirectUri: REDIRECT }), oauthFailure("REGISTRATION_FAILED", /no way to register with/));
  });
});

describe("MemoryTokenStore", () => {
  test("keeps clients by issuer and tokens by server, as copies", async () => {
    const store = new MemoryTokenStore();
    const client = { issuer: "https://s.as.example", clientId: "c" };
    await store.saveClient(client);
    client.clientId = "changed";
    assert.deepEqual(await store.getClient("https://s.as.example"), { issuer: "https://s.as.example", clientId: "c" });
    assert.equal(await store.getClient("https://s.as.example/"), undefined);
    await store.saveTokens("https://mcp.example/mcp", { accessToken: "a", tokenType: "Bearer", issuer: "https://s.as.example" });
    assert.equal((await store.getTokens("https://mcp.example/mcp"))?.accessToken, "a");
    await store.deleteTokens("https://mcp.example/mcp");
    await store.deleteClient("https://s.as.example");
    assert.deepEqual([await store.getTokens("https://mcp.example/mcp"), await store.getClient("https://s.as.example")], [undefined, undefined]);
  });
});
