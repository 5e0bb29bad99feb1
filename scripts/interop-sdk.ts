/**
 * SDK interop, part of `npm run interop`: the official MCP TypeScript SDK
 * (`@modelcontextprotocol/sdk`, pinned in scripts/interop/) on either side of us.
 *
 *   - the SDK's client against our echo server (fixtures/servers/echo.ts) over stdio and over
 *     our Streamable HTTP server: the endpoint that also serves 2026-07-28 must still serve an
 *     SDK client that only knows the 2025 session era;
 *   - our McpClient against a server written with the SDK (scripts/interop-sdk/sdk-server.mjs)
 *     over stdio and Streamable HTTP: a server of the 2025 era, which a dual-era client must
 *     reach by falling back to `initialize`;
 *   - our McpClient against our own server over Streamable HTTP, where it reports the era the
 *     two agree on;
 *   - our McpClient with an `OAuthProvider` against an OAuth-protected server made only of the
 *     SDK's parts (scripts/interop-sdk/sdk-auth-server.mjs: its authorization server router with
 *     its demo provider, its resource metadata router and `requireBearerAuth`): discovery,
 *     dynamic registration, authorization code with PKCE and `resource`, then the calls. The
 *     demo provider consents at once, so the browser step is one GET whose redirect is read.
 *
 * Everything binds 127.0.0.1 only, so no network namespace is needed. The SDK's side runs on
 * the pinned Node 22, as the other interop peers do. Prints one table; any failure exits 1.
 *
 *   npx tsx scripts/interop-sdk.ts
 */
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createEchoServer } from "../fixtures/servers/echo.ts";
import { OAuthProvider } from "../src/auth/oauth-provider.ts";
import { McpClient } from "../src/mcp/client.ts";
import type { CallToolResult } from "../src/mcp/types.ts";
import { StreamableHttpClientTransport } from "../src/transport/http-client.ts";
import { StreamableHttpServer } from "../src/transport/http-server.ts";
import { StdioClientTransport } from "../src/transport/stdio.ts";
import type { Transport } from "../src/transport/transport.ts";
import { ensureInteropPackage, finish, formatTable, NODE22, node22Env, ROOT } from "./conformance.ts";
import { processGroupsForScript, type ProcessGroups, type Started } from "./netns.ts";

const SDK_DIR = join(ROOT, "scripts", "interop-sdk");
const SDK_CLIENT = join(SDK_DIR, "sdk-client.mjs");
const SDK_SERVER = join(SDK_DIR, "sdk-server.mjs");
const SDK_AUTH_SERVER = join(SDK_DIR, "sdk-auth-server.mjs");
const ECHO_SERVER = join(ROOT, "fixtures", "servers", "echo.ts");
/** Each row's deadline: a peer that never answers fails its row instead of hanging the run. */
const ROW_LIMIT_MS = 60_000;

/** One row of the table: who talked to whom, over what, and how each step went. */
interface Row {
  client: string;
  server: string;
  wire: string;
  protocol: string;
  steps: { step: string; ok: boolean; detail: string }[];
}

/** Our dual-era client must fall back to the 2025 era against the SDK's servers, which speak only it. */
const legacy = (v: string): string | undefined => (v.startsWith("2025-") || v === "2024-11-05" ? undefined : `negotiated ${v}, expected a 2025 version (fallback)`);
/** ...and speak the stateless era to ours, which offers it on the same endpoint. */
const modern = (v: string): string | undefined => (v === "2026-07-28" ? undefined : `negotiated ${v}, expected 2026-07-28`);

const passed = (r: Row): boolean => r.steps.length > 0 && r.steps.every((s) => s.ok);

/** The SDK client (a Node 22 child) against `target`; its JSON lines become the row's steps. */
async function sdkClientRow(groups: ProcessGroups, wire: string, target: readonly string[]): Promise<Row> {
  const row: Row = { client: "SDK client", server: "mcp-bridge McpServer", wire, protocol: "-", steps: [] };
  const child = groups.start(`sdk-client ${wire}`, NODE22, [SDK_CLIENT, ...target], { cwd: ROOT, env: node22Env() });
  const { code, timedOut } = await finish(groups, child, ROW_LIMIT_MS);
  for (const line of child.output().split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const s = JSON.parse(line) as Row["steps"][number];
      row.steps.push(s);
      const m = s.step === "connect" ? /protocol (\S+),/.exec(s.detail) : null;
      if (m) row.protocol = m[1]!;
    } catch {
      // a line of the server's stderr that happens to start with "{": not a step
    }
  }
  if (timedOut) row.steps.push({ step: "(run)", ok: false, detail: `no end within ${ROW_LIMIT_MS / 1000} s` });
  else if (code !== 0 && row.steps.every((s) => s.ok)) row.steps.push({ step: "(run)", ok: false, detail: `exit ${String(code)}: ${child.output().slice(-500)}` });
  return row;
}

const textOf = (r: CallToolResult): string => r.content.map((b) => (b.type === "text" ? b.text : "")).join("");

/** Our McpClient as every interop run uses it: its own name, and time limits for slow peers. */
export function interopClient(): McpClient {
  return new McpClient({
    clientInfo: { name: "mcp-bridge-interop", version: "1.0.0" },
    connectTimeoutMs: 20_000,
    requestTimeoutMs: 15_000,
    toolTimeoutMs: 15_000,
  });
}

/** Our McpClient through `transport`: connect, tools, echo, a resource, a prompt. */
async function ourClientRow(
  server: string,
  wire: string,
  transport: () => Transport,
  expectProtocol?: (v: string) => string | undefined,
  steps: readonly string[] = ["tools", "echo", "resource", "prompt"],
): Promise<Row> {
  const row: Row = { client: "mcp-bridge McpClient", server, wire, protocol: "-", steps: [] };
  const step = async (name: string, body: () => Promise<string>): Promise<boolean> => {
    try {
      row.steps.push({ step: name, ok: true, detail: await body() });
      return true;
    } catch (err) {
      row.steps.push({ step: name, ok: false, detail: err instanceof Error ? err.message : String(err) });
      return false;
    }
  };
  const client = interopClient();
  try {
    const connected = await step("connect", async () => {
      const init = await client.connect(transport());
      row.protocol = init.protocolVersion;
      const wrong = expectProtocol?.(init.protocolVersion);
      if (wrong !== undefined) throw new Error(wrong);
      return `${init.serverInfo.name}, protocol ${init.protocolVersion}`;
    });
    if (!connected) return row;
    await step("tools", async () => {
      const tools = await client.listTools();
      if (!tools.some((t) => t.name === "echo")) throw new Error(`no echo among ${tools.map((t) => t.name).join(", ")}`);
      return `${tools.length} tools`;
    });
    await step("echo", async () => {
      const said = textOf(await client.callTool("echo", { text: "hello from mcp-bridge" }));
      if (!said.includes("hello from mcp-bridge")) throw new Error(`echo answered ${JSON.stringify(said)}`);
      return JSON.stringify(said);
    });
    if (steps.includes("resource")) await step("resource", async () => {
      const [first] = await client.listResources();
      if (first === undefined) throw new Error("no resource listed");
      const read = await client.readResource(first.uri);
      if (read.contents.length === 0) throw new Error(`${first.uri} has no contents`);
      return `${first.uri}: ${read.contents.length} content(s)`;
    });
    if (steps.includes("prompt")) await step("prompt", async () => {
      const prompts = await client.listPrompts();
      const first = prompts.find((p) => (p.arguments ?? []).every((a) => a.required !== true));
      if (first === undefined) throw new Error("no prompt without required arguments");
      const got = await client.getPrompt(first.name, {});
      if (got.messages.length === 0) throw new Error(`${first.name} has no messages`);
      return `${first.name}: ${got.messages.length} message(s)`;
    });
  } finally {
    await client.close();
  }
  return row;
}

/** The browser step, headless: the demo authorization server redirects at once; its Location is the answer. */
async function consent(authorizationUrl: string): Promise<string> {
  const res = await fetch(authorizationUrl, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
  await res.body?.cancel();
  const location = res.headers.get("location");
  if (location === null) throw new Error(`the authorization endpoint answered ${res.status} without a redirect`);
  return location;
}

/** Our client's OAuth flow against the SDK's protected server. */
async function oauthRow(groups: ProcessGroups): Promise<Row> {
  const server = groups.start("sdk-auth-server", NODE22, [SDK_AUTH_SERVER], { cwd: ROOT, env: node22Env() });
  try {
    const url = await listeningUrl(server, 20_000);
    const auth = new OAuthProvider({ serverUrl: url, redirectUri: "http://127.0.0.1:9/callback", authorize: consent, offlineAccess: false });
    return await ourClientRow("SDK auth router + requireBearerAuth", "streamable http, OAuth", () => new StreamableHttpClientTransport({ url, auth }), legacy, ["echo"]);
  } catch (err) {
    return { client: "mcp-bridge McpClient", server: "SDK auth router + requireBearerAuth", wire: "streamable http, OAuth", protocol: "-", steps: [{ step: "connect", ok: false, detail: String(err) }] };
  } finally {
    await groups.stop(server);
  }
}

/** Waits for the first `listening on <url>` line of a started server. */
function listeningUrl(server: Started, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: server.child.stdout! });
    const timer = setTimeout(() => done(new Error(`${server.name} did not listen within ${timeoutMs} ms: ${server.output().slice(-500)}`)), timeoutMs);
    const done = (err: Error | undefined, url?: string): void => {
      clearTimeout(timer);
      lines.close();
      if (err) reject(err);
      else resolve(url!);
    };
    lines.on("line", (line) => {
      const m = /^listening on (\S+)/.exec(line);
      if (m) done(undefined, m[1]);
    });
    void server.exited.then(({ code, signal }) => done(new Error(`${server.name} exited (${String(code ?? signal)}) before listening: ${server.output().slice(-500)}`)));
  });
}

/** Runs every row; prints the table and the failures; resolves 0 when all passed, else 1. */
export async function runSdkInterop(): Promise<number> {
  ensureInteropPackage();
  const groups = processGroupsForScript();
  const echo = createEchoServer();
  const ours = new StreamableHttpServer({ path: "/mcp", onSession: (transport) => echo.connect(transport) });
  const rows: Row[] = [];
  const started = Date.now();
  try {
    const { url } = await ours.listen(0, "127.0.0.1");
    rows.push(await sdkClientRow(groups, "stdio", ["stdio", NODE22, ECHO_SERVER]));
    rows.push(await sdkClientRow(groups, "streamable http", ["http", url.href]));

    rows.push(await ourClientRow("SDK McpServer", "stdio", () => new StdioClientTransport({ command: NODE22, args: [SDK_SERVER, "stdio"], name: "sdk-server" }), legacy));
    const sdkHttp = groups.start("sdk-server http", NODE22, [SDK_SERVER, "http"], { cwd: ROOT, env: node22Env() });
    try {
      const sdkUrl = await listeningUrl(sdkHttp, 20_000);
      rows.push(await ourClientRow("SDK McpServer", "streamable http", () => new StreamableHttpClientTransport({ url: sdkUrl }), legacy));
    } catch (err) {
      rows.push({ client: "mcp-bridge McpClient", server: "SDK McpServer", wire: "streamable http", protocol: "-", steps: [{ step: "connect", ok: false, detail: String(err) }] });
    } finally {
      await groups.stop(sdkHttp);
    }
    rows.push(await ourClientRow("mcp-bridge McpServer", "streamable http", () => new StreamableHttpClientTransport({ url: url.href }), modern));
    rows.push(await oauthRow(groups));
  } finally {
    await Promise.all([ours.close(), echo.close()]);
    await groups.stopAll();
  }
  const table = formatTable(
    ["client", "server", "wire", "protocol", "steps", "result"],
    rows.map((r) => [r.client, r.server, r.wire, r.protocol, r.steps.map((s) => (s.ok ? s.step : `${s.step}:FAIL`)).join(" "), passed(r) ? "PASS" : "FAIL"]),
  );
  const out = [`\nSDK interop: @modelcontextprotocol/sdk (scripts/interop/) and mcp-bridge, both ways (${((Date.now() - started) / 1000).toFixed(1)} s)\n`, table, ""];
  for (const r of rows) for (const s of r.steps) if (!s.ok) out.push(`FAIL ${r.client} -> ${r.server} (${r.wire}) ${s.step}: ${s.detail}`);
  process.stdout.write(`${out.join("\n")}\n`);
  return rows.every(passed) ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  runSdkInterop().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`interop-sdk: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
