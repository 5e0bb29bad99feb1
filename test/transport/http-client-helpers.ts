/**
 * Raw node:http servers for the HTTP client tests: each test writes exactly the behaviour it
 * needs (including misbehaviour), with no dependency on our own HTTP server.
 */
import * as http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after } from "node:test";
import type { JsonRpcId, JsonRpcSuccess } from "../../src/jsonrpc/message.ts";
import { StreamableHttpClientTransport, type HttpClientOptions } from "../../src/transport/http-client.ts";
import type { Transport } from "../../src/transport/transport.ts";
import { until, within } from "../helpers/wait.ts";

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The parsed body, when it was JSON. */
  json: unknown;
}

export type Handler = (req: SeenRequest, res: http.ServerResponse, raw: http.IncomingMessage) => void | Promise<void>;

export interface RawServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  server: http.Server;
  /** Every request, in arrival order. */
  requests: SeenRequest[];
  /** TCP connections accepted so far. */
  connections: number;
  /** Connections still open. */
  open: Set<Socket>;
  /** Resolves once no connection is open. */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1, port 0. Bodies are read in full before `handler` runs. */
export async function rawServer(handler: Handler): Promise<RawServer> {
  const requests: SeenRequest[] = [];
  const open = new Set<Socket>();
  const server = http.createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on("data", (c: Buffer) => chunks.push(c));
    raw.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = body === "" ? undefined : JSON.parse(body);
      } catch {
        json = undefined;
      }
      const seen: SeenRequest = { method: raw.method ?? "", url: raw.url ?? "", headers: raw.headers, body, json };
      requests.push(seen);
      Promise.resolve(handler(seen, res, raw)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(err));
      });
    });
  });
  const state: RawServer = {
    origin: "",
    port: 0,
    server,
    requests,
    connections: 0,
    open,
    allClosed: () => until(() => open.size === 0, "every connection to the raw server to close"),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", (socket: Socket) => {
    state.connections++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  return state;
}

/**
 * The raw servers and client transports of one test file, closed after all its tests
 * (transports first, so a DELETE can still reach its server). Call once, at the top level.
 */
export function closedAfterAll<T extends { close(): Promise<void> }>(): {
  /** Starts a raw server (see {@link rawServer}) to close later. */
  serve(handler: Handler): Promise<RawServer>;
  /** Registers a transport to close later; returns it. */
  keep(transport: T): T;
} {
  const servers: RawServer[] = [];
  const transports: T[] = [];
  after(async () => {
    await Promise.all(transports.map((t) => t.close()));
    await Promise.all(servers.map((s) => s.close()));
  });
  return {
    serve: async (handler) => {
      const s = await rawServer(handler);
      servers.push(s);
      return s;
    },
    keep: (transport) => {
      transports.push(transport);
      return transport;
    },
  };
}

export function sendJson(res: http.ServerResponse, value: unknown, headers: http.OutgoingHttpHeaders = {}, status = 200): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function accepted(res: http.ServerResponse): void {
  res.writeHead(202);
  res.end();
}

export function sseHead(res: http.ServerResponse, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
  res.flushHeaders();
}

/** One SSE event, written by hand (the project's writer is tested on its own). */
export function sseEvent(fields: { id?: string; event?: string; retry?: number; data: string }): string {
  let out = "";
  if (fields.event !== undefined) out += `event: ${fields.event}\n`;
  if (fields.id !== undefined) out += `id: ${fields.id}\n`;
  if (fields.retry !== undefined) out += `retry: ${fields.retry}\n`;
  for (const line of fields.data.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A success response; `id` is whatever the request carried (tests echo it back). */
export function result(id: unknown, value: unknown = {}): JsonRpcSuccess {
  return { jsonrpc: "2.0", id: id as JsonRpcId, result: value };
}

export function initializeResult(id: unknown, protocolVersion = "2025-11-25"): JsonRpcSuccess {
  return result(id, { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "raw", version: "1" } });
}

/** Records what a transport reports, with a way to wait for a message (failing, naming `what`, if none comes). */
export function record(transport: Transport) {
  const messages: unknown[] = [];
  const errors: Error[] = [];
  const closes: (Error | undefined)[] = [];
  const waiters: { match: (m: unknown) => boolean; resolve: (m: unknown) => void }[] = [];
  transport.onmessage = (m) => {
    messages.push(m);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.match(m)) waiters.splice(i, 1)[0]!.resolve(m);
    }
  };
  transport.onerror = (e) => errors.push(e);
  transport.onclose = (reason) => closes.push(reason);
  const waitFor = (match: (m: unknown) => boolean, what = "a matching message"): Promise<unknown> => {
    const seen = messages.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return within(new Promise((resolve) => waiters.push({ match, resolve })), what);
  };
  return { messages, errors, closes, waitFor };
}

export function request(id: number | string, method: string, params?: Record<string, unknown>) {
  return params === undefined ? { jsonrpc: "2.0" as const, id, method } : { jsonrpc: "2.0" as const, id, method, params };
}

export function notification(method: string, params?: Record<string, unknown>) {
  return params === undefined ? { jsonrpc: "2.0" as const, method } : { jsonrpc: "2.0" as const, method, params };
}

export const INIT_PARAMS = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "1" } };

/**
 * {@link closedAfterAll} for Streamable HTTP client transports, plus `client()`: a transport to
 * `url` that is closed after all tests, with the GET stream off unless `options` turn it on.
 * Call once, at the top level of a test file.
 */
export function httpClientsClosedAfterAll(): {
  serve(handler: Handler): Promise<RawServer>;
  client(url: string, options?: Partial<HttpClientOptions>): StreamableHttpClientTransport;
} {
  const { serve, keep } = closedAfterAll<StreamableHttpClientTransport>();
  function client(url: string, options: Partial<HttpClientOptions> = {}): StreamableHttpClientTransport {
    return keep(new StreamableHttpClientTransport({ url, openGetStream: false, ...options }));
  }
  return { serve, client };
}

/** A well-behaved server: session "s-1", JSON replies, 202 for the rest, 405 for GET. */
export function plainServer(answer: (msg: { id: unknown; method: string }) => unknown = (m) => result(m.id, { echo: m.method })): Handler {
  return (req, res) => {
    if (req.method === "DELETE") return void res.writeHead(200).end();
    if (req.method === "GET") return void res.writeHead(405).end();
    const msg = req.json as { id?: unknown; method?: string };
    if (msg.method === "initialize") return sendJson(res, initializeResult(msg.id), { "mcp-session-id": "s-1" });
    if (msg.id === undefined || msg.method === undefined) return accepted(res);
    sendJson(res, answer(msg as { id: unknown; method: string }));
  };
}
