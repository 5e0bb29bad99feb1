/** The manager's `auth` option: a provider per HTTP server, its tokens known to the redactor. */
import assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { McpManager } from "../../src/manager/manager.ts";
import type { HttpAuthProvider } from "../../src/transport/auth-provider.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { echoServer } from "./helpers.ts";

const TOKEN = "tok-fresh-1234567890";

/** An MCP server on 127.0.0.1 that answers 401 to any request without `Bearer <TOKEN>`. */
async function protectedServer() {
  const mcp = echoServer();
  const endpoint = new StreamableHttpServer({ onSession: (t) => mcp.connect(t) });
  const seen: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401, { "www-authenticate": 'Bearer scope="echo"' }).end();
    void endpoint.handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  after(async () => {
    await endpoint.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await mcp.close();
  });
  return { url, seen };
}

test("an HTTP server's 401 goes to its provider; the tool call works; events and logs never show the token", async () => {
  const { url, seen } = await protectedServer();
  const asked: { server: string; status: number }[] = [];
  const providerFor = (server: string): HttpAuthProvider => {
    let token: string | undefined;
    return {
      accessToken: async () => token,
      handleUnauthorized: async (status) => {
        asked.push({ server, status });
        token = TOKEN;
        return token;
      },
    };
  };
  const manager = new McpManager({ auth: (config) => providerFor(config.name) });
  const lines: string[] = [];
  manager.on("log", (entry) => lines.push(JSON.stringify(entry)));
  manager.on("state", (s) => lines.push(JSON.stringify(s)));
  try {
    const [status] = await manager.connect([{ name: "guarded", transport: "http", url, trust: "trusted" }]);
    assert.equal(status?.state, "ready", status?.lastError);
    const result = await manager.callTool("mcp__guarded__echo", { text: `said ${TOKEN}` });
    assert.deepEqual(asked, [{ server: "guarded", status: 401 }], "one challenge, handed to the server's own provider");
    assert.equal(seen[0], undefined);
    assert.ok(seen.slice(1).every((h) => h === `Bearer ${TOKEN}`));
    assert.equal(manager.redactor.redact(`x ${TOKEN} y`), "x [REDACTED] y", "the redactor knows the token");
    assert.doesNotMatch(JSON.stringify(result), new RegExp(TOKEN), "the echo of a token comes back redacted");
    assert.doesNotMatch(lines.join("\n"), new RegExp(TOKEN));
  } finally {
    await manager.close();
  }
});

test("no provider is asked for a stdio server", async () => {
  let asked = 0;
  const manager = new McpManager({
    auth: () => {
      asked++;
      return undefined;
    },
  });
  try {
    await manager.connect([{ name: "local", transport: "stdio", command: process.execPath, args: ["-e", "process.exit(0)"], trust: "trusted", timeout: 5_000, restartOnCrash: false }]);
  } finally {
    await manager.close();
  }
  assert.equal(asked, 0);
});
