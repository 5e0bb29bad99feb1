/**
 * The open sessions of a Streamable HTTP server: each with its idle clock, in an order of use
 * that picks the session to evict when the server is full. The server adds and looks up
 * sessions; this table expires and evicts them.
 */
import type { StreamableHttpSessionTransport } from "./http-session.ts";

/** One open session. */
export interface SessionEntry {
  readonly id: string;
  readonly transport: StreamableHttpSessionTransport;
  /** Its idle clock; see {@link SessionTable.armIdle}. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When it was last used, on the server's activity counter (higher is more recent). */
  lastUsed: number;
  /** Until its initialize POST is handed over: never evicted meanwhile. */
  opening: boolean;
}

/** Sessions by id, their idle clocks and their order of use. */
export class SessionTable {
  private readonly entries = new Map<string, SessionEntry>();
  private readonly idleMs: number;
  /** Counts uses of sessions: an order for "idle the longest" that needs no clock. */
  private activity = 0;

  constructor(idleMs: number) {
    this.idleMs = idleMs;
  }

  get size(): number {
    return this.entries.size;
  }

  get(id: string): SessionEntry | undefined {
    return this.entries.get(id);
  }

  transports(): StreamableHttpSessionTransport[] {
    return [...this.entries.values()].map((e) => e.transport);
  }

  /** Adds a session still opening (never evicted until `opening` is cleared), its clock running. */
  add(id: string, transport: StreamableHttpSessionTransport): SessionEntry {
    const entry: SessionEntry = { id, transport, timer: undefined, lastUsed: ++this.activity, opening: true };
    this.armIdle(entry);
    this.entries.set(id, entry);
    return entry;
  }

  /** Forgets the session `id` if `transport` is still the one registered under it. */
  remove(id: string, transport: StreamableHttpSessionTransport): void {
    const entry = this.entries.get(id);
    if (entry?.transport !== transport) return;
    clearTimeout(entry.timer);
    this.entries.delete(id);
  }

  /** The session was used now: it moves to the back of the eviction order and its idle clock restarts. */
  touch(entry: SessionEntry): void {
    entry.lastUsed = ++this.activity;
    this.armIdle(entry);
  }

  /**
   * (Re)starts a session's idle clock. A new timer rather than `refresh()`: the cost is alike,
   * and `mock.timers`, the clock the tests drive, does not implement `refresh()`
   * (docs/decisions.md 104).
   */
  private armIdle(entry: SessionEntry): void {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.expire(entry.id), this.idleMs);
    entry.timer.unref();
  }

  /**
   * Closes the session idle the longest, so that a full server still admits a new client
   * (idle clients cannot lock it out). Sessions with a request in flight, or still opening,
   * are spared; false when that is all of them.
   */
  evictIdlest(): boolean {
    let idlest: SessionEntry | undefined;
    for (const entry of this.entries.values()) {
      if (entry.opening || entry.transport.answering) continue;
      if (idlest === undefined || entry.lastUsed < idlest.lastUsed) idlest = entry;
    }
    // close() ends its responses (a GET stream included) and removes it from the map at once.
    if (idlest !== undefined) void idlest.transport.close();
    return idlest !== undefined;
  }

  private expire(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    // An open response (a GET stream, a POST still answering) keeps the session alive, and so
    // does its initialize still being handed over: `onSession` may take longer than the idle
    // time (a gateway starts the session's upstream processes there).
    if (entry.opening || entry.transport.busy) this.armIdle(entry);
    else void entry.transport.close();
  }
}
