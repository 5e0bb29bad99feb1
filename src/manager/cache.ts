/**
 * A cache with a time-to-live, used for each server's tool schemas: `tools/list` is asked once
 * and then answered from memory until the entry expires, is invalidated (`list_changed`), or
 * the server reconnects. Servers that never send `list_changed` are still re-read after the TTL.
 *
 * Loads are single-flight (concurrent callers share one request), and an invalidation that
 * arrives while a load is in flight wins: the load's result is handed to its callers but not
 * stored, because it may predate the change the invalidation announced.
 */

/** Default lifetime of a cached tool list: 5 minutes. */
export const DEFAULT_TOOL_CACHE_TTL_MS = 5 * 60_000;

export interface TtlCacheOptions {
  /** Lifetime of an entry, ms; `Infinity` keeps entries until invalidated. Default 5 minutes. */
  ttlMs?: number;
  /** Clock, ms; injectable for tests. Default `Date.now`. */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  storedAt: number;
  /** This entry's lifetime, when shorter than the cache's. */
  ttlMs: number;
}

/**
 * ```ts
 * const cache = new TtlCache<string, Tool[]>({ ttlMs: 60_000 });
 * const tools = await cache.getOrLoad("fs", () => client.listTools());
 * cache.invalidate("fs"); // on notifications/tools/list_changed
 * ```
 */
export class TtlCache<K, V> {
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<K, Entry<V>>();
  private readonly loading = new Map<K, Promise<V>>();
  /** Bumped by every invalidation, so a load can tell it was overtaken. */
  private readonly generations = new Map<K, number>();

  constructor(options: TtlCacheOptions = {}) {
    const ttl = options.ttlMs ?? DEFAULT_TOOL_CACHE_TTL_MS;
    if (!(ttl >= 0)) throw new RangeError(`TtlCache: ttlMs must be >= 0, got ${ttl}`);
    this.ttlMs = ttl;
    this.now = options.now ?? Date.now;
  }

  /** The value if present and not expired. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && this.isFresh(entry) ? entry.value : undefined;
  }

  /** The value even if expired (but not if invalidated): the last known state. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** True when a value is present and not expired. */
  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** `ttlMs` shortens this entry's lifetime (a server's hint); it never lengthens it. */
  set(key: K, value: V, ttlMs?: number): void {
    this.entries.set(key, { value, storedAt: this.now(), ttlMs: ttlMs !== undefined && ttlMs > 0 ? Math.min(ttlMs, this.ttlMs) : this.ttlMs });
  }

  /** Drops the entry and disowns any load in flight for it. */
  invalidate(key: K): void {
    this.entries.delete(key);
    this.loading.delete(key);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
  }

  clear(): void {
    for (const key of [...this.entries.keys(), ...this.loading.keys()]) this.invalidate(key);
  }

  /**
   * The fresh value, or the result of `load` (stored unless invalidated meanwhile). Concurrent
   * calls for one key share a single `load`. A failed load stores nothing and rejects.
   */
  getOrLoad(key: K, load: () => Promise<V>, ttlOf?: (value: V) => number | undefined): Promise<V> {
    const fresh = this.get(key);
    if (fresh !== undefined) return Promise.resolve(fresh);
    const running = this.loading.get(key);
    if (running !== undefined) return running;
    const generation = this.generations.get(key) ?? 0;
    // Started a tick later, so `promise` exists before any callback below can run.
    const promise: Promise<V> = Promise.resolve()
      .then(load)
      .then((value) => {
        if ((this.generations.get(key) ?? 0) === generation) this.set(key, value, ttlOf?.(value));
        return value;
      })
      .finally(() => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
      });
    this.loading.set(key, promise);
    return promise;
  }

  private isFresh(entry: Entry<V>): boolean {
    return this.now() - entry.storedAt < entry.ttlMs;
  }
}
