/**
 * `npm run interop`: our McpClient against a real third-party server,
 * `@modelcontextprotocol/server-everything` (pinned in scripts/interop/), in its three modes:
 * stdio, legacy HTTP+SSE (`sse`) and Streamable HTTP (`streamableHttp`).
 *
 * In each mode the client connects, lists the tools, calls `echo`, `get-sum`,
 * `get-tiny-image` and `get-structured-content` (its `structuredContent` validated against
 * the tool's `outputSchema`), reads a resource and gets a prompt. One table sums it up; any
 * failure exits 1.
 *
 * server-everything's HTTP modes listen on every interface, so this script re-runs itself
 * (`--inside-netns`) in a private network namespace where the only interface is loopback, and
 * everything (the servers and our client) happens in there. Server output goes to
 * scripts/interop/results/interop/.
 *
 * Then, outside the namespace (it binds 127.0.0.1 only), the ACP editor interop
 * (scripts/interop-acp.ts) runs and prints its own table: the ACP SDK as the editor against
 * our reference agent. Last, the SDK interop (scripts/interop-sdk.ts, also 127.0.0.1 only): the
 * official MCP SDK's client against our server and our client against a server built on that
 * SDK. Then the gateway interop (scripts/interop-serve.ts, 127.0.0.1 only): the SDK client and
 * the MCP Inspector CLI against `mcp-bridge serve` in front of server-everything and
 * server-filesystem. Any run failing exits 1.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { McpClient } from "../src/mcp/client.ts";
import type { CallToolResult, Tool } from "../src/mcp/types.ts";
import { compileSchema, formatSchemaErrors } from "../src/schema/validate.ts";
import { StreamableHttpClientTransport } from "../src/transport/http-client.ts";
import { AutoHttpClientTransport } from "../src/transport/http-auto.ts";
import { SseClientTransport } from "../src/transport/sse-client.ts";
import { StdioClientTransport } from "../src/transport/stdio.ts";
import type { Transport } from "../src/transport/transport.ts";
import { ensureInteropPackage, finish, formatTable, INTEROP_DIR, NODE22, node22Env, ROOT } from "./conformance.ts";
import { runAcpInterop } from "./interop-acp.ts";
import { interopClient, runSdkInterop } from "./interop-sdk.ts";
import { runServeInterop } from "./interop-serve.ts";
import { assertNetnsAvailable, inNetns, processGroupsForScript, ProcessGroups, type Started } from "./netns.ts";

const EVERYTHING_JS = join(INTEROP_DIR, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const RESULTS_DIR = join(INTEROP_DIR, "results", "interop");
const MODES = ["stdio", "sse", "streamableHttp"] as const;
type Mode = (typeof MODES)[number];

const STEPS = ["connect", "tools", "echo", "get-sum", "get-tiny-image", "get-structured-content", "resource", "prompt"] as const;
type Step = (typeof STEPS)[number];

interface ModeReport {
  /** The server's mode, and which of our transports reached it. */
  mode: string;
  version: string;
  results: Map<Step, { ok: boolean; detail: string }>;
}

function textOf(result: CallToolResult): string {
  return result.content.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("");
}

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(what);
}

/** The tools list, after the server had a moment to add the tools it registers post-handshake. */
async function settledTools(client: McpClient): Promise<Tool[]> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 500);
    client.on("toolsListChanged", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return client.listTools();
}

/**
 * Runs every step in order; a failed step is recorded and the next one still runs.
 * `checkTransport` vets the transport once connected (e.g. what `auto` selected).
 */
async function exercise(
  mode: string,
  makeTransport: () => Transport,
  checkTransport: (t: Transport) => string = () => "",
): Promise<ModeReport> {
  const report: ModeReport = { mode, version: "-", results: new Map() };
  const step = async (name: Step, body: () => Promise<string>): Promise<boolean> => {
    try {
      report.results.set(name, { ok: true, detail: await body() });
      return true;
    } catch (err) {
      report.results.set(name, { ok: false, detail: err instanceof Error ? err.message : String(err) });
      return false;
    }
  };
  const client = interopClient();
  const connected = await step("connect", async () => {
    const transport = makeTransport();
    const init = await client.connect(transport);
    report.version = init.protocolVersion;
    const note = checkTransport(transport);
    return `${init.serverInfo.name} ${init.serverInfo.version}, protocol ${init.protocolVersion}${note}`;
  });
  if (!connected) return report;
  try {
    let tools: Tool[] = [];
    await step("tools", async () => {
      tools = await settledTools(client);
      const names = new Set(tools.map((t) => t.name));
      const missing = ["echo", "get-sum", "get-tiny-image", "get-structured-content"].filter((n) => !names.has(n));
      expect(missing.length === 0, `missing tools: ${missing.join(", ")}`);
      return `${tools.length} tools`;
    });
    await step("echo", async () => {
      const said = textOf(await client.callTool("echo", { message: "hello from mcp-bridge" }));
      expect(said === "Echo: hello from mcp-bridge", `echo answered ${JSON.stringify(said)}`);
      return said;
    });
    await step("get-sum", async () => {
      const said = textOf(await client.callTool("get-sum", { a: 19, b: 23 }));
      expect(said.includes("is 42"), `get-sum answered ${JSON.stringify(said)}`);
      return said;
    });
    await step("get-tiny-image", async () => {
      const r = await client.callTool("get-tiny-image", {});
      const image = r.content.find((b) => b.type === "image");
      expect(image !== undefined && image.type === "image", "no image content");
      const png = image !== undefined && image.type === "image" ? image : undefined;
      expect(png?.mimeType === "image/png", `mimeType ${String(png?.mimeType)}`);
      // Base64 of the PNG signature (89 50 4E 47 0D 0A 1A 0A).
      expect(png?.data.startsWith("iVBORw0KGgo") === true, "data is not a base64 PNG");
      return `image/png, ${png?.data.length ?? 0} base64 chars`;
    });
    await step("get-structured-content", async () => {
      // A fresh listing right before the call: the client checks structuredContent against
      // the outputSchema it remembers from the last tools/list (a list_changed forgets it).
      const listed = await client.listTools();
      const tool = listed.find((t) => t.name === "get-structured-content");
      expect(tool?.outputSchema !== undefined, "get-structured-content declares no outputSchema");
      const r = await client.callTool("get-structured-content", { location: "Chicago" });
      const verdict = compileSchema(tool?.outputSchema)(r.structuredContent);
      expect(verdict.valid, `structuredContent does not match outputSchema: ${formatSchemaErrors(verdict.errors, 3)}`);
      const sc = r.structuredContent as { temperature?: unknown } | undefined;
      expect(sc?.temperature === 36, `structuredContent ${JSON.stringify(sc)}`);
      return `valid against outputSchema: ${JSON.stringify(sc)}`;
    });
    await step("resource", async () => {
      const resources = await client.listResources();
      const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/document/"));
      expect(doc !== undefined, `no static document among ${resources.length} resources`);
      const read = await client.readResource(doc?.uri ?? "");
      const first = read.contents[0];
      const size = first !== undefined && "text" in first ? first.text.length : 0;
      expect(size > 0, `${String(doc?.uri)} has no text`);
      return `${String(doc?.uri)}: ${size} chars`;
    });
    await step("prompt", async () => {
      const prompts = await client.listPrompts();
      expect(prompts.some((p) => p.name === "args-prompt"), "no args-prompt");
      const got = await client.getPrompt("args-prompt", { city: "Paris", state: "Texas" });
      const first = got.messages[0]?.content;
      const said = first?.type === "text" ? first.text : JSON.stringify(first);
      expect(said === "What's weather in Paris, Texas?", `args-prompt said ${JSON.stringify(said)}`);
      return said;
    });
  } finally {
    await client.close();
  }
  return report;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, server: Started, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (server.child.exitCode !== null) throw new Error(`server-everything exited early:\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`server-everything did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `auto` must pick the transport the server speaks. */
function selected(expected: "sse" | "streamable-http"): (t: Transport) => string {
  return (t) => {
    const got = t instanceof AutoHttpClientTransport ? t.selected : undefined;
    expect(got === expected, `auto selected ${String(got)}, expected ${expected}`);
    return `, auto selected ${expected}`;
  };
}

/** One server per mode; over HTTP our concrete transport first, then `auto` against it. */
async function runMode(groups: ProcessGroups, mode: Mode): Promise<ModeReport[]> {
  if (mode === "stdio") {
    let stderr = "";
    const report = await exercise(
      mode,
      () =>
        new StdioClientTransport({
          command: NODE22,
          args: [EVERYTHING_JS, "stdio"],
          name: "server-everything",
          onStderr: (line) => void (stderr += `${line}\n`),
        }),
    );
    writeFileSync(join(RESULTS_DIR, "stdio-server.log"), stderr);
    return [report];
  }
  const port = await freePort();
  const server = groups.start(`server-everything ${mode}`, NODE22, [EVERYTHING_JS, mode], {
    cwd: INTEROP_DIR,
    env: node22Env({ PORT: String(port) }),
  });
  try {
    await waitForPort(port, server, 20_000);
    const url = mode === "sse" ? `http://127.0.0.1:${port}/sse` : `http://127.0.0.1:${port}/mcp`;
    const direct = await exercise(mode, () =>
      mode === "sse" ? new SseClientTransport({ url }) : new StreamableHttpClientTransport({ url }),
    );
    const auto = await exercise(
      `${mode} via auto`,
      () => new AutoHttpClientTransport({ url }),
      selected(mode === "sse" ? "sse" : "streamable-http"),
    );
    return [direct, auto];
  } catch (err) {
    const report: ModeReport = { mode, version: "-", results: new Map() };
    report.results.set("connect", { ok: false, detail: err instanceof Error ? err.message : String(err) });
    return [report];
  } finally {
    await groups.stop(server);
    writeFileSync(join(RESULTS_DIR, `${mode}-server.log`), server.output());
  }
}

/** Inside the namespace: every mode, the table, the exit code. */
async function inside(): Promise<number> {
  const groups = new ProcessGroups();
  process.once("exit", () => groups.killAllNow());
  const reports: ModeReport[] = [];
  try {
    for (const mode of MODES) reports.push(...(await runMode(groups, mode)));
  } finally {
    await groups.stopAll();
  }
  const cell = (r: ModeReport, s: Step): string => {
    const v = r.results.get(s);
    return v === undefined ? "skipped" : v.ok ? "ok" : "FAIL";
  };
  const passed = (r: ModeReport): boolean => STEPS.every((s) => r.results.get(s)?.ok === true);
  const table = formatTable(
    ["mode", "protocol", ...STEPS, "result"],
    reports.map((r) => [r.mode, r.version, ...STEPS.map((s) => cell(r, s)), passed(r) ? "PASS" : "FAIL"]),
  );
  process.stdout.write(`\nInterop: mcp-bridge McpClient vs @modelcontextprotocol/server-everything 2026.8.31\n\n${table}\n\n`);
  for (const r of reports) {
    for (const s of STEPS) {
      const v = r.results.get(s);
      // Failures in full; of the successes only what was reached and how.
      if (v?.ok === true && s !== "connect") continue;
      const status = v?.ok === true ? "ok  " : "FAIL";
      process.stdout.write(`${status} ${r.mode} ${s}: ${v?.detail ?? "not run (an earlier step failed)"}\n`);
    }
  }
  process.stdout.write(`server logs: ${join("scripts", "interop", "results", "interop")}\n`);
  return reports.every(passed) ? 0 : 1;
}

/** Outside: install, check the namespace can be made, run `inside` in it, relay its output. */
async function outside(): Promise<number> {
  ensureInteropPackage();
  assertNetnsAvailable();
  rmSync(RESULTS_DIR, { recursive: true, force: true });
  mkdirSync(RESULTS_DIR, { recursive: true });
  const groups = processGroupsForScript();
  const self = fileURLToPath(import.meta.url);
  const { command, args } = inNetns([process.execPath, "--import", "tsx", self, "--inside-netns"]);
  const run = groups.start("interop (netns)", command, args, { cwd: ROOT }, true);
  const { code, timedOut } = await finish(groups, run, 300_000);
  if (timedOut) process.stdout.write("FAIL interop timed out after 300 s\n");
  // Runs whatever the MCP interop gave, so that one run reports all four.
  const acp = await runAcpInterop();
  const sdk = await runSdkInterop();
  const gateway = await runServeInterop();
  return code === 0 && !timedOut && acp === 0 && sdk === 0 && gateway === 0 ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  (process.argv.includes("--inside-netns") ? inside() : outside()).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`interop: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
