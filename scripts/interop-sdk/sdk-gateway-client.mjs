// The official MCP TypeScript SDK's client (pinned in scripts/interop/) driving
// `mcp-bridge serve` in front of server-everything and server-filesystem, for
// `npm run interop` (scripts/interop-serve.ts starts it with Node 22).
//
//   node sdk-gateway-client.mjs <file> stdio <command> [args...]
//   node sdk-gateway-client.mjs <file> http <url>
//
// <file> is a text file the filesystem upstream may read (its text is what the read must give).
// Steps: connect; tools of both upstreams under the gateway's names; server-everything's echo;
// the filesystem's read_text_file of <file>; a resource of server-everything read back under
// the gateway's URI; a prompt; and a sampling request that server-everything sends during its
// tool call, answered by this client's sampling handler (forwarded by the gateway). Prints one
// JSON object per step: {"step": "...", "ok": true|false, "detail": "..."}; exits 0 when all passed.
import { readFileSync } from "node:fs";
import { load, step, steps, transport as sdkTransport } from "./sdk-common.mjs";

const { Client } = await load("client/index.js");
const { CreateMessageRequestSchema } = await load("types.js");

const [file, mode, ...rest] = process.argv.slice(2);

const textOf = (result) => (result.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");

const client = new Client({ name: "sdk-gateway-client", version: "1.0.0" }, { capabilities: { sampling: {} } });
let sampled = 0;
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  sampled++;
  const asked = request.params.messages[0]?.content?.text ?? "";
  return { role: "assistant", model: "sdk-gateway-model", content: { type: "text", text: `the SDK client sampled: ${asked}` } };
});
const limit = { timeout: 15_000 };
try {
  await client.connect(await sdkTransport(mode, rest), limit);
  step("connect", true, `server ${client.getServerVersion()?.name}`);
  const { tools } = await client.listTools(undefined, limit);
  const names = new Set(tools.map((t) => t.name));
  const missing = ["mcp__everything__echo", "mcp__everything__trigger-sampling-request", "mcp__filesystem__read_text_file"].filter((n) => !names.has(n));
  step("tools", missing.length === 0, missing.length === 0 ? `${tools.length} tools` : `missing ${missing.join(", ")}`);
  const echoed = textOf(await client.callTool({ name: "mcp__everything__echo", arguments: { message: "hello sdk" } }, undefined, limit));
  step("echo", echoed === "Echo: hello sdk", JSON.stringify(echoed));
  const read = await client.callTool({ name: "mcp__filesystem__read_text_file", arguments: { path: file } }, undefined, limit);
  const expected = readFileSync(file, "utf8");
  step("fs read", read.isError !== true && textOf(read) === expected, JSON.stringify(textOf(read)));
  const { resources } = await client.listResources(undefined, limit);
  const doc = resources.find((r) => r.uri.startsWith("mcp-bridge://everything/"));
  const contents = doc ? (await client.readResource({ uri: doc.uri }, limit)).contents : [];
  step("resource", contents.length > 0 && contents[0].uri === doc.uri, doc ? `${doc.uri}: ${contents.length} content(s)` : `no mcp-bridge://everything/ resource among ${resources.length}`);
  const { prompts } = await client.listPrompts(undefined, limit);
  const prompt = prompts.find((p) => p.name.startsWith("mcp__everything__") && (p.arguments ?? []).every((a) => !a.required));
  const got = prompt ? await client.getPrompt({ name: prompt.name }, limit) : undefined;
  step("prompt", got !== undefined && got.messages.length > 0, prompt ? `${prompt.name}: ${got?.messages.length} message(s)` : "no prompt without required arguments");
  const sampling = await client.callTool({ name: "mcp__everything__trigger-sampling-request", arguments: { prompt: "two plus two", maxTokens: 10 } }, undefined, limit);
  const said = textOf(sampling);
  step("sampling", sampling.isError !== true && sampled === 1 && said.includes("the SDK client sampled"), said.slice(0, 200));
} catch (err) {
  step(steps.length === 0 ? "connect" : "(run)", false, err instanceof Error ? err.message : String(err));
} finally {
  await client.close().catch(() => {});
}
process.exit(steps.every((s) => s.ok) ? 0 : 1);
