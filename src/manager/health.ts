/**
 * Two small parts of a server connection that stand on their own:
 *
 * - {@link HealthMonitor}: pings a ready server every `intervalMs`; after `failures` failed
 *   pings in a row it reports the server as hung, once. Its timer never keeps the process alive.
 * - {@link ChildTracker}: the transports a connection has created and not yet completely
 *   closed. It closes them (checking afterwards that each process is gone), kills them all
 *   synchronously for the process guard, and lets `close()` wait until every one is done.
 */
import { errorMessage } from "../jsonrpc/errors.ts";
import type { McpClient } from "../mcp/client.ts";
import type { Transport } from "../transport/transport.ts";
import { ensureGone, killProcessTreeSync } from "./process-guard.ts";
import { transportPid } from "./transport-factory.ts";

/** Periodic `ping` of a ready server. Off unless `intervalMs` is set. */
export interface HealthOptions {
  /** Time between pings, ms. Default 0 (off). */
  intervalMs?: number;
  /** Time a ping may take, ms. Default 5000. */
  timeoutMs?: number;
  /** Failed pings in a row that count as a hang and restart the server. Default 3. */
  failures?: number;
}

export class HealthMonitor {
  private timer: ReturnType<typeof setInterval> | undefined;
  private client: McpClient | undefined;
  private failed = 0;
  private pinging = false;

  private readonly options: Required<HealthOptions>;
  /** Each failed ping (`count` in a row of `limit`). */
  private readonly onFailure: (count: number, limit: number, reason: string) => void;
  /** `limit` pings in a row failed; the monitor has stopped. */
  private readonly onUnhealthy: (limit: number) => void;

  constructor(
    options: HealthOptions,
    onFailure: (count: number, limit: number, reason: string) => void,
    onUnhealthy: (limit: number) => void,
  ) {
    this.options = { intervalMs: options.intervalMs ?? 0, timeoutMs: options.timeoutMs ?? 5_000, failures: options.failures ?? 3 };
    this.onFailure = onFailure;
    this.onUnhealthy = onUnhealthy;
  }

  /** Starts watching `client` (a no-op when no interval is configured). */
  start(client: McpClient): void {
    this.stop();
    const interval = this.options.intervalMs;
    if (!(interval > 0)) return;
    this.client = client;
    this.failed = 0;
    this.timer = setInterval(() => void this.ping(client), interval);
    this.timer.unref?.();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.client = undefined;
  }

  private async ping(client: McpClient): Promise<void> {
    if (this.pinging || client !== this.client) return;
    this.pinging = true;
    try {
      await client.ping({ timeoutMs: this.options.timeoutMs });
      if (client === this.client) this.failed = 0;
    } catch (err) {
      if (client !== this.client) return;
      this.failed++;
      const limit = this.options.failures;
      this.onFailure(this.failed, limit, errorMessage(err));
      if (this.failed >= limit) {
        this.stop();
        this.onUnhealthy(limit);
      }
    } finally {
      this.pinging = false;
    }
  }
}

export class ChildTracker {
  private readonly live = new Set<Transport>();
  private readonly closing = new Set<Promise<void>>();

  /** Tracks a transport from creation (before it spawns anything). */
  add(transport: Transport): void {
    this.live.add(transport);
  }

  /**
   * Closes the client, then its transport, then checks the process (group) is gone and kills
   * what is left. Runs in the background; {@link drain} waits for it.
   */
  retire(client: McpClient, transport: Transport | undefined): void {
    const done = (async () => {
      await client.close().catch(() => undefined);
      if (transport === undefined) return;
      await transport.close().catch(() => undefined);
      this.live.delete(transport);
      const pid = transportPid(transport);
      if (pid !== undefined) ensureGone(pid);
    })();
    this.closing.add(done);
    void done.finally(() => this.closing.delete(done));
  }

  /** SIGKILLs the process group of every tracked transport that spawned one. */
  killAllSync(): void {
    for (const transport of this.live) {
      const pid = transportPid(transport);
      if (pid !== undefined) killProcessTreeSync(pid);
    }
  }

  /** Resolves when every retirement started so far (and any started meanwhile) is done. */
  async drain(): Promise<void> {
    while (this.closing.size > 0) await Promise.allSettled([...this.closing]);
  }
}
