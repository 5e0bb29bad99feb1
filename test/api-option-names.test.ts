/**
 * Options types are named after their class; the old names stay as deprecated aliases for one
 * release. The compiler checks the types (`npm run check`); the test constructs each class from
 * the public entry points with options typed by the old and the new name.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  StdioClientTransport,
  StdioServerTransport,
  type ConnectionOptions,
  type ServerConnectionOptions,
  type StdioClientOptions,
  type StdioClientTransportOptions,
  type StdioServerOptions,
  type StdioServerTransportOptions,
} from "../src/index.ts";
import {
  SseClientTransport,
  StreamableHttpClientTransport,
  type HttpClientOptions,
  type SseClientOptions,
  type SseClientTransportOptions,
  type StreamableHttpClientTransportOptions,
} from "../src/transport/http.ts";
import { Redactor } from "../src/security/redact.ts";

test("transport options are named after their class, and the old names still type-check", () => {
  const http: StreamableHttpClientTransportOptions = { url: "http://127.0.0.1:9/mcp" };
  const httpOld: HttpClientOptions = http;
  const sse: SseClientTransportOptions = { url: "http://127.0.0.1:9/sse" };
  const sseOld: SseClientOptions = sse;
  const stdio: StdioClientTransportOptions = { command: process.execPath };
  const stdioOld: StdioClientOptions = stdio;
  const server: StdioServerTransportOptions = {};
  const serverOld: StdioServerOptions = server;
  const connection: ServerConnectionOptions = { redactor: new Redactor() };
  const connectionOld: ConnectionOptions = connection;
  // Nothing starts: constructors only check and fill their options.
  const made = [
    new StreamableHttpClientTransport(httpOld),
    new SseClientTransport(sseOld),
    new StdioClientTransport(stdioOld),
    new StdioServerTransport(serverOld),
  ].map((t) => t.constructor.name);
  assert.deepEqual(made, ["StreamableHttpClientTransport", "SseClientTransport", "StdioClientTransport", "StdioServerTransport"]);
  assert.equal(connectionOld.redactor instanceof Redactor, true);
});
