// The official MCP TypeScript SDK's client (pinned in scripts/interop/) driving a server of
// ours, for `npm run interop` (scripts/interop-sdk.ts starts it with Node 22).
//
//   node sdk-client.mjs stdio <command> [args...]
//   node sdk-client.mjs http <url>
//
// It connects, lists tools, calls `echo`, reads the first listed resource and gets the first
// listed prompt (when the server has any), then prints one JSON object per step on stdout:
// {"step": "...", "ok": true|false, "detail": "..."}; exits 0 when every step passed.
import { load, step, steps, transport as sdkTransport } from "./sdk-common.mjs";

const { Client } = await load("client/index.js");

const [mode, ...rest] = process.argv.slice(2);

/** The protocol version the server's initialize result named (the SDK keeps it private). */
let negotiated = "?";
function observe(t) {
  let handler;
  Object.defineProperty(t, "onmessage", {
    configurable: true,
    get: () => handler,
    set: (fn) => {
      handler = (message, extra) => {
        const version = message?.result?.protocolVersion;
        if (negotiated === "?" && typeof version === "string") negotiated = version;
        fn?.(message, extra);
      };
    },
  });
  return t;
}

const client = new Client({ name: "sdk-interop-client", version: "1.0.0" });
// Every step has a deadline, so a server that never answers fails the run instead of hanging it.
const limit = { timeout: 10_000 };
try {
  await client.connect(observe(await sdkTransport(mode, rest)), limit);
  step("connect", true, `protocol ${negotiated}, server ${client.getServerVersion()?.name}`);
  const { tools } = await client.listTools(undefined, limit);
  step("tools", tools.some((t) => t.name === "echo"), `${tools.length} tools`);
  const echoed = await client.callTool({ name: "echo", arguments: { text: "hello sdk" } }, undefined, limit);
  const text = echoed.content?.map((b) => (b.type === "text" ? b.text : "")).join("");
  step("echo", text?.includes("hello sdk") === true && echoed.isError !== true, JSON.stringify(text));
  const caps = client.getServerCapabilities() ?? {};
  if (caps.resources) {
    const { resources } = await client.listResources(undefined, limit);
    const first = resources[0];
    const read = first ? await client.readResource({ uri: first.uri }, limit) : undefined;
    step("resource", read !== undefined && read.contents.length > 0, first ? `${first.uri}: ${read?.contents.length} content(s)` : "no resource listed");
  }
  if (caps.prompts) {
    const { prompts } = await client.listPrompts(undefined, limit);
    const first = prompts.find((p) => (p.arguments ?? []).every((a) => !a.required));
    const got = first ? await client.getPrompt({ name: first.name }, limit) : undefined;
    step("prompt", got !== undefined && got.messages.length > 0, first ? `${first.name}: ${got?.messages.length} message(s)` : "no prompt without required arguments");
  }
} catch (err) {
  step(steps.length === 0 ? "connect" : "(run)", false, err instanceof Error ? err.message : String(err));
} finally {
  await client.close().catch(() => {});
}
process.exit(steps.every((s) => s.ok) ? 0 : 1);
