/**
 * The runner's side of the manager section (loaded by the ours runner only, on first use):
 * McpManager.connect of N stdio echo servers, and sequential echoes through
 * McpManager.callTool against the same echoes through a plain McpClient, call by call in turn.
 *
 * Two managers call: one set up so that nothing but the bridge itself is measured (server
 * `trusted`), and the default path a user gets for a server from a config file (`untrusted`:
 * results wrapped in markers and scanned for injection, first-use approval, which the
 * approver grants with `allow_always`). Both without a rate limit (its default, 100 calls a
 * minute, would refuse the benchmark's calls rather than cost time) and without the process
 * guard (the runner closes every manager itself).
 */
import type { McpServerConfig, TrustLevel } from "../../src/config/types.ts";
import { McpManager } from "../../src/manager/manager.ts";
import { connectOurs } from "./ours-client.ts";
import type { Budget } from "./stats.ts";
import type { BenchClient, ServerCommand } from "./types.ts";

/** The bridged name of the echo fixture's `echo` on the server named "echo". */
const BRIDGED_ECHO = "mcp__echo__echo";

function newManager(): McpManager {
  // The handshake era, like the plain client it is compared with (ours-client.ts).
  return new McpManager({ rateLimit: false, processGuard: false, approve: () => "allow_always", era: "legacy" });
}

function configs(server: ServerCommand, names: readonly string[], trust: TrustLevel = "trusted"): McpServerConfig[] {
  return names.map((name) => ({ name, transport: "stdio", command: server.command, args: server.args, trust }));
}

/** The calls of one round, ms each, by kind. */
export interface ManagerCallTimes {
  plainMs: number[];
  bridgedMs: number[];
  untrustedMs: number[];
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
  private untrusted: Promise<{ manager: McpManager }> | undefined;
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
   * Sequential echoes, one of each kind in turn (plain, bridged, untrusted; which goes first
   * rotates), so all three servers stay equally warm and drift on a shared machine hits them
   * alike. Latencies in ms.
   */
  async calls(budget: Budget): Promise<ManagerCallTimes> {
    const { manager } = await (this.bridged ??= this.startManager("trusted"));
    const { manager: untrusted } = await (this.untrusted ??= this.startManager("untrusted"));
    this.plain ??= connectOurs(this.server).then((client) => {
      if (client.pid !== undefined) this.serverStarted(client.pid);
      return client;
    });
    const client = await this.plain;
    const out: ManagerCallTimes = { plainMs: [], bridgedMs: [], untrustedMs: [] };
    const timed = async (into: number[], call: () => Promise<void>): Promise<void> => {
      const t0 = performance.now();
      await call();
      into.push(performance.now() - t0);
    };
    const kinds = [
      () =>
        timed(out.plainMs, async () => {
          const text = await client.echo("hello");
          if (text !== "hello") throw new Error("plain echo answered the wrong text");
        }),
      () =>
        timed(out.bridgedMs, async () => {
          const result = await manager.callTool(BRIDGED_ECHO, { text: "hello" });
          if (result.isError || result.text !== "hello") throw new Error(`bridged echo answered ${JSON.stringify(result.text)}`);
        }),
      () =>
        timed(out.untrustedMs, async () => {
          // Wrapped in untrusted-content markers: the echo is inside them.
          const result = await untrusted.callTool(BRIDGED_ECHO, { text: "hello" });
          if (result.isError || !result.text.includes("hello")) throw new Error(`untrusted echo answered ${JSON.stringify(result.text)}`);
        }),
    ];
    const stop = performance.now() + budget.ms;
    for (let i = 0; i < budget.iterations && (i === 0 || performance.now() < stop); i++) {
      for (let k = 0; k < kinds.length; k++) await kinds[(i + k) % kinds.length]!();
    }
    return out;
  }

  async close(): Promise<void> {
    const [bridged, untrusted, plain] = [this.bridged, this.untrusted, this.plain];
    this.bridged = this.untrusted = this.plain = undefined;
    for (const m of [bridged, untrusted]) await (await m?.catch(() => undefined))?.manager.close();
    await (await plain?.catch(() => undefined))?.close().catch(() => undefined);
  }

  /** A manager with one echo server of that trust, connected. */
  private async startManager(trust: TrustLevel): Promise<{ manager: McpManager }> {
    const manager = newManager();
    try {
      await manager.connect(configs(this.server, ["echo"], trust));
      for (const pid of readyPids(manager, 1)) this.serverStarted(pid);
      return { manager };
    } catch (err) {
      await manager.close();
      throw err;
    }
  }
}
