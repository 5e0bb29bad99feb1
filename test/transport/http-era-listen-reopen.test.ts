/**
 * McpClient reopens a `subscriptions/listen` stream our server ended (stateless era, over
 * Streamable HTTP): after a delay that doubles, a bounded number of times in a row, and never
 * after close().
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { McpClient } from "../../src/mcp/client.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpServer, StreamableHttpSessionTransport } from "../../src/transport/http-server.ts";
import { until } from "../helpers/wait.ts";

/** Our server behind a node:http front that counts listen POSTs and can refuse them (503). */
async function listenServer() {
  const mcp = new McpServer({ name: "listen-test", version: "1.0.0" });
  mcp.tool({ name: "noop", inputSchema: { type: "object" } }, () => ({ content: [] }));
  const transports: StreamableHttpSessionTransport[] = [];
  const http = new StreamableHttpServer({
    onSession: async (t) => {
      transports.push(t as StreamableHttpSessionTransport);
      await mcp.connect(t);
    },
  });
  const state = { listenPosts: 0, refuse: false };
  const front: Server = createServer((req, res) => {
    if (req.headers["mcp-method"] === "subscriptions/listen") {
      state.listenPosts++;
      if (state.refuse) return void res.writeHead(503, { "content-type": "text/plain" }).end("not now");
    }
    void http.handle(req, res);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  const url = new URL(`http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`);
  /** Ends the listen streams open now, as a server going away would. */
  const endStreams = async () => {
    const open = transports.filter((t) => !t.closed);
    assert.ok(open.length > 0, "a listen stream is open");
    await Promise.all(open.map((t) => t.close()));
  };
  const stop = async () => {
    await http.close();
    await mcp.close();
    front.closeAllConnections();
    await new Promise<void>((resolve) => front.close(() => resolve()));
  };
  return { mcp, url, state, endStreams, stop };
}

function client(maxAttempts = 3) {
  const c = new McpClient({ clientInfo: { name: "t", version: "1" }, era: "modern", listenReconnect: { initialDelayMs: 5, maxDelayMs: 40, maxAttempts } });
  const errors: Error[] = [];
  c.on("error", (e) => void errors.push(e));
  return { c, errors };
}

const servers: Array<{ stop(): Promise<void> }> = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

test("a listen stream the server ends is opened again, and the new one carries list changes", async () => {
  const s = await listenServer();
  servers.push(s);
  const { c } = client();
  await c.connect(new StreamableHttpClientTransport({ url: s.url }));
  assert.equal(s.state.listenPosts, 1);
  await s.endStreams();
  await until(() => s.state.listenPosts === 2 && s.mcp.sessions.size === 1, "the stream to be opened again");
  const changed = new Promise<void>((resolve) => c.on("toolsListChanged", () => resolve()));
  // The acknowledgement of the new stream may still be on its way: change the list until it lands.
  let n = 0;
  const timer = setInterval(() => s.mcp.tool({ name: `late${n++}`, inputSchema: { type: "object" } }, () => ({ content: [] })), 10);
  await changed;
  clearInterval(timer);
  await c.close();
});

test("reopening is bounded: after maxAttempts refusals in a row the stream is given up, with an error event", async () => {
  const s = await listenServer();
  servers.push(s);
  const { c, errors } = client(3);
  await c.connect(new StreamableHttpClientTransport({ url: s.url }));
  s.state.refuse = true;
  await s.endStreams();
  await until(() => errors.some((e) => /not opening it again/.test(e.message)), "the stream to be given up");
  // The first stream, then exactly 3 attempts.
  assert.equal(s.state.listenPosts, 4);
  const givenUp = errors.find((e) => /not opening it again/.test(e.message))!;
  assert.equal((givenUp as { code?: string }).code, "CLOSED");
  assert.match(givenUp.message, /3 times in a row/);
  // Requests still work: only the stream is given up.
  assert.deepEqual((await c.callTool("noop", {})).content, []);
  await c.close();
});

test("close() stops a pending reopen", async (t) => {
  const s = await listenServer();
  servers.push(s);
  const c = new McpClient({ clientInfo: { name: "t", version: "1" }, era: "modern", listenReconnect: { initialDelayMs: 50, maxDelayMs: 50, maxAttempts: 5 } });
  let ended!: () => void;
  const streamEnded = new Promise<void>((resolve) => (ended = resolve));
  c.on("error", () => ended());
  await c.connect(new StreamableHttpClientTransport({ url: s.url }));
  // The reopen's timer is the test's to run.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  await s.endStreams();
  await streamEnded; // the end was seen: the reopen now waits for its timer
  await c.close();
  t.mock.timers.tick(1000);
  t.mock.timers.reset();
  assert.equal(s.state.listenPosts, 1, "no stream opened after close()");
});
