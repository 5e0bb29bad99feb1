/**
 * What an {@link McpServer} offers (tools, resources, templates, prompts, completion) and the
 * session-independent handling of the requests that use them. Sessions own the lifecycle;
 * this module owns the answers.
 */
import { BridgeError, ErrorCode, RpcError, errorMessage } from "../jsonrpc/errors.ts";
import { InputRequired, InputResponseError } from "./input-round.ts";
import { xMcpHeaderProblem } from "./param-headers.ts";
import type { JsonRpcId } from "../jsonrpc/message.ts";
import type { CompiledValidator } from "../schema/validate.ts";
import type {
  CallToolResult,
  CompleteRequestParams,
  CompleteResult,
  GetPromptResult,
  LoggingLevel,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from "./types.ts";
import { isCallToolResult } from "./types.ts";
import { parseUriTemplate, type UriTemplate } from "./uri-template.ts";
import type { ServerSession } from "./server-session.ts";
import { describeType, isPlainObject, notNonEmptyString } from "../util/object.ts";
import type { AuthInfo } from "../jsonrpc/transport.ts";
import type { ListPage, ServedFeatures } from "./provider-types.ts";
import { pageOf } from "./server-paging.ts";

/** What a handler can use while it serves one request. */
export interface HandlerContext {
  /** Aborted when the client cancels the request or the session closes. */
  signal: AbortSignal;
  session: ServerSession;
  requestId: JsonRpcId;
  progressToken?: string | number;
  /**
   * On a protected Streamable HTTP server (`protectedResource`), the verified principal of the
   * request's access token: client, subject, scopes. Undefined on other transports.
   */
  readonly auth?: AuthInfo;
  /** Sends `notifications/progress`; does nothing when the client asked for no progress. */
  sendProgress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends `notifications/message` to this session, subject to its log level. */
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void>;
}

/** The context of a `tools/call` handler. */
export type ToolContext = HandlerContext;

/**
 * Runs a tool. `args` has already been validated against the tool's `inputSchema`. A thrown
 * error becomes an `isError` result, except an `RpcError` with code -32042 (URL elicitation
 * required), -32021 (missing client capability) and the stateless era's input round
 * (`InputRequired`, `InputResponseError`), which the spec sends as JSON-RPC errors or
 * `input_required` results (docs/decisions.md 109).
 */
export type ToolHandler = (args: Record<string, unknown>, ctx: ToolContext) => CallToolResult | Promise<CallToolResult>;

/** Reads a static resource. Throw `RpcError` to send a specific JSON-RPC error. */
export type ResourceReader = (uri: string, ctx: HandlerContext) => ReadResourceResult | Promise<ReadResourceResult>;

/** Reads a resource matched by a template; `vars` are the template's variables, decoded. */
export type TemplateReader = (
  uri: string,
  vars: Record<string, string>,
  ctx: HandlerContext,
) => ReadResourceResult | Promise<ReadResourceResult>;

/** Suggests values for one argument (a prompt argument or a template variable). */
export type ArgumentCompleter = (
  value: string,
  context: { arguments: Record<string, string> },
) => string[] | Promise<string[]>;

/** Completers keyed by argument (or template variable) name. */
export type ArgumentCompleters = Record<string, ArgumentCompleter>;

/** Renders a prompt; `args` holds every required argument. */
export type PromptGetter = (args: Record<string, string>, ctx: HandlerContext) => GetPromptResult | Promise<GetPromptResult>;

/** Answers `completion/complete` for references no per-argument completer covers. */
export type CompletionHandler = (params: CompleteRequestParams, ctx: HandlerContext) => CompleteResult | Promise<CompleteResult>;

/** Returned by every registration; `remove()` unregisters (idempotent). */
export interface Registration {
  remove(): void;
}

/** The lists that have a `list_changed` notification. Templates count as resources. */
export type ChangedList = "tools" | "resources" | "prompts";

type SchemaModule = typeof import("../schema/validate.ts");

/**
 * The JSON Schema validator, loaded with the first `tools/call` of the process: a server whose
 * tools are only listed (most, in an agent's session) never pays for loading it or compiling.
 */
let schemaModule: SchemaModule | undefined;
let schemaLoading: Promise<SchemaModule> | undefined;

function loadSchemaModule(): Promise<SchemaModule> {
  schemaLoading ??= import("../schema/validate.ts").then((m) => (schemaModule = m));
  return schemaLoading;
}

/** `input`/`output` are compiled on the tool's first call (compileSchema never throws, so nothing is lost by waiting). */
interface ToolEntry { def: Tool; handler: ToolHandler; input?: CompiledValidator; output?: CompiledValidator }
interface ResourceEntry { def: Resource; read: ResourceReader }
interface TemplateEntry { def: ResourceTemplate; read: TemplateReader; parsed: UriTemplate; complete: ArgumentCompleters | undefined }
interface PromptEntry { def: Prompt; get: PromptGetter; complete: ArgumentCompleters | undefined }

/** At most this many completion values go in one answer (the spec's limit). */
const MAX_COMPLETION_VALUES = 100;

/** A paginated list request's target (also the member name of its result). */
export type ListKind = "tools" | "resources" | "resourceTemplates" | "prompts";

export class ServerRegistry implements ServedFeatures {
  private readonly defsCache = new Map<ListKind, unknown[]>();
  private readonly tools = new Map<string, ToolEntry>();
  private readonly resources = new Map<string, ResourceEntry>();
  private readonly templates = new Map<string, TemplateEntry>();
  private readonly prompts = new Map<string, PromptEntry>();
  private completionHandler: CompletionHandler | undefined;

  private readonly changed: (list: ChangedList) => void;

  /** `changed` is called after every add or remove. */
  constructor(changed: (list: ChangedList) => void) {
    this.changed = changed;
  }

  addTool(def: Tool, handler: ToolHandler): Registration {
    checkDefinition("tool", def, "name", handler, "handler");
    if (!isPlainObject(def.inputSchema)) {
      throw new TypeError(`McpServer.tool: tool ${JSON.stringify(def.name)} needs an inputSchema object (MCP requires one; { type: "object" } takes any arguments)`);
    }
    const problem = xMcpHeaderProblem(def.inputSchema);
    if (problem !== undefined) throw new BridgeError("INVALID_STATE", `tool ${JSON.stringify(def.name)}: ${problem}`, { details: { tool: def.name } });
    return this.add(this.tools, def.name, { def, handler }, "tools", "tool");
  }

  addResource(def: Resource, read: ResourceReader): Registration {
    checkDefinition("resource", def, "uri", read, "reader");
    return this.add(this.resources, def.uri, { def, read }, "resources", "resource");
  }

  addTemplate(def: ResourceTemplate, read: TemplateReader, complete?: ArgumentCompleters): Registration {
    checkDefinition("resourceTemplate", def, "uriTemplate", read, "reader");
    const entry: TemplateEntry = { def, read, parsed: parseUriTemplate(def.uriTemplate), complete };
    return this.add(this.templates, def.uriTemplate, entry, "resources", "resource template");
  }

  addPrompt(def: Prompt, get: PromptGetter, complete?: ArgumentCompleters): Registration {
    checkDefinition("prompt", def, "name", get, "getter");
    return this.add(this.prompts, def.name, { def, get, complete }, "prompts", "prompt");
  }

  setCompletionHandler(handler: CompletionHandler | undefined): void {
    this.completionHandler = handler;
  }

  /** Which feature lists have at least one entry (templates count as resources). */
  has(list: ChangedList): boolean {
    if (list === "tools") return this.tools.size > 0;
    if (list === "prompts") return this.prompts.size > 0;
    return this.resources.size > 0 || this.templates.size > 0;
  }

  /** True when `completion/complete` can be answered. */
  get completes(): boolean {
    if (this.completionHandler) return true;
    for (const p of this.prompts.values()) if (p.complete) return true;
    for (const t of this.templates.values()) if (t.complete) return true;
    return false;
  }

  /** True when `uri` names a static resource or matches a template. */
  knows(uri: string): boolean {
    if (this.resources.has(uri)) return true;
    for (const t of this.templates.values()) if (t.parsed.match(uri)) return true;
    return false;
  }

  /** One page of a list, in registration order. Throws -32602 for a cursor we did not issue. */
  page(kind: ListKind, cursor: unknown, pageSize: number): ListPage {
    return pageOf(this.definitions(kind), kind, cursor, pageSize);
  }

  /** The definition of tool `name`, as registered. */
  toolDef(name: string): Tool | undefined {
    return this.tools.get(name)?.def;
  }

  /** Runs a tool; synchronous when its handler is (the common case for small tools). */
  callTool(params: Record<string, unknown>, ctx: ToolContext): CallToolResult | Promise<CallToolResult> {
    const name = params.name;
    if (typeof name !== "string") throw new RpcError(ErrorCode.InvalidParams, "tools/call: name must be a string");
    const entry = this.tools.get(name);
    if (!entry) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(name)}`);
    const args = params.arguments ?? {};
    if (!isPlainObject(args)) return errorResult(`Invalid arguments for tool "${name}": arguments must be an object`);
    if (entry.input === undefined) {
      if (schemaModule === undefined) return loadSchemaModule().then(() => this.callTool(params, ctx));
      entry.input = schemaModule.compileSchema(entry.def.inputSchema);
      if (entry.def.outputSchema !== undefined) entry.output = schemaModule.compileSchema(entry.def.outputSchema);
    }
    const input = entry.input(args);
    if (input.undecided) {
      return errorResult(`Could not validate the arguments of tool "${name}", so it did not run: ${schemaModule!.formatSchemaErrors(input.errors)}`);
    }
    if (!input.valid) return errorResult(`Invalid arguments for tool "${name}": ${schemaModule!.formatSchemaErrors(input.errors)}`);
    let result: unknown;
    try {
      result = entry.handler(args, ctx);
    } catch (err) {
      return toolFailure(name, err);
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => checkToolResult(name, entry, value),
        (err: unknown) => toolFailure(name, err),
      );
    }
    return checkToolResult(name, entry, result);
  }

  async readResource(params: Record<string, unknown>, ctx: HandlerContext): Promise<ReadResourceResult> {
    const uri = params.uri;
    if (typeof uri !== "string") throw new RpcError(ErrorCode.InvalidParams, "resources/read: uri must be a string");
    let result: ReadResourceResult | undefined;
    const entry = this.resources.get(uri);
    if (entry) result = await entry.read(uri, ctx);
    else {
      for (const t of this.templates.values()) {
        const vars = t.parsed.match(uri);
        if (vars) {
          result = await t.read(uri, vars, ctx);
          break;
        }
      }
    }
    if (result === undefined) throw new RpcError(ErrorCode.ResourceNotFound, `Resource not found: ${uri}`, { uri });
    if (!isPlainObject(result) || !Array.isArray(result.contents)) {
      throw new RpcError(ErrorCode.InternalError, `reading ${uri} produced a malformed result (a server bug)`);
    }
    return result;
  }

  async getPrompt(params: Record<string, unknown>, ctx: HandlerContext): Promise<GetPromptResult> {
    const name = params.name;
    if (typeof name !== "string") throw new RpcError(ErrorCode.InvalidParams, "prompts/get: name must be a string");
    const entry = this.prompts.get(name);
    if (!entry) throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${JSON.stringify(name)}`);
    const args = stringRecord(params.arguments, `prompts/get "${name}": arguments`);
    const missing = (entry.def.arguments ?? []).filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
    if (missing.length > 0) {
      throw new RpcError(ErrorCode.InvalidParams, `prompts/get "${name}": missing required argument(s): ${missing.join(", ")}`);
    }
    return entry.get(args, ctx);
  }

  async complete(params: Record<string, unknown>, ctx: HandlerContext): Promise<CompleteResult> {
    if (!this.completes) throw new RpcError(ErrorCode.MethodNotFound, "completion/complete: this server offers no completions");
    const ref = params.ref;
    const arg = params.argument;
    if (!isPlainObject(ref) || !isPlainObject(arg) || typeof arg.name !== "string" || typeof arg.value !== "string") {
      throw new RpcError(ErrorCode.InvalidParams, "completion/complete: needs ref and argument {name, value}");
    }
    let completers: ArgumentCompleters | undefined;
    let known: boolean;
    if (ref.type === "ref/prompt" && typeof ref.name === "string") {
      const p = this.prompts.get(ref.name);
      known = p !== undefined;
      completers = p?.complete;
    } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
      const t = this.templates.get(ref.uri);
      known = t !== undefined || this.resources.has(ref.uri);
      completers = t?.complete;
    } else {
      throw new RpcError(ErrorCode.InvalidParams, 'completion/complete: ref must be {type: "ref/prompt", name} or {type: "ref/resource", uri}');
    }
    const own = completers && Object.prototype.hasOwnProperty.call(completers, arg.name) ? completers[arg.name] : undefined;
    if (own) {
      const context = isPlainObject(params.context) ? params.context : {};
      const others = stringRecord(context.arguments, "completion/complete: context.arguments");
      return completionResult(await own(arg.value, { arguments: others }));
    }
    if (this.completionHandler) return this.completionHandler(params as CompleteRequestParams, ctx);
    if (!known) throw new RpcError(ErrorCode.InvalidParams, `completion/complete: unknown reference ${JSON.stringify(ref)}`);
    return { completion: { values: [] } };
  }

  /** The registered definitions of a list, cached until the next registration change. */
  definitions(kind: ListKind): unknown[] {
    const cached = this.defsCache.get(kind);
    if (cached) return cached;
    const entries: Iterable<{ def: unknown }> =
      kind === "tools" ? this.tools.values()
      : kind === "resources" ? this.resources.values()
      : kind === "resourceTemplates" ? this.templates.values()
      : this.prompts.values();
    const defs = Array.from(entries, (e) => e.def);
    this.defsCache.set(kind, defs);
    return defs;
  }

  private add<E>(map: Map<string, E>, key: string, entry: E, list: ChangedList, what: string): Registration {
    if (map.has(key)) throw new BridgeError("INVALID_STATE", `${what} ${JSON.stringify(key)} is already registered (remove it first)`, { details: { kind: what, key } });
    map.set(key, entry);
    this.defsCache.clear();
    this.changed(list);
    return {
      remove: () => {
        // Only this registration: a later one under the same key stays.
        if (map.get(key) !== entry) return;
        map.delete(key);
        this.defsCache.clear();
        this.changed(list);
      },
    };
  }
}

/**
 * Refuses a registration that a caller without type checks got wrong (a definition that is
 * not an object, a missing or empty key, a handler that is not a function) with a TypeError
 * at once, rather than a server that lists a nameless tool and fails every call to it.
 */
function checkDefinition(method: string, def: unknown, key: string, run: unknown, runName: string): void {
  if (!isPlainObject(def)) {
    throw new TypeError(`McpServer.${method}: the definition must be an object with a "${key}", got ${describeType(def)}`);
  }
  const value = def[key];
  const wrong = notNonEmptyString(value);
  if (wrong !== undefined) throw new TypeError(`McpServer.${method}: the definition's "${key}" must be a non-empty string, got ${wrong}`);
  if (typeof run !== "function") {
    throw new TypeError(`McpServer.${method}: the ${runName} of ${JSON.stringify(value)} must be a function, got ${describeType(run)}`);
  }
}

/** A text result with `isError`: what the model reads when a tool could not give its answer. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function stringRecord(v: unknown, what: string): Record<string, string> {
  if (v === undefined) return {};
  if (!isPlainObject(v) || Object.values(v).some((x) => typeof x !== "string")) {
    throw new RpcError(ErrorCode.InvalidParams, `${what} must be an object of strings`);
  }
  return v as Record<string, string>;
}

function completionResult(values: string[]): CompleteResult {
  if (values.length <= MAX_COMPLETION_VALUES) return { completion: { values, total: values.length, hasMore: false } };
  return { completion: { values: values.slice(0, MAX_COMPLETION_VALUES), total: values.length, hasMore: true } };
}

/** Errors a tool throws that the spec sends as JSON-RPC errors, not as `isError` results. */
const PROTOCOL_ERRORS: ReadonlySet<number> = new Set([ErrorCode.UrlElicitationRequired, ErrorCode.MissingRequiredClientCapability]);

/**
 * A throwing tool is an error result the model can read, except a protocol error of
 * {@link PROTOCOL_ERRORS} and the stateless era's input round: its {@link InputRequired} stop
 * and its {@link InputResponseError} (the client answered with a malformed result).
 */
export function toolFailure(name: string, err: unknown): CallToolResult {
  if (err instanceof InputRequired || err instanceof InputResponseError) throw err;
  if (err instanceof RpcError && PROTOCOL_ERRORS.has(err.code)) throw err;
  return errorResult(`Tool "${name}" failed: ${errorMessage(err)}`);
}

/** A tool's own result checked for shape and, when it declares one, its output schema. */
function checkToolResult(name: string, entry: ToolEntry, result: unknown): CallToolResult {
  if (!isCallToolResult(result)) {
    return errorResult(`Tool "${name}" returned a malformed result (a server bug): it needs a content array`);
  }
  if (entry.output && result.isError !== true) {
    if (result.structuredContent === undefined) {
      return errorResult(`Tool "${name}" declares an outputSchema but returned no structuredContent (a server bug)`);
    }
    const output = entry.output(result.structuredContent);
    if (output.undecided) {
      return errorResult(
        `Tool "${name}" returned structuredContent that could not be checked against its outputSchema: ${schemaModule!.formatSchemaErrors(output.errors)}`,
      );
    }
    if (!output.valid) {
      return errorResult(
        `Tool "${name}" returned structuredContent that does not match its outputSchema (a server bug): ${schemaModule!.formatSchemaErrors(output.errors)}`,
      );
    }
  }
  return result;
}
