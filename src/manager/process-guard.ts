/**
 * No child outlives the parent. While at least one manager is open, this module keeps three
 * process handlers installed (once per process, however many managers there are):
 *
 * - `exit`: only synchronous work is possible, so every live child's process group gets
 *   SIGKILL at once.
 * - `SIGINT` / `SIGTERM`: every manager is closed (gracefully, bounded by
 *   {@link GUARD_CLOSE_TIMEOUT_MS}), what is left is killed, our handlers are removed, and the
 *   signal is raised again so the process ends the way it would have without us. If the
 *   application has its own listener for that signal, it decided what the signal means and we
 *   do not raise it again. A second signal during the cleanup kills at once and re-raises.
 *
 * Handlers are reference-counted: the last manager to close removes them.
 */

/** What the guard needs from a manager. */
export interface GuardTarget {
  /** SIGKILLs every live child (and its process group) synchronously. Must not throw. */
  killChildrenSync(): void;
  /** Closes gracefully (children stopped). */
  close(): Promise<void>;
}

/** How long a signal waits for managers to close before killing what is left. */
const GUARD_CLOSE_TIMEOUT_MS = 5_000;

const SIGNALS = ["SIGINT", "SIGTERM"] as const;
type GuardedSignal = (typeof SIGNALS)[number];

const targets = new Set<GuardTarget>();
let installed = false;
let cleaningUp: GuardedSignal | undefined;

const onExit = (): void => killAllSync();
const onSignal = (signal: GuardedSignal): void => {
  if (cleaningUp !== undefined) {
    // Asked twice: stop waiting.
    killAllSync();
    reraise(signal);
    return;
  }
  cleaningUp = signal;
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    killAllSync();
    reraise(signal);
  };
  const timer = setTimeout(finish, GUARD_CLOSE_TIMEOUT_MS);
  void Promise.allSettled([...targets].map((t) => t.close())).then(finish);
};
const signalHandlers: Record<GuardedSignal, () => void> = {
  SIGINT: () => onSignal("SIGINT"),
  SIGTERM: () => onSignal("SIGTERM"),
};

/**
 * Registers `target` for the life of the process or until the returned function is called
 * (call it when the manager has closed). Installs the handlers on the first registration.
 */
export function guardProcess(target: GuardTarget): () => void {
  targets.add(target);
  install();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    targets.delete(target);
    // During a signal's cleanup the handlers stay until it re-raises.
    if (targets.size === 0 && cleaningUp === undefined) uninstall();
  };
}

/** Number of registered targets (for tests and diagnostics). */
export function guardedCount(): number {
  return targets.size;
}

/** Whether the handlers are installed. */
export function guardInstalled(): boolean {
  return installed;
}

/**
 * SIGKILLs the process group led by `pid` and `pid` itself. Synchronous; never throws (a
 * process that is already gone is fine). Children spawned by the stdio transport lead their
 * own group, so this also reaches `npx`-style grandchildren.
 */
export function killProcessTreeSync(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) return;
  if (process.platform !== "win32") {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // no such group
    }
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on("exit", onExit);
  for (const signal of SIGNALS) process.on(signal, signalHandlers[signal]);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off("exit", onExit);
  for (const signal of SIGNALS) process.off(signal, signalHandlers[signal]);
}

function killAllSync(): void {
  for (const target of targets) {
    try {
      target.killChildrenSync();
    } catch {
      // One manager's failure must not spare the others' children.
    }
  }
}

function reraise(signal: GuardedSignal): void {
  cleaningUp = undefined;
  uninstall();
  if (process.listenerCount(signal) > 0) {
    // The application handles the signal and lives on: keep guarding what is still open.
    if (targets.size > 0) install();
    return;
  }
  process.kill(process.pid, signal);
}

/**
 * Checks that `pid` (a child we spawned and have just closed) and its process group are gone,
 * and SIGKILLs whatever is left. Call it right after the close completed, never later: only
 * then can the pid not have been reused by an unrelated process. Returns whether it killed.
 */
export function ensureGone(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const exists = (target: number): boolean => {
    try {
      process.kill(target, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  };
  const groupLeft = process.platform !== "win32" && exists(-pid);
  if (!exists(pid) && !groupLeft) return false;
  killProcessTreeSync(pid);
  return true;
}
