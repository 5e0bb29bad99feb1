/**
 * The benchmark's McpServer for the long tool list: the echo fixture plus `--tools N` extra
 * tools tool_0..tool_{N-1}, each with its own (compiled) input schema, served over stdio.
 * The extra tools match those of scripts/bench/raw-echo-server.mjs exactly.
 *
 *   node --import tsx scripts/bench/ours-server.ts --tools 1000
 */
import { createEchoServer } from "../../fixtures/servers/echo.ts";
import { StdioServerTransport } from "../../src/transport/stdio-server.ts";

const flag = process.argv.indexOf("--tools");
const extra = flag === -1 ? 0 : Number(process.argv[flag + 1]);
if (!Number.isInteger(extra) || extra < 0) {
  process.stderr.write("ours-server: --tools needs a non-negative integer\n");
  process.exit(2);
}

const server = createEchoServer();
for (let i = 0; i < extra; i++) {
  server.tool({ name: `tool_${i}`, description: `Extra tool ${i}.`, inputSchema: { type: "object" } }, () => ({
    content: [{ type: "text", text: `tool ${i}` }],
  }));
}
const session = await server.connect(new StdioServerTransport());
// stdin EOF closes the session; then nothing holds the event loop and the process exits.
session.onclose = () => void server.close();
