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
import { pinToCpu, processCpuMs, withCpu } from "./cpu.ts";
import type { ManagerBench } from "./manager-runner.ts";
import { runInFlight, timeEach } from "./stats.ts";
import type { BenchClient, ConnectClient, RunnerAnswers, RunnerCommand, RunnerConfig, ServerCommand, Via } from "./types.ts";

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

/** MaxListenersExceeded warnings seen so far (a listener leak shows up as one). */
let maxListenersWarnings = 0;
process.on("warning", (w) => {
  if (w.name === "MaxListenersExceededWarning") maxListenersWarnings++;
});

/** The client module of a mode and transport; HTTP ones are loaded on first use. */
async function loadConnect(mode: RunnerConfig["mode"], via: Via): Promise<ConnectClient> {
  if (via === "http") {
    if (mode === "raw") return (await import("./raw-http-client.ts")).connectRawHttp;
    return (await import("./ours-http-client.ts")).connectOursHttp;
  }
  if (via === "http-stateless") {
    if (mode === "raw") return (await import("./raw-http-client.ts")).connectRawHttpStateless;
    return (await import("./ours-http-client.ts")).connectOursHttpStateless;
  }
  if (mode === "raw") return (await import("./raw-client.ts")).connectRaw;
  return (await import("./ours-client.ts")).connectOurs;
}

class Runner {
  private readonly pids: number[] = [];
  private steady: Promise<BenchClient> | undefined;
  private many: Promise<BenchClient> | undefined;
  private readonly http = new Map<Via, Promise<BenchClient>>();
  private manager: ManagerBench | undefined;
  private baseTools: number | undefined;
  private readonly payloads = new Map<number, string>();
  private readonly config: RunnerConfig;
  private readonly connectOnce: ConnectClient;

  constructor(config: RunnerConfig, connectOnce: ConnectClient) {
    this.config = config;
    this.connectOnce = connectOnce;
  }

  async handle(c: RunnerCommand): Promise<RunnerAnswers[RunnerCommand["cmd"]]> {
    switch (c.cmd) {
      case "spawn":
        return this.coldStart(c.variant);
      case "sequential": {
        const client = await this.callClient(c.via);
        return withCpu(client.pid, async () => {
          const start = performance.now();
          const latenciesMs = await timeEach(c.budget, () => echoHello(client));
          return { latenciesMs, elapsedMs: performance.now() - start };
        });
      }
      case "inFlight": {
        const client = await this.callClient(c.via);
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
      case "httpProbe": {
        const client = await this.callClient("http");
        if (!client.probe) throw new Error("the HTTP client has no probe");
        return { ...client.probe(), maxListenersWarnings };
      }
      case "managerConnect":
        return (await this.managerBench()).connect(c.servers);
      case "managerCalls":
        return (await this.managerBench()).calls(c.budget);
      case "gatewaySessions":
        return (await import("./gateway-sessions.ts")).measureSessions(this.config.httpServer, c.count, (pid) => this.serverStarted(pid));
      case "rss":
        return { maxRssMb: rssMb() };
      case "env":
        return { names: Object.keys(process.env).sort() };
      case "quit":
        await this.closeAll();
        return { serverPids: this.pids };
    }
  }

  async closeAll(): Promise<void> {
    const open = [this.steady, this.many, ...this.http.values()];
    this.steady = this.many = undefined;
    this.http.clear();
    const manager = this.manager;
    this.manager = undefined;
    await manager?.close().catch(() => undefined);
    for (const p of open) {
      const client = await p?.catch(() => undefined);
      await client?.close().catch(() => undefined);
    }
  }

  private async connect(server: ServerCommand, connect: ConnectClient = this.connectOnce): Promise<BenchClient> {
    const client = await connect(server);
    if (client.pid !== undefined) this.serverStarted(client.pid);
    return client;
  }

  /** Records a server for the leftover check and pins it (when the config asks). */
  private serverStarted(pid: number): void {
    this.pids.push(pid);
    const pin = this.config.pin;
    if (pin && !pinToCpu(pid, pin.server)) process.stderr.write(`client-runner: could not pin server ${pid} to CPU ${pin.server}\n`);
  }

  /** The client of the call sections: the steady stdio one, or one over Streamable HTTP (either era). */
  private callClient(via: Via): Promise<BenchClient> {
    if (via === "stdio") return this.steadyClient();
    let client = this.http.get(via);
    if (client === undefined) {
      client = loadConnect(this.config.mode, via).then((connect) => this.connect(this.config.httpServer, connect));
      this.http.set(via, client);
    }
    return client;
  }

  /** The manager section (ours only): its module is loaded on first use. */
  private async managerBench(): Promise<ManagerBench> {
    if (this.config.mode !== "ours") throw new Error("the manager section runs on the ours side only");
    if (!this.manager) {
      const { ManagerBench } = await import("./manager-runner.ts");
      this.manager ??= new ManagerBench(this.config.server, this.config.spawnServers.node ?? this.config.server, (pid) => this.serverStarted(pid));
    }
    return this.manager;
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
  /**
   * Spawn + initialize + tools/list of a fresh server; closing it is not timed. The server is
   * not pinned (pinning, a `taskset` run, would land inside the timed part on both sides and
   * shrink the ratio; the server lives for one listing). CPU time: this process's over the
   * timed part, plus the server's whole life up to its answer (Linux /proc; null elsewhere).
   */
  private async coldStart(variant: string): Promise<RunnerAnswers["spawn"]> {
    const server = this.config.spawnServers[variant];
    if (!server) throw new Error(`no server for spawn variant ${JSON.stringify(variant)}`);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const client = await this.connectOnce(server);
    try {
      await client.listTools();
      const ms = performance.now() - t0;
      const own = process.cpuUsage(cpu0);
      const serverCpu = processCpuMs(client.pid);
      return { ms, cpuMs: serverCpu === undefined ? null : serverCpu + (own.user + own.system) / 1000 };
    } finally {
      if (client.pid !== undefined) this.pids.push(client.pid);
      await client.close();
    }
  }
}

async function echoHello(client: BenchClient): Promise<void> {
  if ((await client.echo("hello")) !== "hello") throw new Error("echo answered the wrong text");
}

const config = JSON.parse(process.argv[2] ?? "null") as RunnerConfig | null;
if (!config || (config.mode !== "raw" && config.mode !== "ours")) {
  process.stderr.write("client-runner: argv[2] must be a RunnerConfig as JSON\n");
  process.exit(2);
}
if (config.pin && !pinToCpu(process.pid, config.pin.client)) {
  process.stderr.write(`client-runner: could not pin itself to CPU ${config.pin.client}\n`);
  process.exit(2);
}
const runner = new Runner(config, await loadConnect(config.mode, "stdio"));
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
