/**
 * Requests we sent and wait for: correlation by exact id, timeouts with a hard cap, progress
 * routing, and the one cleanup path that every way of settling goes through. The counterpart
 * of `inbound.ts`; {@link JsonRpcPeer} owns one of each.
 */
import { BridgeError, RpcError } from "./errors.ts";
import { IdTable, isErrorResponse, type JsonRpcId, type JsonRpcResponse } from "./message.ts";
import type { Pending, PeerStats, ProgressInfo } from "./peer-types.ts";

/** How many ids of finished requests are remembered, to tell late responses from unknown ones. */
const FINISHED_MEMORY = 1024;

interface OutboundWiring {
  /** The counters the peer shows (late and unknown responses are counted here). */
  stats: PeerStats;
  /** A request's time is up: the peer settles it with `error` and tells the other side. */
  timedOut(p: Pending, error: BridgeError): void;
  /** A progress callback threw. */
  callbackFailed(what: string, error: unknown): void;
}

export class OutboundRequests {
  /** Requests in flight, by the integer ids we hand out (a string id from the other side never matches). */
  private readonly pending = new IdTable<Pending>();
  /**
   * The last FINISHED_MEMORY ids settled, to tell late responses from unknown ones. Made with
   * the first request settled: a peer that never sends one (a stateless HTTP server's, one
   * per POST) should not pay for it.
   */
  private finishedRing: number[] | undefined;
  private finishedNext = 0;
  /** The last over-long line whose id could not be read, and the first id handed out after it. */
  private discarded: { note: string; beforeId: number } | undefined;
  private readonly wiring: OutboundWiring;

  constructor(wiring: OutboundWiring) {
    this.wiring = wiring;
  }

  get size(): number {
    return this.pending.size;
  }

  /** See `JsonRpcPeer.lastDiscardedLine`. */
  get lastDiscardedLine(): string | undefined {
    return this.discarded?.note;
  }

  get(id: JsonRpcId): Pending | undefined {
    return this.pending.get(id);
  }

  /** Registers a request and starts its timer. */
  add(p: Pending): void {
    this.pending.set(p.id, p);
    this.arm(p, p.timeoutMs);
  }

  /** The one cleanup path: timer, abort listener, pending entry. */
  settle(p: Pending): void {
    if (p.timer !== undefined) clearTimeout(p.timer);
    if (p.onAbort && p.signal) p.signal.removeEventListener("abort", p.onAbort);
    this.pending.delete(p.id);
    (this.finishedRing ??= new Array<number>(FINISHED_MEMORY).fill(0))[this.finishedNext] = p.id;
    this.finishedNext = (this.finishedNext + 1) % FINISHED_MEMORY;
  }

  /** Settles request `id`, if it is ours and pending, with the error `make` builds. */
  fail(id: JsonRpcId, make: (p: Pending) => Error): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.settle(p);
    p.reject(make(p));
  }

  /** Settles every pending request with `error` (the connection ended). */
  failAll(error: Error): void {
    for (const p of this.pending.values()) {
      this.settle(p);
      p.reject(error);
    }
  }

  /** A response arrived: settle its request, or count it as late or unknown. */
  receive(r: JsonRpcResponse): void {
    const id = r.id;
    const p = id === null ? undefined : this.pending.get(id);
    if (!p) {
      // A linear scan, but only for responses nobody waits for (rare by nature).
      if (typeof id === "number" && id > 0 && this.finishedRing?.includes(id) === true) this.wiring.stats.lateResponses++;
      else this.wiring.stats.unknownResponses++;
      return;
    }
    this.settle(p);
    if (isErrorResponse(r)) p.reject(RpcError.fromObject(r.error));
    else p.resolve(r.result);
  }

  /** Routes a progress notification to its request's callback, restarting its timeout. */
  progress(params: unknown): void {
    const pp = params as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } | undefined;
    const token = pp?.progressToken;
    if (typeof token !== "number" && typeof token !== "string") return;
    const p = this.pending.get(token);
    if (!p?.onProgress || typeof pp?.progress !== "number") return;
    if (p.resetOnProgress) {
      if (p.timer !== undefined) clearTimeout(p.timer);
      this.arm(p, p.timeoutMs);
    }
    const info: ProgressInfo = { progress: pp.progress };
    if (typeof pp.total === "number") info.total = pp.total;
    if (typeof pp.message === "string") info.message = pp.message;
    try {
      p.onProgress(info);
    } catch (e) {
      this.wiring.callbackFailed(`${p.method} progress callback`, e);
    }
  }

  /**
   * The transport discarded a line over its limit (`LINE_TOO_LONG`, whose details say what the
   * line's first bytes held). A response whose id was read fails its request now; a line whose
   * id could not be read is remembered, and the timeout of every request in flight at that
   * moment (`nextId`: the first id not yet handed out) says so.
   */
  lineTooLong(e: BridgeError, nextId: number): void {
    const { id, kind, bytesRead, maxLineBytes } = e.details;
    const size = `a line of at least ${String(bytesRead)} bytes, over the ${String(maxLineBytes)}-byte limit (maxLineBytes),`;
    if (kind === "response" && (typeof id === "number" || typeof id === "string")) {
      this.fail(id, (p) => new BridgeError(
        "LIMIT_EXCEEDED",
        `request "${p.method}": the response was ${size} and was discarded; raise maxLineBytes or ask for less`,
        { cause: e, details: { method: p.method, bytesRead, maxLineBytes } },
      ));
    } else if (kind !== "request") {
      // Not known to be a request from the other side: it may have been one of our responses.
      this.discarded = { note: `${size} was discarded without a readable id (it may have been the response)`, beforeId: nextId };
    }
  }

  private arm(p: Pending, ms: number): void {
    const remaining = p.deadline - Date.now();
    const capped = Math.max(0, Math.min(ms, remaining));
    // No limit at all (a stream-like request such as subscriptions/listen): no timer, which
    // setTimeout would fire at once for a delay past 2^31-1 ms.
    if (capped === Infinity) return;
    const hitCap = remaining <= ms;
    p.timer = setTimeout(() => {
      const what = hitCap ? `its total time cap` : `${p.timeoutMs} ms`;
      const meanwhile = this.discarded !== undefined && p.id < this.discarded.beforeId ? `; meanwhile ${this.discarded.note}` : "";
      this.wiring.timedOut(
        p,
        new BridgeError("TIMEOUT", `request "${p.method}" timed out after ${what}${meanwhile}`, {
          details: { method: p.method, timeoutMs: p.timeoutMs },
        }),
      );
    }, capped);
  }
}
