/**
 * A roster of live objects (sessions, transports) that members join and leave without a hash
 * table. A Set that gains and loses one member per request reallocates its table whenever a
 * delete leaves it under a quarter full, which V8 does to shrink it: for a set that empties
 * after each request, that is twice per request, and it showed as ~6% of a stateless HTTP
 * server's CPU (docs/decisions.md 164). Here joining allocates one small entry and leaving
 * allocates nothing. Node-free, so every layer can use it.
 */

interface Entry<T> {
  value: T;
  prev: Entry<T> | undefined;
  next: Entry<T> | undefined;
  /** False once the entry has left, so that leaving twice is harmless. */
  listed: boolean;
}

export class Roster<T> {
  private head: Entry<T> | undefined;
  private count = 0;

  /** How many members are on the roster. */
  get size(): number {
    return this.count;
  }

  /** Puts `value` on the roster; returns the function that takes it off again (idempotent). */
  add(value: T): () => void {
    const entry: Entry<T> = { value, prev: undefined, next: this.head, listed: true };
    if (this.head !== undefined) this.head.prev = entry;
    this.head = entry;
    this.count++;
    return () => this.remove(entry);
  }

  /** The members, newest first: a copy, so the roster may change while it is used. */
  toArray(): T[] {
    const out: T[] = [];
    for (let e = this.head; e !== undefined; e = e.next) out.push(e.value);
    return out;
  }

  private remove(entry: Entry<T>): void {
    if (!entry.listed) return;
    entry.listed = false;
    if (entry.prev !== undefined) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next !== undefined) entry.next.prev = entry.prev;
    entry.prev = entry.next = undefined;
    this.count--;
  }
}
