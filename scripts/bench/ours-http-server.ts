/**
 * The HTTP section's McpServer: the echo fixture on a StreamableHttpServer (default options:
 * stateful sessions, JSON or SSE replies as the server chooses) listening on 127.0.0.1.
 *
 *   node ours-http-server.js     prints {"url": "http://127.0.0.1:PORT/mcp"}, exits on stdin EOF
 */
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";

const mcp = createEchoServer();
const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t) });
const { url } = await http.listen(0, "127.0.0.1");
process.stdout.write(`${JSON.stringify({ url: url.href })}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  void Promise.all([http.close(), mcp.close()]).finally(() => process.exit(0));
});
