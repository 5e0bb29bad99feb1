/**
 * The layer order of src/, as scripts/check-deps.ts enforces it (README "Layout" writes the same
 * table for readers). Each folder lists the folders it may import besides itself, type-only
 * imports included; a file directly in src/ (index.ts, server-stdio.ts, client-stdio.ts) may
 * import any folder.
 *
 * Nothing here knows about Node: keeping `node:` modules out of the core folders is the job of
 * tsconfig.core.json (the compiler, which follows imports) and of check-deps' text scan.
 */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  // Leaf helpers: anything may use them, they use nothing of ours.
  util: [],
  // The core, which runs in any JS runtime.
  jsonrpc: ["util"],
  schema: ["util"],
  mcp: ["jsonrpc", "schema", "util"],
  bridge: ["jsonrpc", "mcp", "schema", "util"],
  // Node adapters. Streamable HTTP belongs to MCP (version header, sessions, the initialize
  // replay), so transport/ may read mcp/ (docs/decisions.md 89).
  transport: ["jsonrpc", "mcp", "util"],
  config: ["jsonrpc", "util"],
  // Checks what a server may run or reach before a transport is built, with the same env and
  // command resolution the stdio transport spawns with.
  security: ["config", "jsonrpc", "transport", "util"],
  // The OAuth client: reads the transports' challenge parser and the URL checks, and is given
  // to the transports as an object, so they never import it (docs/decisions.md 114).
  auth: ["jsonrpc", "security", "transport", "util"],
  manager: ["bridge", "config", "jsonrpc", "mcp", "schema", "security", "transport", "util"],
  // What McpServer serves beyond its own registrations: composites of providers, the built-in
  // middleware (on security/ and bridge/), McpManager as a provider.
  gateway: ["bridge", "config", "jsonrpc", "manager", "mcp", "schema", "security", "transport", "util"],
  acp: ["auth", "bridge", "config", "jsonrpc", "manager", "mcp", "schema", "security", "transport", "util"],
  cli: ["acp", "auth", "bridge", "config", "gateway", "jsonrpc", "manager", "mcp", "schema", "security", "transport", "util"],
};

/**
 * Why an import from `from` to `to` breaks the layer order, or undefined when it keeps it. Both
 * are paths relative to src/ with `/` separators (`jsonrpc/peer.ts`).
 */
export function layerProblem(from: string, to: string): string | undefined {
  const fromDir = folderOf(from);
  const toDir = folderOf(to);
  if (fromDir === undefined || fromDir === toDir) return undefined;
  const allowed = LAYERS[fromDir];
  if (allowed === undefined) return `${fromDir}/ has no place in the layer order (${HOW_TO_ADD})`;
  if (toDir === undefined) return `${fromDir}/ must not import "${to}" from the top of src/ (it re-exports the layers)`;
  if (LAYERS[toDir] === undefined) return `${toDir}/ has no place in the layer order (${HOW_TO_ADD})`;
  if (allowed.includes(toDir)) return undefined;
  const may = allowed.length === 0 ? "nothing else" : allowed.map((d) => `${d}/`).join(", ");
  return `${fromDir}/ must not import ${toDir}/ (layer order: ${fromDir}/ may import ${may}; see README "Layout")`;
}

const HOW_TO_ADD = 'add it to LAYERS in scripts/check-layers.ts and to README "Layout"';

/** The top folder of a path under src/, or undefined for a file directly in src/. */
function folderOf(path: string): string | undefined {
  const slash = path.indexOf("/");
  return slash === -1 ? undefined : path.slice(0, slash);
}
