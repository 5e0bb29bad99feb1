// An OAuth-protected MCP server made only of the official MCP TypeScript SDK's parts (pinned in
// scripts/interop/): its authorization server router (`mcpAuthRouter`) with the SDK's demo
// in-memory provider (dynamic client registration, authorization code with PKCE, consent
// granted at once by a redirect), its protected resource metadata router, and its
// `requireBearerAuth` middleware in front of a Streamable HTTP MCP endpoint. For
// scripts/interop-sdk.ts: our OAuth client must complete the flow against code no one here wrote.
//
//   node sdk-auth-server.mjs     prints "listening on <mcp url>" once both servers listen
//
// Both listen on 127.0.0.1 only (free ports). Exits on SIGTERM/SIGINT.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const interop = join(fileURLToPath(new URL(".", import.meta.url)), "..", "interop", "package.json");
const sdk = createRequire(interop);
const load = (sub) => import(sdk.resolve(sub));
const { default: express } = await load("express");
const { McpServer } = await load("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = await load("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { mcpAuthRouter, mcpAuthMetadataRouter, createOAuthMetadata, getOAuthProtectedResourceMetadataUrl } = await load(
  "@modelcontextprotocol/sdk/server/auth/router.js",
);
const { requireBearerAuth } = await load("@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js");
const { DemoInMemoryAuthProvider } = await load("@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js");
const { z } = await load("zod");

/** Listens on 127.0.0.1, a free port; resolves the node:http server. */
const listen = (app) =>
  new Promise((resolve, reject) => {
    const server = app.listen(0, "127.0.0.1", (err) => (err ? reject(err) : resolve(server)));
  });

// The resource server is bound first: its URL is the `resource` every token must be issued for.
const mcpApp = express();
const mcpHttp = await listen(mcpApp);
const mcpUrl = new URL(`http://127.0.0.1:${mcpHttp.address().port}/mcp`);

const provider = new DemoInMemoryAuthProvider((resource) => resource?.href === mcpUrl.href);
const asApp = express();
const asHttp = await listen(asApp);
const issuerUrl = new URL(`http://127.0.0.1:${asHttp.address().port}`);
asApp.use(mcpAuthRouter({ provider, issuerUrl, scopesSupported: ["mcp:tools"] }));

const oauthMetadata = createOAuthMetadata({ provider, issuerUrl, scopesSupported: ["mcp:tools"] });
mcpApp.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"], resourceName: "sdk-auth-interop" }));
const bearer = requireBearerAuth({ verifier: provider, requiredScopes: [], resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });

function build() {
  const server = new McpServer({ name: "sdk-auth-interop-server", version: "1.0.0" });
  server.registerTool("echo", { description: "Echoes its text.", inputSchema: { text: z.string() } }, ({ text }, extra) => ({
    content: [{ type: "text", text: `${text} (client ${extra.authInfo?.clientId ?? "?"})` }],
  }));
  return server;
}

const sessions = new Map();
mcpApp.all("/mcp", bearer, express.json(), async (req, res) => {
  const id = req.headers["mcp-session-id"];
  let transport = typeof id === "string" ? sessions.get(id) : undefined;
  if (transport === undefined) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await build().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

process.stdout.write(`listening on ${mcpUrl.href}\n`);
const stop = () => {
  for (const s of [mcpHttp, asHttp]) {
    s.close();
    s.closeAllConnections();
  }
  process.exit(0);
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
