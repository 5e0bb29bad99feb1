/**
 * `mcp-bridge inspect`: what a server offers (info, tools with their arguments, resources,
 * templates, prompts), laid out to fit the terminal, or all of it as JSON.
 */
import { isPlainObject as isObject } from "../util/object.ts";
import type { Prompt, Resource, ResourceTemplate, Tool } from "../mcp/types.ts";
import type { ParsedArgs } from "./args.ts";
import { inspectArgs } from "./server-command-args.ts";
import { clip, oneLine, table, wrap } from "./format.ts";
import type { CliIo } from "./io.ts";
import { type OpenServer, withServer } from "./open.ts";
import type { EarlySpawn } from "./early-spawn.ts";

/** A list the server may not support: a missing capability is an empty list, not an error. */
async function optionalList<T>(supported: boolean, list: () => Promise<T[]>): Promise<T[]> {
  return supported ? list() : [];
}

export function runInspect(args: ParsedArgs, io: CliIo, started?: Promise<EarlySpawn | undefined>): Promise<number> {
  inspectArgs(args);
  return withServer(args, io, (server, out) => inspect(server, args.flags.has("json"), out), started);
}

async function inspect(server: OpenServer, json: boolean, io: CliIo): Promise<number> {
  const caps = server.init.capabilities;
  const options = { timeoutMs: server.requestTimeoutMs };
  const tools = await optionalList<Tool>(caps.tools !== undefined, () => server.client.listTools(options));
  const resources = await optionalList<Resource>(caps.resources !== undefined, () => server.client.listResources(options));
  const templates = await optionalList<ResourceTemplate>(caps.resources !== undefined, () => server.client.listResourceTemplates(options));
  const prompts = await optionalList<Prompt>(caps.prompts !== undefined, () => server.client.listPrompts(options));
  if (json) {
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
  const width = io.columns;
  const info = server.init.serverInfo;
  io.out(`server    ${oneLine(`${info.name} ${info.version}${info.title ? ` (${info.title})` : ""}`, width - 10)}`);
  io.out(`target    ${oneLine(server.target, width - 10)}`);
  io.out(`protocol  ${server.init.protocolVersion}`);
  io.out(`ready in  ${server.readyMs.toFixed(0)} ms`);
  io.out(`caps      ${oneLine(Object.keys(caps).join(", ") || "(none)", width - 10)}`);
  if (server.init.instructions) io.out(`notes     ${oneLine(server.init.instructions, width - 10)}`);
  io.out(`\ntools (${tools.length})`);
  if (tools.length) io.out(toolListing(tools, width));
  io.out(`\nresources (${resources.length + templates.length})`);
  const resRows = [
    ...resources.map((r) => [oneLine(r.uri), oneLine(r.mimeType), oneLine(r.name)]),
    ...templates.map((t) => [oneLine(t.uriTemplate), oneLine(t.mimeType), oneLine(t.name)]),
  ];
  if (resRows.length) io.out(table(["uri", "type", "name"], resRows, width));
  io.out(`\nprompts (${prompts.length})`);
  if (prompts.length) {
    const rows = prompts.map((p) => [
      oneLine(p.name),
      oneLine((p.arguments ?? []).map((a) => (a.required ? a.name : `${a.name}?`)).join(", ")),
      oneLine(p.description),
    ]);
    io.out(table(["name", "arguments", "description"], rows, width));
  }
  return 0;
}

/** One argument of a tool, read from its input schema. */
export interface ToolArgument {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The top-level properties of a tool's input schema, in the schema's order. */
export function toolArguments(schema: unknown): ToolArgument[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  return Object.entries(schema.properties).map(([name, prop]) => ({
    name,
    type: typeName(prop, 0),
    required: required.includes(name),
    description: isObject(prop) && typeof prop.description === "string" ? prop.description : "",
  }));
}

/** How deep `typeName` looks into `items`, `anyOf` and `oneOf` (schemas are untrusted). */
const MAX_TYPE_DEPTH = 3;

/** A short type for people: `string`, `integer[]`, `"a"|"b"`, `string|null`, `point`. */
function typeName(schema: unknown, depth: number): string {
  if (!isObject(schema) || depth > MAX_TYPE_DEPTH) return "any";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join("|");
  if ("const" in schema) return JSON.stringify(schema.const) ?? "any";
  const { type } = schema;
  if (type === "array") return isObject(schema.items) ? `${typeName(schema.items, depth + 1)}[]` : "array";
  if (typeof type === "string") return type;
  if (Array.isArray(type)) return type.filter((t) => typeof t === "string").join("|") || "any";
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) return union.map((s) => typeName(s, depth + 1)).join("|") || "any";
  if (typeof schema.$ref === "string") return schema.$ref.slice(schema.$ref.lastIndexOf("/") + 1) || "any";
  return "any";
}

/** Widest name column, and the widest type shown before it is cut. */
const MAX_NAME_WIDTH = 28;
const MAX_TYPE_WIDTH = 20;
/** Below this many columns left for a description, it goes on the lines below the name. */
const MIN_DESCRIPTION_WIDTH = 24;

/**
 * Each tool on a line with its description (wrapped to the width, at most three lines), and
 * its arguments indented below it: name, type, `required` or `optional`, description (cut).
 */
export function toolListing(tools: readonly Tool[], width: number): string {
  const args = tools.map((t) => toolArguments(t.inputSchema));
  const nameWidth = Math.min(
    MAX_NAME_WIDTH,
    Math.max(...tools.map((t) => oneLine(t.name).length), ...args.flat().map((a) => oneLine(a.name).length + 2)),
  );
  const typeWidth = Math.min(MAX_TYPE_WIDTH, Math.max(4, ...args.flat().map((a) => oneLine(a.type).length)));
  const lines: string[] = [];
  tools.forEach((tool, i) => {
    const name = oneLine(tool.name, nameWidth);
    const room = width - nameWidth - 2;
    if (room >= MIN_DESCRIPTION_WIDTH) {
      const description = wrap(tool.description, room);
      lines.push(`${name.padEnd(nameWidth)}  ${description[0] ?? ""}`.trimEnd());
      for (const more of description.slice(1)) lines.push(`${" ".repeat(nameWidth + 2)}${more}`);
    } else {
      lines.push(oneLine(tool.name, width));
      for (const more of wrap(tool.description, Math.max(1, width - 4))) lines.push(`    ${more}`);
    }
    for (const arg of args[i]!) {
      const row = [
        `  ${oneLine(arg.name, nameWidth - 2)}`.padEnd(nameWidth),
        oneLine(arg.type, typeWidth).padEnd(typeWidth),
        arg.required ? "required" : "optional",
      ].join("  ");
      const rest = width - row.length - 2;
      lines.push(rest > 0 && arg.description !== "" ? `${row}  ${oneLine(arg.description, rest)}` : clip(row, width));
    }
  });
  return lines.join("\n");
}
