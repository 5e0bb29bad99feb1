/**
 * A small typed event emitter with no Node dependency, so the core layers can raise events.
 * A throwing listener is isolated: it never stops the other listeners or the emitter's caller.
 */
export type Listener<T> = (payload: T) => void;

export class Emitter<Events extends { [K in keyof Events]: unknown }> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  /** How many listeners `event` has: lets a source skip building a payload nobody reads. */
  listenerCount<K extends keyof Events>(event: K): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  /** Calls every listener of `event`; returns how many there were. */
  emit<K extends keyof Events>(event: K, payload: Events[K]): number {
    const set = this.listeners.get(event);
    if (!set || set.size === 0) return 0;
    for (const l of [...set]) {
      try {
        (l as Listener<Events[K]>)(payload);
      } catch {
        // A listener's failure is its own; the event source must keep working.
      }
    }
    return set.size;
  }
}
