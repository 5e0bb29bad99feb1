/**
 * Forwarding of what an upstream asks its client (sampling, elicitation, roots) to the
 * downstream client whose call is running on that upstream, and only while it runs
 * (docs/decisions.md 138).
 *
 * The upstream's request carries nothing that names the call it belongs to (over stdio there
 * is no stream to tell), so the question goes by upstream: to the downstream client with a
 * call in flight there. None: the upstream is refused (it asks outside any call). Calls of
 * two different clients in flight on one shared upstream connection: refused too, as the
 * gateway cannot tell whose call asked and must never show one client another's question.
 *
 * An upstream's log messages (`notifications/message`) go the same way while a call runs on
 * it, as the text the manager made of them (redacted); outside a call, or with no telling whose
 * call it is, they stay in the manager's log.
 *
 * A stateless (2026-07-28) downstream client answers in a later round: its question ends the
 * downstream request with `input_required`, so the upstream call is cancelled, and the
 * retry calls the upstream again, whose same question (same upstream, method and order, so
 * the same key) then finds its answer.
 */
import { ErrorCode, RpcError } from "../jsonrpc/errors.ts";
import type { ClientFeatures } from "../manager/client-features.ts";
import type { LogEntry } from "../manager/events.ts";
import { InputRequired, type InputRequest } from "../mcp/input-round.ts";
import { ProviderCallContext } from "../mcp/provider-context.ts";
import type { ServingContext } from "../mcp/provider-types.ts";
import { McpMethod, type CreateMessageResult, type ElicitResult, type LoggingLevel, type Root } from "../mcp/types.ts";

const LEVELS: ReadonlySet<string> = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

/** One downstream call in flight on an upstream. */
interface ActiveCall {
  readonly ctx: ServingContext;
  /** Aborts the upstream work when the downstream client must answer in a later round. */
  readonly stop: (reason: Error) => void;
  /** Questions asked so far within the call: each one's key in a stateless round. */
  asked: number;
  /** Set when the downstream request ends in `input_required`. */
  inputRequired?: InputRequired;
}

/**
 * The signal to give a call's upstream request: it aborts with the downstream request, and
 * when `stop` is called (the client must answer in a later round). A bounded provider context
 * (what McpServer gives a provider) already is such a signal, stopped through `stopWith`;
 * any other context gets a controller of its own that follows `ctx.signal` until `release`.
 */
function upstreamSignal(ctx: ServingContext): { signal: AbortSignal; stop: (reason: Error) => void; release: () => void } {
  if (ctx instanceof ProviderCallContext && ctx.isBounded) {
    return { signal: ctx.signal, stop: (reason) => ctx.stopWith(reason), release: () => undefined };
  }
  // A listener for the call's lifetime, removed after, costs far less per call than
  // AbortSignal.any, whose composite every listener added to it re-follows.
  const own = new AbortController();
  const downstream = ctx.signal;
  const cancel = (): void => own.abort(downstream.reason);
  if (downstream.aborted) cancel();
  else downstream.addEventListener("abort", cancel, { once: true });
  return { signal: own.signal, stop: (reason) => own.abort(reason), release: () => downstream.removeEventListener("abort", cancel) };
}

/**
 * Routes each upstream's client requests to the downstream call in flight on it.
 *
 * ```ts
 * const forwarding = new CallForwarding();
 * const manager = new McpManager({ clientFeatures: forwarding.clientFeatures });
 * const server = new McpServer(info, { providers: [new ManagerProvider(manager, { forwarding })] });
 * ```
 */
export class CallForwarding {
  /** Calls in flight, by upstream (the manager's server name). */
  private readonly active = new Map<string, Set<ActiveCall>>();

  /**
   * The handlers to give the McpManager: each upstream is offered roots, sampling and both
   * elicitation modes, answered by the downstream client of the call in flight (which may in
   * turn refuse, for example when it did not declare the capability).
   */
  readonly clientFeatures: ClientFeatures = {
    roots: async (ctx) => ((await this.ask(ctx.server, { method: McpMethod.RootsList, params: {} }, ctx.signal)) as { roots: Root[] }).roots,
    sampling: (params, ctx) =>
      this.ask(ctx.server, { method: McpMethod.SamplingCreateMessage, params: params as unknown as Record<string, unknown> }, ctx.signal) as Promise<CreateMessageResult>,
    elicitation: (params, ctx) =>
      this.ask(ctx.server, { method: McpMethod.ElicitationCreate, params: params as unknown as Record<string, unknown> }, ctx.signal) as Promise<ElicitResult>,
  };

  /**
   * Runs `work` (a request to `server`) as a call of `ctx`'s client: what `server` asks
   * meanwhile goes to that client. `work` gets the signal to give the upstream request,
   * which aborts with the downstream request, or when the client must answer in a later
   * round (then this throws the `InputRequired` that ends the downstream request).
   */
  async during<T>(server: string, ctx: ServingContext, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { signal, stop, release } = upstreamSignal(ctx);
    const call: ActiveCall = { ctx, stop, asked: 0 };
    let calls = this.active.get(server);
    if (calls === undefined) this.active.set(server, (calls = new Set()));
    calls.add(call);
    try {
      const result = await work(signal);
      if (call.inputRequired !== undefined) throw call.inputRequired;
      return result;
    } finally {
      release();
      calls.delete(call);
      if (calls.size === 0) this.active.delete(server);
    }
  }

  /**
   * Passes an upstream's log message (a manager `log` event from the server itself) to the
   * client whose call is in flight there, under that client's log level. Anything else is
   * left alone.
   */
  relayLog(entry: LogEntry): void {
    if (entry.source !== "server" || !LEVELS.has(entry.level)) return;
    const { last, clients } = this.running(entry.server);
    if (last === undefined || clients > 1) return;
    void last.ctx.log(entry.level as LoggingLevel, entry.message, entry.logger).catch(() => undefined);
  }

  /** One upstream question, asked of the client whose call is in flight on `server`. */
  private async ask(server: string, request: InputRequest, signal: AbortSignal): Promise<unknown> {
    const call = this.callFor(server, request.method);
    const key = `${server}:${request.method}:${call.asked++}`;
    try {
      return (await call.ctx.requestInputs({ [key]: request }, { signal }))[key];
    } catch (err) {
      if (err instanceof InputRequired) {
        // A stateless client answers with its retry: end this round, upstream call included.
        call.inputRequired ??= err;
        call.stop(err);
      }
      throw err;
    }
  }

  /** The call a question of `server` belongs to; RpcError when there is none, or no telling which. */
  private callFor(server: string, method: string): ActiveCall {
    const { last, clients } = this.running(server);
    if (last === undefined) {
      throw new RpcError(
        ErrorCode.InvalidRequest,
        `${method}: mcp-bridge serve forwards this to the client whose call is running on this server, and no call is running; ask during a tool call`,
      );
    }
    if (clients > 1) {
      throw new RpcError(
        ErrorCode.InvalidRequest,
        `${method}: calls of ${clients} clients are running on this server through one connection, and nothing tells whose call asked; mcp-bridge serve asks no client another client's question`,
      );
    }
    return last;
  }

  /** The latest call in flight on `server`, and how many downstream clients have calls there. */
  private running(server: string): { last: ActiveCall | undefined; clients: number } {
    const calls = this.active.get(server);
    if (calls === undefined) return { last: undefined, clients: 0 };
    const sessions = new Set<unknown>();
    let last: ActiveCall | undefined;
    for (const call of calls) {
      sessions.add(call.ctx.session);
      last = call;
    }
    return { last, clients: sessions.size };
  }
}
