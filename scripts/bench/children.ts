/**
 * The benchmark's ledger of child processes: every runner and server it started, so that the
 * end of a run can check that none survived and kill those that did.
 */

interface Child {
  pid: number;
  /** Our servers lead their own process group (StdioClientTransport spawns them detached). */
  group: boolean;
}

export class ChildLedger {
  private readonly children: Child[] = [];

  /** Records `pids`; `group`: also check (and kill) each pid's process group. */
  track(pids: readonly number[], group: boolean): void {
    for (const pid of pids) this.children.push({ pid, group });
  }

  /** How many distinct pids were recorded. */
  get started(): number {
    return new Set(this.children.map((c) => c.pid)).size;
  }

  /** SIGKILLs whatever survived (by pid, and process group for our servers); returns those pids. */
  reapLeftovers(): number[] {
    const leftover = this.children.filter(alive);
    for (const c of leftover) {
      for (const target of targets(c)) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    return [...new Set(leftover.map((c) => c.pid))];
  }
}

function targets(c: Child): number[] {
  return c.group ? [c.pid, -c.pid] : [c.pid];
}

function alive(c: Child): boolean {
  return targets(c).some((target) => {
    try {
      process.kill(target, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM";
    }
  });
}
