/**
 * The runner's side of the manager section (loaded by the ours runner only, on first use):
 * McpManager.connect of N stdio echo servers, and sequential echoes through
 * McpManager.callTool against the same echoes through a plain McpClient, call by call in turn.
 *
 * The managers are set up so nothing but the bridge itself is measured: servers `trusted`
 * (and an approver that answers `allow_always`, should trust ever not be enough), no rate
 * limit, no process guard (the runner closes every manager itself).
 */
import type { McpServerConfig } from "../../src/config/types.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { connectOurs } from "./ours-client.ts";
import type { Budget } from "./stats.ts";
import type { BenchClient, ServerCommand } from "./types.ts";

/** The bridged name of the echo fixture's `echo` on the server named "echo". */
const BRIDGED_ECHO = "mcp__echo__echo";

function newManager(): McpManager {
  return new McpManager({ rateLimit: false, processGuard: false, approve: () => "allow_always" });
}

function configs(server: ServerCommand, names: readonly string[]): McpServerConfig[] {
  return names.map((name) => ({ name, transport: "stdio", command: server.command, args: server.args, trust: "trusted" }));
}

/** Pids of the manager's servers, after checking every one is ready. */
function readyPids(manager: McpManager, expected: number): number[] {
  const status = manager.status();
  const notReady = status.filter((s) => s.state !== "ready");
  if (status.length !== expected || notReady.length > 0) {
    const why = notReady.map((s) => `${s.name}: ${s.state}${s.lastError ? ` (${s.lastError})` : ""}`).join("; ");
    throw new Error(`McpManager: ${expected - notReady.length} of ${expected} servers ready; ${why}`);
  }
  return status.flatMap((s) => (s.pid === undefined ? [] : [s.pid]));
}

export class ManagerBench {
  private bridged: Promise<{ manager: McpManager }> | undefined;
  private plain: Promise<BenchClient> | undefined;
  private readonly server: ServerCommand;
  private readonly fleetServer: ServerCommand;
  private readonly serverStarted: (pid: number) => void;

  /**
   * @param server the echo server the call rounds use (both ways)
   * @param fleetServer the echo server `connect` starts N of (not profiled)
   * @param serverStarted told every server pid started (leftover check, pinning)
   */
  constructor(server: ServerCommand, fleetServer: ServerCommand, serverStarted: (pid: number) => void) {
    this.server = server;
    this.fleetServer = fleetServer;
    this.serverStarted = serverStarted;
  }

  /** A fresh manager connecting `n` servers in parallel; timed until connect() resolves. */
  async connect(n: number): Promise<{ ms: number }> {
    const manager = newManager();
    try {
      const t0 = performance.now();
      await manager.connect(configs(this.fleetServer, Array.from({ length: n }, (_, i) => `echo${i}`)));
      const ms = performance.now() - t0;
      for (const pid of readyPids(manager, n)) this.serverStarted(pid);
      return { ms };
    } finally {
      await manager.close();
    }
  }

  /**
   * Sequential echoes, one plain and one bridged in turn (which goes first alternates), so both
   * servers stay equally warm and drift on a shared machine hits both alike. Latencies in ms.
   */
  async calls(budget: Budget): Promise<{ plainMs: number[]; bridgedMs: number[] }> {
    const { manager } = await this.bridgedManager();
    this.plain ??= connectOurs(this.server).then((client) => {
      if (client.pid !== undefined) this.serverStarted(client.pid);
      return client;
    });
    const client = await this.plain;
    const plainMs: number[] = [];
    const bridgedMs: number[] = [];
    const plainCall = async (): Promise<void> => {
      const t0 = performance.now();
      const text = await client.echo("hello");
      plainMs.push(performance.now() - t0);
      if (text !== "hello") throw new Error("plain echo answered the wrong text");
    };
    const bridgedCall = async (): Promise<void> => {
      const t0 = performance.now();
      const result = await manager.callTool(BRIDGED_ECHO, { text: "hello" });
      bridgedMs.push(performance.now() - t0);
      if (result.isError || result.text !== "hello") throw new Error(`bridged echo answered ${JSON.stringify(result.text)}`);
    };
    const stop = performance.now() + budget.ms;
    for (let i = 0; i < budget.iterations && (i === 0 || performance.now() < stop); i++) {
      if (i % 2 === 0) {
        await plainCall();
        await bridgedCall();
      } else {
        await bridgedCall();
        await plainCall();
      }
    }
    return { plainMs, bridgedMs };
  }

  async close(): Promise<void> {
    const [bridged, plain] = [this.bridged, this.plain];
    this.bridged = this.plain = undefined;
    await (await bridged?.catch(() => undefined))?.manager.close();
    await (await plain?.catch(() => undefined))?.close().catch(() => undefined);
  }

  private bridgedManager(): Promise<{ manager: McpManager }> {
    this.bridged ??= (async () => {
      const manager = newManager();
      try {
        await manager.connect(configs(this.server, ["echo"]));
        for (const pid of readyPids(manager, 1)) this.serverStarted(pid);
        return { manager };
      } catch (err) {
        await manager.close();
        throw err;
      }
    })();
    return this.bridged;
  }
}

