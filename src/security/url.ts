/**
 * Which URLs an HTTP or SSE server may be reached at. Checked before connecting.
 *
 * - `http:` and `https:` only.
 * - `https:` unless the host is loopback (`localhost`, 127.0.0.0/8, `::1`), or
 *   `allowInsecureHttp` is set: a bearer token over plain HTTP is readable on the way.
 * - No `user:pass@`: credentials belong in a header, where they can be a `secret://` reference
 *   and are redacted; in a URL they end up in logs and process lists.
 * - An optional host allow-list: exact hosts, or `*.example.com` for any subdomain of
 *   `example.com` (at any depth, but not `example.com` itself).
 *
 * Messages show the URL through `redactUrl`: never its credentials, query values or fragment.
 */
import { PolicyError, serverLabel } from "./policy.ts";
import { redactUrl } from "./redact.ts";

export interface CheckUrlOptions {
  /** Allow `http:` to non-loopback hosts. Default false. */
  allowInsecureHttp?: boolean;
  /** When given, the host must match one entry (`api.example.com` or `*.example.com`). */
  allowedHosts?: readonly string[];
  /** The server the URL belongs to, named in error messages. */
  server?: string;
}

/**
 * Parses and checks `url`. Returns the parsed URL; throws {@link PolicyError}
 * (`INVALID_URL`, `URL_SCHEME_NOT_ALLOWED`, `URL_CREDENTIALS`, `INSECURE_URL`, `HOST_NOT_ALLOWED`).
 *
 * ```ts
 * checkUrl("https://mcp.example.com/mcp", { allowedHosts: ["*.example.com"] }) // URL
 * checkUrl("http://mcp.example.com/mcp") // PolicyError INSECURE_URL
 * ```
 */
export function checkUrl(url: string, options: CheckUrlOptions = {}): URL {
  const { server } = options;
  const label = serverLabel(server);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not even a redacted form: an unparseable URL cannot be split into safe and unsafe parts.
    throw new PolicyError("INVALID_URL", `${label}: the configured url is not a valid absolute URL; fix "url"`, { details: { server } });
  }
  const shown = redactUrl(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new PolicyError(
      "URL_SCHEME_NOT_ALLOWED",
      `${label}: url ${shown} uses ${JSON.stringify(parsed.protocol)}; only http: and https: are allowed`,
      { details: { server, protocol: parsed.protocol } },
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new PolicyError(
      "URL_CREDENTIALS",
      `${label}: url ${shown} contains credentials; remove them from the URL and send them in a header ` +
        `(e.g. "Authorization" with a secret:// reference)`,
      { details: { server } },
    );
  }
  const host = normaliseHost(parsed.hostname);
  if (parsed.protocol === "http:" && !options.allowInsecureHttp && !isLoopbackHost(host)) {
    throw new PolicyError(
      "INSECURE_URL",
      `${label}: url ${shown} uses plain http to a non-loopback host; use https, or set allowInsecureHttp`,
      { details: { server, host } },
    );
  }
  if (options.allowedHosts !== undefined && !hostAllowed(host, options.allowedHosts)) {
    throw new PolicyError(
      "HOST_NOT_ALLOWED",
      `${label}: host ${JSON.stringify(host)} is not in the allowed hosts; add it (or "*.<domain>") to allowedHosts`,
      { details: { server, host } },
    );
  }
  return parsed;
}

/**
 * True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped 127.0.0.0/8, given a hostname as
 * `URL` normalises it (so `127.1` and `0x7f.0.0.1` arrive as `127.0.0.1`, and
 * `[0:0:0:0:0:0:0:1]` as `[::1]`).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = normaliseHost(hostname);
  if (host === "localhost") return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  if (host === "::1") return true;
  // ::ffff:127.x.y.z, which URL writes as ::ffff:7fxx:yyzz.
  return /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host);
}

function hostAllowed(host: string, allowed: readonly string[]): boolean {
  for (const entry of allowed) {
    if (entry.startsWith("*.")) {
      const suffix = canonicalHost(entry.slice(2));
      if (suffix !== undefined && host.endsWith(`.${suffix}`)) return true;
    } else if (canonicalHost(entry) === host) {
      return true;
    }
  }
  return false;
}

/**
 * An allow-list entry in the form `URL` gives hostnames (lower case, punycode, IPv4 dotted,
 * IPv6 compressed), so `Bücher.example` matches `xn--bcher-kva.example`. An entry that is not
 * a host (a port, a path, junk) matches nothing.
 */
function canonicalHost(entry: string): string | undefined {
  const bare = entry.startsWith("[") ? entry : entry.includes(":") ? `[${entry}]` : entry;
  try {
    const parsed = new URL(`http://${bare}/`);
    const extra = parsed.port + parsed.username + parsed.password + parsed.search + parsed.hash;
    if (extra !== "" || parsed.pathname !== "/") return undefined;
    return normaliseHost(parsed.hostname);
  } catch {
    return undefined;
  }
}

/** Lower case, without IPv6 brackets and without the trailing dot of a fully qualified name. */
function normaliseHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host.endsWith(".")) host = host.slice(0, -1);
  return host;
}
