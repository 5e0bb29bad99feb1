/**
 * Runs the transport contract (contract.ts) against every `Transport` implementation, each with
 * a real far end.
 */
import { createServer, type Server, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { InMemoryTransport } from "../../src/transport/memory.ts";
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
