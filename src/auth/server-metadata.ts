/**
 * Authorization server metadata: RFC 8414 and OpenID Connect discovery in the orders the MCP
 * specification lists, the exact `issuer` check, and the 2025-03-26 fallbacks for servers that
 * publish no protected resource metadata.
 */
import { fetchText, jsonObject, requireSafeUrl, type OAuthHttpOptions } from "./http-fetch.ts";
import { FieldReader } from "./metadata-fields.ts";
import { clipText, oauthError, showUrl } from "./oauth-error.ts";

/** The fields of authorization server metadata the flow uses. */
export interface AuthorizationServerMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint?: string;
  scopesSupported?: string[];
  grantTypesSupported?: string[];
  tokenEndpointAuthMethodsSupported?: string[];
  codeChallengeMethodsSupported?: string[];
  /** RFC 9449 §5.1: the proof algorithms the server takes; DPoP is used only when ES256 is listed. */
  dpopSigningAlgValuesSupported?: string[];
  /** Client ID Metadata Documents: a URL may be the `client_id`. */
  clientIdMetadataDocumentSupported?: boolean;
  /** RFC 9207: the redirect carries `iss`, and the client must then require it. */
  authorizationResponseIssParameterSupported?: boolean;
  /** Where the metadata came from; "defaults" for the 2025-03-26 default endpoints. */
  source: string;
}

/**
 * The metadata URLs of `issuer`, in the spec's order. Without a path: RFC 8414 then OIDC at the
 * root. With a path: RFC 8414 with the path after the well-known segment, OIDC the same way,
 * then OIDC with the well-known segment after the path.
 */
export function serverMetadataCandidates(issuer: URL): URL[] {
  const path = issuer.pathname.replace(/\/+$/, "");
  const at = (p: string) => new URL(p, issuer.origin);
  if (path === "") return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")];
  return [
    at(`/.well-known/oauth-authorization-server${path}`),
    at(`/.well-known/openid-configuration${path}`),
    at(`${path}/.well-known/openid-configuration`),
  ];
}

/**
 * Fetches the metadata of the authorization server `issuer` (as the protected resource metadata
 * names it). The first candidate that answers 2xx decides; its `issuer` must be the same string
 * as `issuer` (RFC 8414 §3.3), else `ISSUER_MISMATCH`. `AUTHORIZATION_SERVER_NOT_FOUND` when
 * none answered.
 */
export async function discoverServerMetadata(issuer: string, options: OAuthHttpOptions = {}): Promise<AuthorizationServerMetadata> {
  const issuerUrl = requireSafeUrl(issuer, "authorization server");
  const found = await firstAnswer(serverMetadataCandidates(issuerUrl), options);
  if (found === undefined) {
    throw oauthError("AUTHORIZATION_SERVER_NOT_FOUND", `no authorization server metadata for ${showUrl(issuerUrl)}`, { issuer: showUrl(issuerUrl) });
  }
  const metadata = readServerMetadata(found.doc, found.where);
  if (metadata.issuer !== issuer) throw issuerMismatch(found.where, metadata.issuer, issuer);
  return metadata;
}

/**
 * The 2025-03-26 way, for a server with no protected resource metadata: the authorization
 * server is the MCP server's origin; its RFC 8414 metadata at the root, else the default
 * endpoints `/authorize`, `/token` and `/register` there. The metadata's `issuer` must be on
 * that origin, at any path (docs/decisions.md 123): the document came from the MCP server's
 * own origin, and 2025-03-26 servers name their issuer `/oauth` and the like.
 */
export async function legacyServerMetadata(serverUrl: string | URL, options: OAuthHttpOptions = {}): Promise<AuthorizationServerMetadata> {
  const server = requireSafeUrl(String(serverUrl), "MCP server URL");
  const origin = server.origin;
  const found = await firstAnswer([new URL("/.well-known/oauth-authorization-server", origin)], options);
  if (found !== undefined) {
    const metadata = readServerMetadata(found.doc, found.where);
    if (originOf(metadata.issuer) !== origin) throw issuerMismatch(found.where, metadata.issuer, origin);
    return metadata;
  }
  return {
    issuer: origin,
    authorizationEndpoint: `${origin}/authorize`,
    tokenEndpoint: `${origin}/token`,
    registrationEndpoint: `${origin}/register`,
    // The defaults come with no list; MCP required PKCE S256 of every server from the start.
    codeChallengeMethodsSupported: ["S256"],
    source: "defaults",
  };
}

/** Reads the fields the flow uses; each endpoint must be https (or loopback http). */
export function readServerMetadata(doc: Record<string, unknown>, where: string): AuthorizationServerMetadata {
  const f = new FieldReader(doc, `authorization server metadata ${where}`);
  const endpoint = (name: string, value: string): string => {
    requireSafeUrl(value, `"${name}" of ${where}`);
    return value;
  };
  const out: AuthorizationServerMetadata = {
    issuer: f.requiredString("issuer"),
    authorizationEndpoint: endpoint("authorization_endpoint", f.requiredString("authorization_endpoint")),
    tokenEndpoint: endpoint("token_endpoint", f.requiredString("token_endpoint")),
    source: where,
  };
  const registration = f.string("registration_endpoint");
  if (registration !== undefined) out.registrationEndpoint = endpoint("registration_endpoint", registration);
  const lists = [
    ["scopes_supported", "scopesSupported"],
    ["grant_types_supported", "grantTypesSupported"],
    ["token_endpoint_auth_methods_supported", "tokenEndpointAuthMethodsSupported"],
    ["code_challenge_methods_supported", "codeChallengeMethodsSupported"],
    ["dpop_signing_alg_values_supported", "dpopSigningAlgValuesSupported"],
  ] as const;
  for (const [wire, key] of lists) {
    const v = f.strings(wire);
    if (v !== undefined) out[key] = v;
  }
  const cimd = f.boolean("client_id_metadata_document_supported");
  if (cimd !== undefined) out.clientIdMetadataDocumentSupported = cimd;
  const iss = f.boolean("authorization_response_iss_parameter_supported");
  if (iss !== undefined) out.authorizationResponseIssParameterSupported = iss;
  return out;
}

/**
 * Refuses an authorization server without PKCE S256. The MCP specification has clients refuse
 * to proceed when `code_challenge_methods_supported` is absent, not only when S256 is missing
 * from it: absence means the server does not do PKCE.
 */
export function requirePkceS256(metadata: AuthorizationServerMetadata): void {
  if (metadata.codeChallengeMethodsSupported?.includes("S256")) return;
  const listed = metadata.codeChallengeMethodsSupported;
  const what = listed === undefined ? "does not list code_challenge_methods_supported" : `lists only ${clipText(listed.join(", ") || "nothing")}`;
  throw oauthError("PKCE_UNSUPPORTED", `authorization server ${clipText(metadata.issuer)} ${what}; PKCE with S256 is required`, { issuer: clipText(metadata.issuer) });
}

async function firstAnswer(candidates: readonly URL[], options: OAuthHttpOptions): Promise<{ doc: Record<string, unknown>; where: string } | undefined> {
  for (const url of candidates) {
    const fetched = await fetchText(url, { method: "GET", headers: { accept: "application/json" } }, "authorization server metadata", options);
    if (fetched.status < 200 || fetched.status > 299) continue;
    return { doc: jsonObject(fetched, "authorization server metadata", showUrl(url), "METADATA_INVALID"), where: showUrl(url) };
  }
  return undefined;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function issuerMismatch(where: string, got: string, expected: string) {
  return oauthError(
    "ISSUER_MISMATCH",
    `authorization server metadata ${where} names issuer "${clipText(got)}", not "${clipText(expected)}" that was asked for`,
    { url: where, issuer: clipText(got), expected: clipText(expected) },
  );
}
