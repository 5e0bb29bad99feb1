/**
 * One side of the benchmark (raw or ours), in a process of its own so that its peak RSS
 * belongs to that client alone. Started by `scripts/bench.ts` with a {@link RunnerConfig} as
 * JSON in argv[2], it reads {@link RunnerCommand}s as JSON lines on stdin and answers each
 * with one JSON line on stdout. Taking orders one section round at a time lets the parent
 * interleave raw and ours rounds, so drift on a shared machine hits both sides alike.
 *
 * The raw runner never loads mcp-bridge: the client module is imported by mode.
 */
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { runInFlight, timeEach } from "./stats.ts";
import type { BenchClient, ConnectClient, RunnerAnswers, RunnerCommand, RunnerConfig, ServerCommand } from "./types.ts";

const MIB = 1024 * 1024;

/**
 * Peak resident set size of this process so far, MB. Linux: VmHWM of /proc/self/status.
 * Not getrusage's maxRSS: Linux carries that over fork and exec, so a child starts with its
 * parent's peak. Elsewhere: the largest RSS seen by a 5 ms sampler.
 */
function rssMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (hwm) return Number(hwm[1]) / 1024;
  } catch {
    // no /proc
  }
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
  return sampledPeak / (1024 * 1024);
}

let sampledPeak = 0;
if (!existsSync("/proc/self/status")) {
  setInterval(() => (sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss())), 5).unref();
}

async function loadConnect(mode: RunnerConfig["mode"]): Promise<ConnectClient> {
  if (mode === "raw") return (await import("./raw-client.ts")).connectRaw;
  return (await import("./ours-client.ts")).connectOurs;
}

class Runner {
  private readonly pids: number[] = [];
  private steady: Promise<BenchClient> | undefined;
  private many: Promise<BenchClient> | undefined;
  private baseTools: number | undefined;
  private readonly payloads = new Map<number, string>();

  constructor(
    private readonly config: RunnerConfig,
    private readonly connectOnce: ConnectClient,
  ) {}

  async handle(c: RunnerCommand): Promise<RunnerAnswers[RunnerCommand["cmd"]]> {
    switch (c.cmd) {
      case "spawn":
        return { ms: await this.coldStart(c.variant) };
      case "sequential": {
        const client = await this.steadyClient();
        return withCpu(client.pid, async () => {
          const start = performance.now();
          const latenciesMs = await timeEach(c.budget, () => echoHello(client));
          return { latenciesMs, elapsedMs: performance.now() - start };
        });
      }
      case "inFlight": {
        const client = await this.steadyClient();
        return withCpu(client.pid, () => runInFlight(c.concurrency, c.budget, () => echoHello(client)));
      }
      case "list": {
        this.many ??= this.connect(this.config.manyToolsServer);
        const many = await this.many;
        await this.steadyClient(); // for baseTools
        let tools = 0;
        const timesMs = await timeEach({ iterations: c.runs, ms: Number.POSITIVE_INFINITY }, async () => {
          tools = await many.listTools();
        });
        return { timesMs, tools, baseTools: this.baseTools! };
      }
      case "payload": {
        const client = await this.steadyClient();
        let text = this.payloads.get(c.mib);
        if (text === undefined) this.payloads.set(c.mib, (text = "x".repeat(c.mib * MIB)));
        let ok = true;
        const timesMs: number[] = [];
        for (let i = 0; i < c.runs; i++) {
          // Collect the previous echo's garbage now, not inside the timed call (--expose-gc).
          (globalThis as { gc?: () => void }).gc?.();
          const t0 = performance.now();
          if ((await client.echo(text)) !== text) ok = false;
          timesMs.push(performance.now() - t0);
        }
        return { timesMs, ok };
      }
      case "rss":
        return { maxRssMb: rssMb() };
      case "quit":
        await this.closeAll();
        return { serverPids: this.pids };
    }
  }

  async closeAll(): Promise<void> {
    const open = [this.steady, this.many];
    this.steady = this.many = undefined;
    for (const p of open) {
      const client = await p?.catch(() => undefined);
      await client?.close().catch(() => undefined);
    }
  }

  private async connect(server: ServerCommand): Promise<BenchClient> {
    const client = await this.connectOnce(server);
    if (client.pid !== undefined) this.pids.push(client.pid);
    return client;
  }

  private async steadyClient(): Promise<BenchClient> {
    if (!this.steady) {
      this.steady = this.connect(this.config.server).then(async (client) => {
        this.baseTools = await client.listTools();
        return client;
      });
    }
    return this.steady;
  }

  /** Spawn + initialize + tools/list of a fresh server; closing it is not timed. */
  private async coldStart(variant: string): Promise<number> {
    const server = this.config.spawnServers[variant];
    if (!server) throw new Error(`no server for spawn variant ${JSON.stringify(variant)}`);
    const t0 = performance.now();
    const client = await this.connect(server);
    try {
      await client.listTools();
      return performance.now() - t0;
    } finally {
      await client.close();
    }
  }
}

/**
 * CPU time of process `pid` so far, ms, from Linux's /proc: `schedstat` (nanoseconds) where
 * the kernel keeps it, else `stat` (utime + stime in 10 ms ticks). Undefined without /proc.
 */
function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    // no schedstat: fall back to stat
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name (which may hold spaces) start after the last ')';
    // utime and stime are fields 14 and 15 of the line, in USER_HZ ticks (100 per second).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Long enough for the server to answer its last call and go idle (its CPU time is then current). */
const SETTLE_MS = 20;

/** Runs `body` and adds the CPU time this process and the server spent meanwhile. */
async function withCpu<T extends object>(
  serverPid: number | undefined,
  body: () => Promise<T>,
): Promise<T & { clientCpuMs: number; serverCpuMs: number | null }> {
  const server0 = processCpuMs(serverPid);
  const client0 = process.cpuUsage();
  const result = await body();
  const client = process.cpuUsage(client0);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const server1 = processCpuMs(serverPid);
  const serverCpuMs = server0 === undefined || server1 === undefined ? null : server1 - server0;
  return { ...result, clientCpuMs: (client.user + client.system) / 1000, serverCpuMs };
}

async function echoHello(client: BenchClient): Promise<void> {
  if ((await client.echo("hello")) !== "hello") throw new Error("echo answered the wrong text");
}

const config = JSON.parse(process.argv[2] ?? "null") as RunnerConfig | null;
if (!config || (config.mode !== "raw" && config.mode !== "ours")) {
  process.stderr.write("client-runner: argv[2] must be a RunnerConfig as JSON\n");
  process.exit(2);
}
const runner = new Runner(config, await loadConnect(config.mode));
const reply = (line: object): void => void process.stdout.write(`${JSON.stringify(line)}\n`);
const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
// Commands run one at a time: the parent waits for each answer before sending the next.
for await (const line of lines) {
  if (line.trim() === "") continue;
  const command = JSON.parse(line) as RunnerCommand;
  try {
    reply({ ok: true, value: await runner.handle(command) });
  } catch (err) {
    reply({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
  if (command.cmd === "quit") break;
}
// stdin closed (or quit): never leave a server behind.
await runner.closeAll();
