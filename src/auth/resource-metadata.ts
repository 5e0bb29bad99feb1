/**
 * Protected resource metadata discovery (RFC 9728) for an MCP server: where its authorization
 * servers are, which scopes it knows, and the `resource` value to send (RFC 8707).
 */
import { fetchText, jsonObject, requireSafeUrl, type OAuthHttpOptions } from "./http-fetch.ts";
import { FieldReader } from "./metadata-fields.ts";
import { clipText, oauthError, showUrl } from "./oauth-error.ts";

/** The fields of RFC 9728 metadata the flow uses. `resource` is kept exactly as published. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorizationServers?: string[];
  scopesSupported?: string[];
}

/** Metadata found, with the URL it came from. */
export interface DiscoveredResource {
  metadata: ProtectedResourceMetadata;
  metadataUrl: string;
}

/**
 * The URLs to try, in order: the challenge's `resource_metadata` when the server gave one, then
 * `/.well-known/oauth-protected-resource/<path>` (when the endpoint has a path), then the root.
 */
export function resourceMetadataCandidates(serverUrl: URL, challengeUrl?: string): URL[] {
  const out: URL[] = [];
  if (challengeUrl !== undefined && challengeUrl !== "") out.push(requireSafeUrl(challengeUrl, "resource_metadata URL"));
  const path = serverUrl.pathname.replace(/\/+$/, "");
  if (path !== "") out.push(new URL(`/.well-known/oauth-protected-resource${path}`, serverUrl.origin));
  out.push(new URL("/.well-known/oauth-protected-resource", serverUrl.origin));
  return out;
}

/**
 * Finds and checks the metadata of the MCP endpoint `serverUrl`. Candidates are tried in the
 * order of {@link resourceMetadataCandidates}; one that answers other than 2xx passes to the
 * next, and the first that answers 2xx decides: its document is checked and used or refused,
 * never skipped for a later one (so a path-specific document that is wrong is not papered over
 * by the root's). Throws `RESOURCE_METADATA_NOT_FOUND` when none answered.
 */
export async function discoverResourceMetadata(serverUrl: string | URL, challengeUrl: string | undefined, options: OAuthHttpOptions = {}): Promise<DiscoveredResource> {
  const server = requireSafeUrl(String(serverUrl), "MCP server URL");
  const tried: string[] = [];
  for (const url of resourceMetadataCandidates(server, challengeUrl)) {
    const fetched = await fetchText(url, { method: "GET", headers: { accept: "application/json" } }, "protected resource metadata", options);
    tried.push(`${showUrl(url)} (HTTP ${fetched.status})`);
    if (fetched.status < 200 || fetched.status > 299) continue;
    const metadata = readResourceMetadata(jsonObject(fetched, "protected resource metadata", showUrl(url), "METADATA_INVALID"), showUrl(url));
    checkResourceMatches(metadata.resource, server, showUrl(url));
    return { metadata, metadataUrl: url.href };
  }
  throw oauthError("RESOURCE_METADATA_NOT_FOUND", `no protected resource metadata for ${showUrl(server)}; tried ${tried.join(", ")}`, { url: showUrl(server), tried });
}

/** Reads the fields the flow uses, each checked for its type. */
export function readResourceMetadata(doc: Record<string, unknown>, where: string): ProtectedResourceMetadata {
  const f = new FieldReader(doc, `protected resource metadata ${where}`);
  const out: ProtectedResourceMetadata = { resource: f.requiredString("resource") };
  const servers = f.strings("authorization_servers");
  if (servers !== undefined) out.authorizationServers = servers;
  const scopes = f.strings("scopes_supported");
  if (scopes !== undefined) out.scopesSupported = scopes;
  return out;
}

/**
 * Refuses metadata published for another resource (RFC 9728 §3.3: an attacker's metadata could
 * otherwise send us to its authorization server, and the token to it). The published
 * `resource` must have the endpoint's origin and a path that is the endpoint's path or a parent
 * of it at a `/` boundary: a server may name itself by its origin while serving MCP under
 * `/mcp` (docs/decisions.md 113).
 */
export function checkResourceMatches(resource: string, server: URL, where: string): void {
  let published: URL;
  try {
    published = new URL(resource);
  } catch {
    throw oauthError("METADATA_INVALID", `protected resource metadata ${where}: "resource" is not a URL: "${clipText(resource)}"`, { field: "resource" });
  }
  const base = published.pathname.endsWith("/") ? published.pathname : `${published.pathname}/`;
  const path = server.pathname.endsWith("/") ? server.pathname : `${server.pathname}/`;
  if (published.origin !== server.origin || !path.startsWith(base) || published.hash !== "") {
    throw oauthError(
      "RESOURCE_MISMATCH",
      `protected resource metadata ${where} is for "${clipText(resource)}", not for this server ${showUrl(server)}`,
      { url: where, resource: clipText(resource), server: showUrl(server) },
    );
  }
}
