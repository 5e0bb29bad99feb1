/**
 * `mcp-bridge inspect` and `mcp-bridge call`: look at, or use, any stdio MCP server.
 */
import { errorMessage } from "../jsonrpc/errors.ts";
import type { CallToolResult, Prompt, Resource, ResourceTemplate, Tool } from "../mcp/types.ts";
import { flag, intFlag, type ParsedArgs, UsageError } from "./args.ts";
import { connectStdio, connectUrl, type ConnectedServer, type HttpTransportChoice } from "./connect.ts";
import { oneLine, table } from "./format.ts";

interface Io {
  out: (text: string) => void;
}

function envFlags(args: ParsedArgs): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of args.flags.get("env") ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--env expects NAME=value, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/** Parses repeated `--header 'Name: value'` flags. */
function headerFlags(args: ParsedArgs): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const h of args.flags.get("header") ?? []) {
    const colon = h.indexOf(":");
    if (colon <= 0) throw new UsageError(`--header expects 'Name: value', got a value without a name`);
    headers[h.slice(0, colon).trim()] = h.slice(colon + 1).trim();
  }
  return headers;
}

async function open(args: ParsedArgs): Promise<ConnectedServer> {
  const url = flag(args, "url");
  const transport = flag(args, "transport");
  if (url !== undefined) {
    if (args.command.length > 0) throw new UsageError("give either --url or -- <command>, not both");
    if (transport !== undefined && !["auto", "http", "sse"].includes(transport)) {
      throw new UsageError(`--transport must be auto, http or sse, got ${JSON.stringify(transport)}`);
    }
    return connectUrl({
      url,
      transport: (transport ?? "auto") as HttpTransportChoice,
      headers: headerFlags(args),
      timeoutMs: intFlag(args, "timeout", 30_000),
    });
  }
  if (transport !== undefined || args.flags.has("header")) throw new UsageError("--transport and --header need --url");
  return connectStdio({
    command: args.command,
    env: envFlags(args),
    inheritEnv: args.flags.has("inherit-env"),
    timeoutMs: intFlag(args, "timeout", 30_000),
  });
}

/** A list the server may not support: a missing capability is an empty list, not an error. */
async function optionalList<T>(supported: boolean, list: () => Promise<T[]>): Promise<T[]> {
  return supported ? list() : [];
}

export async function runInspect(args: ParsedArgs, io: Io): Promise<number> {
  const server = await open(args);
  try {
    const caps = server.init.capabilities;
    const tools = await optionalList<Tool>(caps.tools !== undefined, () => server.client.listTools());
    const resources = await optionalList<Resource>(caps.resources !== undefined, () => server.client.listResources());
    const templates = await optionalList<ResourceTemplate>(caps.resources !== undefined, () => server.client.listResourceTemplates());
    const prompts = await optionalList<Prompt>(caps.prompts !== undefined, () => server.client.listPrompts());
    if (args.flags.has("json")) {
      io.out(JSON.stringify({
        target: server.target,
        protocolVersion: server.init.protocolVersion,
        serverInfo: server.init.serverInfo,
        capabilities: caps,
        instructions: server.init.instructions,
        tools,
        resources,
        resourceTemplates: templates,
        prompts,
      }, null, 2));
      return 0;
    }
    const info = server.init.serverInfo;
    io.out(`server    ${info.name} ${info.version}${info.title ? ` (${info.title})` : ""}`);
    io.out(`target    ${server.target}`);
    io.out(`protocol  ${server.init.protocolVersion}`);
    io.out(`ready in  ${server.readyMs.toFixed(0)} ms`);
    io.out(`caps      ${Object.keys(caps).join(", ") || "(none)"}`);
    if (server.init.instructions) io.out(`notes     ${oneLine(server.init.instructions, 100)}`);
    io.out(`\ntools (${tools.length})`);
    if (tools.length) io.out(table(["name", "description"], tools.map((t) => [t.name, oneLine(t.description)])));
    io.out(`\nresources (${resources.length + templates.length})`);
    const resRows = [
      ...resources.map((r) => [r.uri, r.mimeType ?? "", oneLine(r.name)]),
      ...templates.map((t) => [t.uriTemplate, t.mimeType ?? "", oneLine(t.name)]),
    ];
    if (resRows.length) io.out(table(["uri", "type", "name"], resRows));
    io.out(`\nprompts (${prompts.length})`);
    if (prompts.length) {
      io.out(table(["name", "arguments", "description"], prompts.map((p) => [
        p.name,
        (p.arguments ?? []).map((a) => (a.required ? a.name : `${a.name}?`)).join(", "),
        oneLine(p.description, 60),
      ])));
    }
    return 0;
  } finally {
    await server.client.close();
  }
}

/** Renders a tool result for people: text as is, other blocks as one-line summaries. */
export function renderResult(result: CallToolResult): string {
  const lines = result.content.map((block) => {
    switch (block.type) {
      case "text":
        return block.text;
      case "image":
      case "audio":
        return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
      case "resource_link":
        return `[link ${block.uri}]`;
      case "resource":
        return "text" in block.resource ? block.resource.text : `[blob ${block.resource.uri}]`;
      default:
        return `[${(block as { type: string }).type}]`;
    }
  });
  if (result.structuredContent !== undefined) lines.push(`structured: ${JSON.stringify(result.structuredContent)}`);
  return lines.join("\n");
}

export async function runCall(args: ParsedArgs, io: Io): Promise<number> {
  const [, tool, rawArgs = "{}"] = args.positionals;
  if (!tool) throw new UsageError("call needs a tool name: mcp-bridge call <tool> '<json args>' -- <command>");
  let toolArgs: unknown;
  try {
    toolArgs = JSON.parse(rawArgs);
  } catch (err) {
    throw new UsageError(`tool arguments are not valid JSON: ${errorMessage(err)}`);
  }
  if (typeof toolArgs !== "object" || toolArgs === null || Array.isArray(toolArgs)) {
    throw new UsageError("tool arguments must be a JSON object");
  }
  const server = await open(args);
  try {
    await server.client.listTools().catch(() => undefined); // output schemas for validation
    const result = await server.client.callTool(tool, toolArgs as Record<string, unknown>, {
      timeoutMs: intFlag(args, "timeout", 120_000),
    });
    io.out(args.flags.has("json") ? JSON.stringify(result, null, 2) : renderResult(result));
    return result.isError ? 1 : 0;
  } finally {
    await server.client.close();
  }
}

