/**
 * Runs the transport contract (contract.ts) against every `Transport` implementation, each with
 * a real far end.
 */
import { createServer as createHttpServer, request as httpRequest, type ServerResponse } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { AcpTunnelTransport } from "../../src/acp/acp-tunnel-transport.ts";
import { JsonRpcPeer } from "../../src/jsonrpc/peer.ts";
import { AutoHttpClientTransport } from "../../src/transport/http-auto.ts";
import { StreamableHttpClientTransport } from "../../src/transport/http-client.ts";
import { StreamableHttpSessionTransport } from "../../src/transport/http-session.ts";
import { InMemoryTransport } from "../../src/transport/memory.ts";
import { SseClientTransport } from "../../src/transport/sse-client.ts";
import { SseServer, SseSessionTransport } from "../../src/transport/sse-server.ts";
import { StdioClientTransport } from "../../src/transport/stdio-client.ts";
import { StdioServerTransport } from "../../src/transport/stdio-server.ts";
import { TcpClientTransport, TcpTransport } from "../../src/transport/tcp.ts";
import { transportContract } from "./contract.ts";

transportContract(
  "in-memory",
  async () => {
    const [transport, other] = InMemoryTransport.createLinkedPair();
    return { transport, closePeer: () => other.close(), dispose: async () => undefined };
  },
  { sendsBeforeStart: true },
);

/** A child that reads stdin until it ends, then exits. */
const CHILD = "process.stdin.resume(); process.stdin.on('end', () => process.exit(0));";

function stopPid(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone, as it should be after close().
  }
}

transportContract("stdio client (child process)", async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: ["-e", CHILD], name: "contract", shutdownGraceMs: 1000 });
  return {
    transport,
    closePeer: async () => {
      process.kill(transport.pid!, "SIGTERM");
    },
    dispose: async () => stopPid(transport.pid),
  };
});

transportContract("stdio server (streams)", async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  stdout.resume();
  const transport = new StdioServerTransport({ stdin, stdout });
  return {
    transport,
    closePeer: async () => {
      stdin.end();
    },
    dispose: async () => {
      stdin.destroy();
      stdout.destroy();
    },
  };
});

/** A loopback listener that hands over each accepted socket. */
async function listener(): Promise<{ server: Server; port: number; accepted: Promise<Socket> }> {
  const server = createServer();
  let resolve!: (s: Socket) => void;
  const accepted = new Promise<Socket>((r) => (resolve = r));
  server.once("connection", resolve);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { server, port: address.port, accepted };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((r) => server.close(() => r()));
}

transportContract("tcp (accepted socket)", async () => {
  const { server, port, accepted } = await listener();
  const { connect } = await import("node:net");
  const client = connect({ host: "127.0.0.1", port });
  client.on("error", () => undefined);
  client.resume();
  const socket = await accepted;
  const transport = new TcpTransport(socket, { closeGraceMs: 1000 });
  return {
    transport,
    closePeer: async () => {
      client.end();
    },
    dispose: async () => {
      client.destroy();
      socket.destroy();
      await closeServer(server);
    },
  };
});

transportContract("tcp client", async () => {
  const { server, port, accepted } = await listener();
  const transport = new TcpClientTransport({ port, closeGraceMs: 1000, connectAttempts: 1 });
  const far = accepted.then((s) => {
    s.on("error", () => undefined);
    s.resume();
    // The far end closes its half when ours ends, as a real peer does.
    s.on("end", () => s.end());
    return s;
  });
  return {
    transport,
    closePeer: async () => {
      (await far).end();
    },
    dispose: async () => {
      server.close();
      const pending = server.listening ? closeServer(server) : Promise.resolve();
      void far.then((s) => s.destroy());
      await pending;
    },
  };
});

/**
 * A loopback HTTP server that accepts every POST (202), refuses GET (405: no stream) and
 * answers DELETE: enough far end for a client that only sends notifications.
 */
async function acceptingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method === "POST") res.writeHead(202).end();
      else if (req.method === "DELETE") res.writeHead(200).end();
      else res.writeHead(405, { allow: "POST" }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

transportContract(
  "Streamable HTTP client",
  async () => {
    const far = await acceptingServer();
    const transport = new StreamableHttpClientTransport({ url: far.url, reconnect: { maxAttempts: 0 } });
    return { transport, closePeer: () => far.close(), dispose: () => far.close() };
  },
  { sendsBeforeStart: true, peer: "outlived" },
);

transportContract(
  "auto HTTP client",
  async () => {
    const far = await acceptingServer();
    const transport = new AutoHttpClientTransport({ url: far.url, reconnect: { maxAttempts: 0 } });
    return { transport, closePeer: () => far.close(), dispose: () => far.close() };
  },
  { sendsBeforeStart: true, peer: "outlived" },
);

transportContract("SSE client (against SseServer)", async () => {
  const server = new SseServer({ onSession: (t) => t.start() });
  const { url } = await server.listen();
  const transport = new SseClientTransport({ url: url.href });
  return { transport, closePeer: () => server.close(), dispose: () => server.close() };
});

transportContract("SSE session (server side, a real GET stream)", async () => {
  let handOver!: (res: ServerResponse) => void;
  const response = new Promise<ServerResponse>((r) => (handOver = r));
  const server = createHttpServer((_req, res) => handOver(res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const get = httpRequest({ host: "127.0.0.1", port, path: "/sse", headers: { accept: "text/event-stream" } });
  get.on("error", () => undefined);
  get.on("response", (res) => res.resume());
  get.end();
  const transport = new SseSessionTransport("contract", await response, () => undefined);
  return {
    transport,
    // What SseServer does once onSession has connected the transport.
    afterStart: () => transport.open("/messages?sessionId=contract", 60_000),
    closePeer: async () => {
      get.destroy();
    },
    dispose: async () => {
      get.destroy();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
});

transportContract(
  "Streamable HTTP session (server side)",
  async () => ({ transport: new StreamableHttpSessionTransport({ sessionId: "contract" }), dispose: async () => undefined }),
  { peer: "none" },
);

transportContract(
  "ACP tunnel (over a JsonRpcPeer on an in-memory pair)",
  async () => {
    const [near, far] = InMemoryTransport.createLinkedPair();
    const link = new JsonRpcPeer(near);
    await link.start();
    await far.start();
    const transport = new AcpTunnelTransport({ key: "acp:contract", link });
    return {
      transport,
      dispose: async () => {
        await link.close();
        await far.close();
      },
    };
  },
  { peer: "none" },
);
