/**
 * Raw node:http helpers for the HTTP server tests: every header is chosen by the test, and SSE
 * replies are parsed with our own SseParser as they arrive.
 */
import { request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { SseParser, type SseEvent } from "../../src/jsonrpc/sse.ts";
import { McpServer } from "../../src/mcp/server.ts";
import { StreamableHttpSessionTransport } from "../../src/transport/http-session.ts";
import type { Transport } from "../../src/transport/transport.ts";

export const agent = new Agent({ keepAlive: true });

export const JSON_POST = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export interface SendInit {
  method?: string;
  headers?: Record<string, string>;
  /** A string or bytes go as they are; anything else as JSON. */
  body?: unknown;
  /** Send the headers and this much of the body, then stop (for slow-body tests). */
  partial?: string;
}

/** A live SSE reply. */
export interface SseReply {
  events: SseEvent[];
  /** Everything received, comments included. */
  raw(): string;
  /** The next event not yet taken by `next()`; rejects if the stream ends first. */
  next(): Promise<SseEvent>;
  /** Resolves when the server ends the response (or the connection drops). */
  ended: Promise<void>;
  /** Drops the connection from the client side. */
  close(): void;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, when the reply is not an event stream. */
  body: string;
  sse: SseReply | undefined;
}

/** Sends one request; an event-stream reply is returned live, anything else fully read. */
export function send(url: URL | string, init: SendInit = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? "POST", headers: init.headers, agent }, (res) => {
      if ((res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: "", sse: liveStream(res) });
        return;
      }
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, sse: undefined }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (init.partial !== undefined) {
      req.write(init.partial);
      return;
    }
    const b = init.body;
    req.end(b === undefined || typeof b === "string" || b instanceof Uint8Array ? b : JSON.stringify(b));
  });
}

function liveStream(res: IncomingMessage): SseReply {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let raw = "";
  let taken = 0;
  let finished = false;
  const waiters: Array<() => void> = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  res.on("data", (chunk: Uint8Array) => {
    const text = decoder.decode(chunk, { stream: true });
    raw += text;
    events.push(...parser.feed(text));
    wake();
  });
  const ended = new Promise<void>((resolve) => {
    const done = (): void => {
      finished = true;
      wake();
      resolve();
    };
    res.on("end", done);
    res.on("close", done);
    res.on("error", done);
  });
  return {
    events,
    raw: () => raw,
    ended,
    close: () => res.destroy(),
    async next() {
      for (;;) {
        if (taken < events.length) return events[taken++];
        if (finished) throw new Error(`SSE stream ended after ${events.length} events`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}

/** Parses the data of a non-priming event as JSON. */
export function messageOf(e: SseEvent): Record<string, unknown> {
  return JSON.parse(e.data) as Record<string, unknown>;
}

export interface Session {
  id: string;
  version: string;
  /** Headers for a POST on this session. */
  post(extra?: Record<string, string>): Record<string, string>;
  /** Headers for a GET on this session. */
  get(extra?: Record<string, string>): Record<string, string>;
}

/** initialize + notifications/initialized over raw HTTP. */
export async function initSession(url: URL, version = "2025-11-25", capabilities: object = {}): Promise<Session> {
  const r = await send(url, {
    headers: JSON_POST,
    body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version, capabilities, clientInfo: { name: "raw", version: "0" } } },
  });
  if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${r.body}`);
  const id = r.headers["mcp-session-id"];
  if (typeof id !== "string") throw new Error("initialize: no Mcp-Session-Id");
  const s: Session = {
    id,
    version,
    post: (extra = {}) => ({ ...JSON_POST, "mcp-session-id": id, "mcp-protocol-version": version, ...extra }),
    get: (extra = {}) => ({ accept: "text/event-stream", "mcp-session-id": id, "mcp-protocol-version": version, ...extra }),
  };
  const n = await send(url, { headers: s.post(), body: { jsonrpc: "2.0", method: "notifications/initialized" } });
  if (n.status !== 202) throw new Error(`initialized: HTTP ${n.status}`);
  return s;
}

/** A tool handler's way to wait for the test: `release()` lets the pending call go on. */
export class Gate {
  private waiting: Array<() => void> = [];
  private opened = 0;
  wait(): Promise<void> {
    if (this.opened > 0) {
      this.opened--;
      return Promise.resolve();
    }
    return new Promise((r) => this.waiting.push(r));
  }
  release(): void {
    const w = this.waiting.shift();
    if (w) w();
    else this.opened++;
  }
}

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
const anyObject = { type: "object" };

/**
 * An McpServer with the tools the HTTP tests drive:
 * - `echo {text}`: answers at once (a JSON reply);
 * - `wait`: waits for the gate, then answers "waited" (sends nothing before);
 * - `chatty`: logs, reports progress, logs again, then answers (an SSE reply);
 * - `stepper`: logs "a", waits for the gate, logs "b" and "c", waits again, answers "stepped";
 * - `poll`: closes its own response stream (SEP-1699), logs "after-close", waits, answers "polled";
 * - `sample`: asks the client for a sampling/createMessage and answers with the model name.
 */
export function buildMcp(): { mcp: McpServer; gate: Gate; closeResults: boolean[]; steps: string[] } {
  const mcp = new McpServer({ name: "http-test", version: "1.0.0" });
  const gate = new Gate();
  const closeResults: boolean[] = [];
  /** What the tools have finished sending, in order (e.g. "stepper:c", "stepper:done"). */
  const steps: string[] = [];
  mcp.tool({ name: "echo", inputSchema: anyObject }, (args) => text(String(args.text)));
  mcp.tool({ name: "wait", inputSchema: anyObject }, async () => {
    steps.push("wait:start");
    await gate.wait();
    return text("waited");
  });
  mcp.tool({ name: "chatty", inputSchema: anyObject }, async (_args, ctx) => {
    await ctx.log("info", "one");
    await ctx.sendProgress(1, 2);
    await ctx.log("info", "two");
    return text("chatted");
  });
  mcp.tool({ name: "stepper", inputSchema: anyObject }, async (_args, ctx) => {
    await ctx.log("info", "a");
    await gate.wait();
    await ctx.log("info", "b");
    await ctx.log("info", "c");
    steps.push("stepper:c");
    await gate.wait();
    steps.push("stepper:done");
    return text("stepped");
  });
  mcp.tool({ name: "poll", inputSchema: anyObject }, async (_args, ctx) => {
    const t = ctx.session.transport;
    closeResults.push(t instanceof StreamableHttpSessionTransport && t.closeRequestStream(ctx.requestId));
    await ctx.log("info", "after-close");
    await gate.wait();
    steps.push("poll:done");
    return text("polled");
  });
  mcp.tool({ name: "sample", inputSchema: anyObject }, async (_args, ctx) => {
    const r = await ctx.session.createMessage({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }, { relatedRequestId: ctx.requestId });
    return text(`model=${r.model}`);
  });
  return { mcp, gate, closeResults, steps };
}

/**
 * Starts a server around a fresh {@link buildMcp} fixture: `make` builds it with the given
 * `onSession`, which connects the fixture's McpServer. It listens on 127.0.0.1, port 0;
 * `stop()` closes the server, then the McpServer.
 */
export async function serveFixture<S extends { listen(port: number): Promise<{ url: URL }>; close(): Promise<void> }>(
  make: (onSession: (transport: Transport) => Promise<unknown>) => S,
) {
  const fixture = buildMcp();
  const http = make((t) => fixture.mcp.connect(t));
  const { url } = await http.listen(0);
  return { ...fixture, http, url, stop: async () => (await http.close(), await fixture.mcp.close()) };
}

/** A tools/call body. */
export function call(id: number | string, name: string, args: Record<string, unknown> = {}): object {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}
