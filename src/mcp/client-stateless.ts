/**
 * The client side of the stateless era (MCP 2026-07-28), which McpClient loads only once its
 * `server/discover` probe (client-discover.ts) found a server of that era (docs/decisions.md
 * 129, 156):
 * - every request carries `_meta` (protocol version, client capabilities and info, log level)
 *   and, on HTTP, the headers of SEP-2243 ({@link StatelessClient.headers});
 * - -32022 is retried once with a version from `data.supported` that we speak;
 * - `resultType: "input_required"` is answered through the client's handlers and the request
 *   sent again (new id, `inputResponses`, `requestState` echoed verbatim), a bounded number
 *   of rounds;
 * - results lose the era's plumbing (`resultType`, the `serverInfo` `_meta` key, `ttlMs`,
 *   `cacheScope`) so callers see one shape in both eras (docs/decisions.md 130).
 */
import { BridgeError, ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { JsonRpcParams } from "../jsonrpc/message.ts";
import type { JsonRpcPeer } from "../jsonrpc/peer.ts";
import type { RequestOptions } from "../jsonrpc/peer-types.ts";
import type { MessageHeaders, Transport } from "../jsonrpc/transport.ts";
import { copyFields, isPlainObject } from "../util/object.ts";
import { ListenStream } from "./client-listen.ts";
import type { ResolvedClientOptions } from "./client-options.ts";
import { EraMeta, type CacheHints } from "./era-meta.ts";
import { annotationsOf, encodeHeaderValue, mirroredParamHeaders, xMcpHeaderProblem } from "./param-headers.ts";
import { type Discovered, eraHeaders, eraMeta, pickVersion } from "./client-discover.ts";
import type { ClientCapabilities, Implementation, InitializeResult, LoggingLevel, Tool } from "./types.ts";
import { McpMethod } from "./types.ts";

/** Input requests taken from one `input_required` result; each may become a question to the user. */
const MAX_INPUT_REQUESTS = 16;

/** What `plain` takes off a result: the era's fields (and `_meta`, which it filters apart). */
const ERA_RESULT_FIELDS: ReadonlySet<string> = new Set(["resultType", "ttlMs", "cacheScope", "_meta"]);
const SERVER_INFO: ReadonlySet<string> = new Set([EraMeta.ServerInfo]);

/** Methods whose target is mirrored in `Mcp-Name`. */
const NAMED: Readonly<Record<string, "name" | "uri">> = {
  [McpMethod.ToolsCall]: "name",
  [McpMethod.PromptsGet]: "name",
  [McpMethod.ResourcesRead]: "uri",
};

/** Answers one input request with the client's handler for its method. */
export type InputAnswerer = (method: string, params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;

export interface StatelessClientOptions {
  /** The stateless-era version offered first. */
  version: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
  maxInputRounds: number;
  answer: InputAnswerer;
  /** A tool left out of `tools/list` for invalid `x-mcp-header` annotations. */
  onToolRejected: (name: string, reason: string) => void;
  /** Lists the tools again (through {@link StatelessClient.keepTools}): their schemas give the `Mcp-Param-*` headers. */
  relistTools: () => Promise<unknown>;
}

/** What McpClient brings to a stateless connection besides its options. */
export interface StatelessHooks extends Pick<StatelessClientOptions, "capabilities" | "answer" | "onToolRejected" | "relistTools"> {
  /** A listen stream that ended or was refused. */
  onError: (err: Error) => void;
}

/**
 * The connection's pieces for a server `discoverEra` found to speak the stateless era: the
 * client (its SEP-2243 headers now the transport's) and the listen stream, made, not opened.
 */
export function connectStateless(
  peer: JsonRpcPeer,
  transport: Transport,
  o: ResolvedClientOptions,
  found: Discovered,
  hooks: StatelessHooks,
): { init: InitializeResult; client: StatelessClient; listen: ListenStream } {
  const client = new StatelessClient(peer, { ...hooks, version: found.version, clientInfo: o.clientInfo, maxInputRounds: o.maxInputRounds });
  if (o.logLevel !== undefined) client.setLogLevel(o.logLevel);
  transport.setMessageHeaders?.(client.headers);
  const listen = new ListenStream(client, found.init.capabilities, {
    ackTimeoutMs: Math.min(o.connectTimeoutMs, o.requestTimeoutMs ?? 60_000),
    reconnect: o.listenReconnect,
    onEnded: (err) => {
      if (err !== undefined) hooks.onError(err);
    },
  });
  return { init: found.init, client, listen };
}

export class StatelessClient {
  private readonly peer: JsonRpcPeer;
  private readonly o: StatelessClientOptions;
  private versionInUse: string;
  private meta: Record<string, unknown>;
  private level: LoggingLevel | undefined;
  /** Input schemas of the tools last listed, for their `Mcp-Param-*` headers. */
  private readonly schemas = new Map<string, unknown>();
  private readonly hints = new Map<string, CacheHints>();

  constructor(peer: JsonRpcPeer, options: StatelessClientOptions) {
    this.peer = peer;
    this.o = options;
    this.versionInUse = options.version;
    this.meta = this.buildMeta();
  }

  /** The version every request declares. */
  get version(): string {
    return this.versionInUse;
  }

  /** The log level sent in `_meta` from now on (the era has no `logging/setLevel`). */
  setLogLevel(level: LoggingLevel): void {
    this.level = level;
    this.meta = this.buildMeta();
  }

  /** The cache hints of the last result of `method` (a list, `resources/read`), if it had any. */
  cacheHints(method: string): CacheHints | undefined {
    return this.hints.get(method);
  }

  /**
   * The SEP-2243 headers of one outgoing message (HTTP transports call it per POST). Headers
   * that depend on nothing but the version, the method and its target are the same object
   * call after call, which the transport then needs to merge only once.
   */
  readonly headers: MessageHeaders = ({ method, params }) => {
    const field = NAMED[method];
    const p = isPlainObject(params) ? params : undefined;
    const target = field === undefined ? undefined : p?.[field];
    const name = typeof target === "string" ? target : undefined;
    const schema = method === McpMethod.ToolsCall && name !== undefined ? this.schemas.get(name) : undefined;
    const perCall = schema !== undefined && annotationsOf(schema).length > 0;
    const last = this.lastHeaders;
    if (!perCall && last !== undefined && last.method === method && last.name === name && last.version === this.versionInUse) return last.headers;
    const h = eraHeaders(this.versionInUse, method);
    if (name !== undefined) h["mcp-name"] = encodeHeaderValue(name);
    if (perCall) return Object.assign(h, mirroredParamHeaders(schema, p?.arguments));
    this.lastHeaders = { method, name, version: this.versionInUse, headers: h };
    return h;
  };
  /** The last headers that depended on the method and target alone. */
  private lastHeaders: { method: string; name: string | undefined; version: string; headers: Record<string, string> } | undefined;

  /**
   * A request of the era: `_meta` added, -32022 retried once, input rounds answered. Resolves
   * with the final result stripped of the era's plumbing.
   */
  async request(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<Record<string, unknown>> {
    let extra: Record<string, unknown> | undefined;
    let retriedVersion = false;
    let relisted = false;
    for (let round = 0; ; ) {
      let raw: unknown;
      try {
        raw = await this.peer.request(method, this.withMeta(extra === undefined ? params : { ...params, ...extra }), options);
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        const next = !retriedVersion && err.code === ErrorCode.UnsupportedProtocolVersion ? pickVersion(err.data) : undefined;
        if (next !== undefined) {
          retriedVersion = true;
          this.useVersion(next);
          continue;
        }
        // SEP-2243: a header mismatch on a call means the tool's schema (its x-mcp-header
        // annotations) is unknown or stale: list the tools again, then retry once.
        if (err.code !== ErrorCode.HeaderMismatch || method !== McpMethod.ToolsCall || relisted) throw err;
        relisted = true;
        await this.o.relistTools();
        continue;
      }
      if (!isPlainObject(raw)) throw new BridgeError("INVALID_RESULT", `${method}: the result is not an object`);
      const type = raw.resultType;
      if (type === undefined || type === "complete") return this.plain(method, raw);
      if (type !== "input_required") throw new BridgeError("INVALID_RESULT", `${method}: unknown resultType ${JSON.stringify(type)}`, { details: { resultType: type } });
      if (++round > this.o.maxInputRounds) {
        throw new BridgeError("LIMIT_EXCEEDED", `${method}: the server still asks for input after ${this.o.maxInputRounds} rounds; giving up (raise maxInputRounds if it is legitimate)`, {
          details: { method, maxInputRounds: this.o.maxInputRounds },
        });
      }
      extra = await this.answerInputs(method, raw, options.signal);
    }
  }

  /**
   * The tools whose `x-mcp-header` annotations are valid (the others go, with a warning, as
   * SEP-2243 asks); their schemas are kept for the `Mcp-Param-*` headers of later calls.
   */
  keepTools(tools: Tool[]): Tool[] {
    this.schemas.clear();
    const kept: Tool[] = [];
    for (const tool of tools) {
      const why = xMcpHeaderProblem(tool.inputSchema);
      if (why !== undefined) {
        this.o.onToolRejected(tool.name, why);
        continue;
      }
      this.schemas.set(tool.name, tool.inputSchema);
      kept.push(tool);
    }
    return kept.length === tools.length ? tools : kept;
  }

  /** The next round's `inputResponses` and `requestState` (docs/decisions.md 134). */
  private async answerInputs(method: string, raw: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    const { inputRequests, requestState } = raw;
    if (inputRequests === undefined && requestState === undefined) {
      throw new BridgeError("INVALID_RESULT", `${method}: an input_required result needs inputRequests or requestState, and has neither`);
    }
    if (requestState !== undefined && typeof requestState !== "string") throw new BridgeError("INVALID_RESULT", `${method}: requestState must be a string`);
    if (inputRequests !== undefined && !isPlainObject(inputRequests)) throw new BridgeError("INVALID_RESULT", `${method}: inputRequests must be an object`);
    const keys = Object.keys(inputRequests ?? {});
    if (keys.length > MAX_INPUT_REQUESTS) {
      throw new BridgeError("LIMIT_EXCEEDED", `${method}: the server asks ${keys.length} inputs at once (at most ${MAX_INPUT_REQUESTS})`, { details: { method, inputRequests: keys.length } });
    }
    const out: Record<string, unknown> = {};
    if (inputRequests !== undefined) {
      const responses: Record<string, unknown> = {};
      for (const key of keys) {
        const req = inputRequests[key];
        if (!isPlainObject(req) || typeof req.method !== "string" || (req.params !== undefined && !isPlainObject(req.params))) {
          throw new BridgeError("INVALID_RESULT", `${method}: inputRequests[${JSON.stringify(key)}] is not a request ({method, params})`);
        }
        responses[key] = await this.o.answer(req.method, (req.params as Record<string, unknown> | undefined) ?? {}, signal ?? new AbortController().signal);
      }
      out.inputResponses = responses;
    }
    if (requestState !== undefined) out.requestState = requestState;
    return out;
  }

  /**
   * The result as callers of either era see it; the cache hints are kept aside. Copied with
   * `copyFields`, not by rest destructuring, which V8 runs through a generic runtime call:
   * this runs once per request (docs/decisions.md 173).
   */
  private plain(method: string, raw: Record<string, unknown>): Record<string, unknown> {
    const { ttlMs, cacheScope, _meta: meta } = raw;
    if (typeof ttlMs === "number" && (cacheScope === "public" || cacheScope === "private")) this.hints.set(method, { ttlMs, cacheScope });
    const out: Record<string, unknown> = copyFields({}, raw, ERA_RESULT_FIELDS);
    if (!isPlainObject(meta) || !Object.hasOwn(meta, EraMeta.ServerInfo)) {
      if (Object.hasOwn(raw, "_meta")) out._meta = meta;
      return out;
    }
    // The server's identity goes; a `_meta` it leaves empty goes with it.
    const rest = copyFields({}, meta, SERVER_INFO);
    if (Object.keys(rest).length > 0) out._meta = rest;
    return out;
  }

  private withMeta(params: Record<string, unknown> | undefined): JsonRpcParams {
    if (params === undefined) return { _meta: this.meta };
    // copyFields, not spread: this runs once per request (docs/decisions.md 160).
    const out: Record<string, unknown> = copyFields({}, params);
    out._meta = isPlainObject(params._meta) ? copyFields(copyFields({}, params._meta), this.meta) : this.meta;
    return out;
  }

  private useVersion(version: string): void {
    this.versionInUse = version;
    this.meta = this.buildMeta();
  }

  private buildMeta(): Record<string, unknown> {
    return eraMeta(this.versionInUse, this.o.capabilities, this.o.clientInfo, this.level);
  }
}
