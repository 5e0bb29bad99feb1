/**
 * The prompts and resources changes a manager passes on: a server's
 * `notifications/prompts/list_changed` and `notifications/resources/list_changed`, at most one
 * per server and list per debounce window, so a server that floods them costs its listeners
 * one event per window (the manager's tool list is debounced the same way).
 */
import type { ListChange } from "./events.ts";

export class ListChanges {
  private readonly debounceMs: number;
  private readonly emit: (change: ListChange) => void;
  /** Pending changes by `<list> <server>`, each with its timer. */
  private readonly pending = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(debounceMs: number | undefined, emit: (change: ListChange) => void) {
    this.debounceMs = debounceMs ?? 100;
    this.emit = emit;
  }

  /** Reports `change` once the window after the first change of its server and list ends. */
  changed(change: ListChange): void {
    const key = `${change.list} ${change.server}`;
    if (this.pending.has(key)) return;
    const timer = setTimeout(() => {
      this.pending.delete(key);
      this.emit(change);
    }, this.debounceMs);
    timer.unref?.();
    this.pending.set(key, timer);
  }

  /** Drops what is pending (the manager closes). */
  stop(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
