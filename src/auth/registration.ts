/**
 * Getting a client identity at an authorization server: pre-registered credentials from the
 * configuration, a Client ID Metadata Document URL, or Dynamic Client Registration (RFC 7591).
 * The result is always bound to the issuer it was obtained for.
 */
import type { KeyObject } from "node:crypto";
import { isLoopbackHost } from "../security/url.ts";
import { fetchText, jsonObject, requireSafeUrl, type OAuthHttpOptions } from "./http-fetch.ts";
import { FieldReader } from "./metadata-fields.ts";
import { clipText, oauthError, showUrl } from "./oauth-error.ts";
import type { AuthorizationServerMetadata } from "./server-metadata.ts";
import type { ClientCredentials, TokenEndpointAuthMethod } from "./token-request.ts";

/** Credentials registered by hand with one authorization server. */
export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
  /** An ES256 private key (PEM or KeyObject) for `private_key_jwt`. */
  privateKey?: string | KeyObject;
  tokenEndpointAuthMethod?: TokenEndpointAuthMethod;
}

/** How this client may identify itself. */
export interface ClientRegistrationOptions {
  /** The redirect URI the authorization request will use. */
  redirectUri: string;
  /** Pre-registered clients, by issuer (exactly as the metadata's `issuer`). */
  preRegistered?: Readonly<Record<string, PreRegisteredClient>>;
  /** This client's metadata document URL (https, with a path), used as `client_id` where supported. */
  clientMetadataUrl?: string;
  /** `client_name` sent in Dynamic Client Registration. Default "mcp-bridge". */
  clientName?: string;
  /** `scope` sent in Dynamic Client Registration. */
  scope?: string;
  /**
   * OIDC `application_type`, which MCP 2026-07-28 requires in Dynamic Client Registration.
   * Default: `native` for a loopback redirect URI (a CLI, a desktop app), else `web`.
   */
  applicationType?: "native" | "web";
}

/** What registration answered with, and how: for the caller to store and to report. */
export interface RegisteredClientResult {
  client: ClientCredentials;
  via: "pre-registered" | "client-metadata-document" | "dynamic-registration";
}

/**
 * A client identity for `metadata.issuer`, in the MCP specification's order of preference:
 * credentials configured for this issuer; else the Client ID Metadata Document URL when the
 * server says it takes one; else Dynamic Client Registration when it has a registration
 * endpoint; else `REGISTRATION_FAILED` naming what is missing (docs/decisions.md 115).
 */
export async function registerClient(metadata: AuthorizationServerMetadata, options: ClientRegistrationOptions, http: OAuthHttpOptions = {}): Promise<RegisteredClientResult> {
  const issuer = metadata.issuer;
  const configured = options.preRegistered?.[issuer];
  if (configured !== undefined) return { client: { ...configured, issuer }, via: "pre-registered" };
  if (options.clientMetadataUrl !== undefined && metadata.clientIdMetadataDocumentSupported === true) {
    const url = requireSafeUrl(options.clientMetadataUrl, "client metadata document URL");
    if (url.protocol !== "https:" || url.pathname === "/") {
      throw oauthError("REGISTRATION_FAILED", `client metadata document URL ${showUrl(url)} must be https with a path`);
    }
    return { client: { issuer, clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: "none" }, via: "client-metadata-document" };
  }
  if (metadata.registrationEndpoint !== undefined) {
    return { client: await dynamicRegistration(metadata, metadata.registrationEndpoint, options, http), via: "dynamic-registration" };
  }
  throw oauthError(
    "REGISTRATION_FAILED",
    `no way to register with ${clipText(issuer)}: no credentials configured for it, no client metadata document it accepts, and no registration endpoint`,
    { issuer: clipText(issuer) },
  );
}

function defaultApplicationType(redirectUri: string): "native" | "web" {
  try {
    return isLoopbackHost(new URL(redirectUri).hostname) ? "native" : "web";
  } catch {
    return "web";
  }
}

/**
 * The token endpoint authentication to ask for: a public client (`none`) where the server
 * takes one, since a CLI or an agent cannot keep a secret from its user; else a secret sent the
 * way the server lists first among the two this client does.
 */
function registrationAuthMethod(metadata: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  const listed = metadata.tokenEndpointAuthMethodsSupported;
  if (listed === undefined || listed.includes("none")) return "none";
  return listed.find((m): m is TokenEndpointAuthMethod => m === "client_secret_basic" || m === "client_secret_post") ?? "none";
}

/** RFC 7591: registers a client for the authorization code flow. */
async function dynamicRegistration(metadata: AuthorizationServerMetadata, endpointUrl: string, options: ClientRegistrationOptions, http: OAuthHttpOptions): Promise<ClientCredentials> {
  const endpoint = requireSafeUrl(endpointUrl, "registration endpoint");
  const where = showUrl(endpoint);
  const request: Record<string, unknown> = {
    client_name: options.clientName ?? "mcp-bridge",
    redirect_uris: [options.redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: registrationAuthMethod(metadata),
  };
  if (options.scope !== undefined) request.scope = options.scope;
  // Omitted, OIDC servers assume "web" and then refuse a loopback redirect URI; others ignore it.
  request.application_type = options.applicationType ?? defaultApplicationType(options.redirectUri);
  const fetched = await fetchText(endpoint, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(request) }, "registration endpoint", http);
  let doc: Record<string, unknown>;
  try {
    doc = jsonObject(fetched, "the answer of registration endpoint", where, "METADATA_INVALID");
  } catch (e) {
    throw oauthError("REGISTRATION_FAILED", `registration endpoint ${where} answered HTTP ${fetched.status} that is not a JSON object`, { url: where, status: fetched.status }, e);
  }
  if (fetched.status < 200 || fetched.status > 299) {
    const error = typeof doc.error === "string" ? ` with "${clipText(doc.error)}"` : "";
    const description = typeof doc.error_description === "string" ? `: ${clipText(doc.error_description)}` : "";
    throw oauthError("REGISTRATION_FAILED", `registration endpoint ${where} refused the registration (HTTP ${fetched.status})${error}${description}`, { url: where, status: fetched.status });
  }
  const f = new FieldReader(doc, `the registration response of ${where}`, "REGISTRATION_FAILED");
  const client: ClientCredentials = { issuer: metadata.issuer, clientId: f.requiredString("client_id") };
  const secret = f.string("client_secret");
  if (secret !== undefined && secret !== "") client.clientSecret = secret;
  const method = f.string("token_endpoint_auth_method");
  if (method !== undefined) {
    if (method !== "none" && method !== "client_secret_basic" && method !== "client_secret_post") {
      throw oauthError("REGISTRATION_FAILED", `registration endpoint ${where} registered the client for "${clipText(method)}", which this client does not do`, { url: where });
    }
    client.tokenEndpointAuthMethod = method;
  }
  return client;
}
