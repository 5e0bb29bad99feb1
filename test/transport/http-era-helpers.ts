/**
 * A loopback Streamable HTTP server around an McpServer for the stateless-era tests, and raw
 * POSTs carrying the era's headers and `_meta`.
 */
import { McpServer, type Registration } from "../../src/mcp/server.ts";
import { StreamableHttpServer } from "../../src/transport/http-server.ts";
import { JSON_POST, send, type Reply } from "./http-test-helpers.ts";

export const V = "2026-07-28";

/** `_meta` of a well-formed stateless request. */
export function eraMeta(capabilities: object = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
    ...extra,
  };
}

/** Headers mirroring `method` and `name` (for tools/call, prompts/get, resources/read). */
export function eraHeaders(method: string, name?: string, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { ...JSON_POST, "mcp-protocol-version": V, "mcp-method": method, ...extra };
  if (name !== undefined) h["mcp-name"] = name;
  return h;
}

/** POSTs one stateless request with matching headers; `params._meta` defaults to {@link eraMeta}. */
export function eraPost(url: URL, id: number | string, method: string, params: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<Reply> {
  const name = typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined;
  const body = { jsonrpc: "2.0", id, method, params: { _meta: eraMeta(), ...params } };
  return send(url, { headers: headers ?? eraHeaders(method, name), body });
}

/** The JSON body of a reply (the last SSE event's data for a stream). */
export async function bodyOf(r: Reply): Promise<Record<string, any>> {
  if (r.sse === undefined) return JSON.parse(r.body) as Record<string, any>;
  await r.sse.ended;
  return JSON.parse(r.sse.events[r.sse.events.length - 1]!.data) as Record<string, any>;
}

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
const NO_ARGS = { type: "object" };

/**
 * An McpServer with: `echo {text}`; `talk` (logs at info, then answers); `greet` (asks the
 * user's name, key `name`, then greets); `two_steps` (asks `first`, then `second`); `sample`
 * (needs sampling); `hang` (waits for its signal, noting `hang:start` and
 * `hang:aborted` in `events`); `pair` (asks `who` and `where`, roots, at once); `toggle` (adds or removes tool `extra`); resource `test://a`; prompt
 * `ask_prompt` (asks `topic`). Served on 127.0.0.1; `stop()` closes both.
 */
export async function serveEra() {
  const mcp = new McpServer({ name: "era-test", version: "2.0.0" }, { cache: { ttlMs: 1000, cacheScope: "public" } });
  const form = (message: string, field: string) => ({ message, requestedSchema: { type: "object" as const, properties: { [field]: { type: "string" as const } } } });
  mcp.tool({ name: "echo", inputSchema: NO_ARGS }, (args) => text(String(args.text)));
  mcp.tool({ name: "talk", inputSchema: NO_ARGS }, async (_args, ctx) => {
    await ctx.log("info", "talking");
    return text("talked");
  });
  mcp.tool({ name: "greet", inputSchema: NO_ARGS }, async (_args, ctx) => {
    const a = await ctx.session.elicit(form("Name?", "name"), { inputKey: "name", relatedRequestId: ctx.requestId });
    return text(`Hello, ${String(a.content?.name ?? a.action)}`);
  });
  mcp.tool({ name: "two_steps", inputSchema: NO_ARGS }, async (_args, ctx) => {
    const first = await ctx.session.elicit(form("First?", "v"), { relatedRequestId: ctx.requestId });
    const second = await ctx.session.elicit(form("Second?", "v"), { relatedRequestId: ctx.requestId });
    return text(`${String(first.content?.v)}+${String(second.content?.v)}`);
  });
  mcp.tool({ name: "sample", inputSchema: NO_ARGS }, async (_args, ctx) => {
    const r = await ctx.session.createMessage({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 5 }, { relatedRequestId: ctx.requestId });
    return text(`model=${r.model}`);
  });
  mcp.tool({ name: "pair", inputSchema: NO_ARGS }, async (_args, ctx) => {
    const got = await ctx.session.requestInputs(
      { who: { method: "elicitation/create", params: form("Who?", "name") }, where: { method: "roots/list", params: {} } },
      { relatedRequestId: ctx.requestId },
    );
    const roots = (got.where as { roots: Array<{ uri: string }> }).roots.map((r) => r.uri);
    return text(`${String((got.who as { content?: { name?: unknown } }).content?.name)} in ${roots.join(",")}`);
  });
  const events: string[] = [];
  mcp.tool({ name: "hang", inputSchema: NO_ARGS }, async (_args, ctx) => {
    events.push("hang:start");
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    events.push("hang:aborted");
    return text("never sent");
  });
  let extra: Registration | undefined;
  mcp.tool({ name: "toggle", inputSchema: NO_ARGS }, () => {
    if (extra) extra.remove();
    extra = extra ? undefined : mcp.tool({ name: "extra", inputSchema: NO_ARGS }, () => text("x"));
    return text("toggled");
  });
  mcp.resource({ uri: "test://a", name: "a" }, (uri) => ({ contents: [{ uri, text: "A" }] }));
  mcp.prompt({ name: "ask_prompt" }, async (_args, ctx) => {
    const a = await ctx.session.elicit(form("Topic?", "topic"), { inputKey: "topic", relatedRequestId: ctx.requestId });
    return { messages: [{ role: "user", content: { type: "text", text: `About ${String(a.content?.topic)}` } }] };
  });
  const http = new StreamableHttpServer({ onSession: (t) => mcp.connect(t) });
  const { url } = await http.listen(0);
  return { mcp, http, url, events, stop: async () => (await http.close(), await mcp.close()) };
}
