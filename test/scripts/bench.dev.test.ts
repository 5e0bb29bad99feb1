/**
 * The benchmark: a real `--quick --json` run must produce every figure as a finite number and
 * leave no process behind; the pure helpers (statistics, figures, profile summary) are checked
 * on fixed inputs. No timing is asserted anywhere.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { BenchReport } from "../../scripts/bench.ts";
import { buildHttpFigures, type HttpSideResult } from "../../scripts/bench/http.ts";
import { buildManagerFigures, type ManagerResult } from "../../scripts/bench/manager.ts";
import { summarizeProfile } from "../../scripts/bench/profile.ts";
import { buildFigures, compare, formatFigures, pairedRatio, type Figure } from "../../scripts/bench/report.ts";
import { median, medianInterval, percentile, runInFlight, timeEach } from "../../scripts/bench/stats.ts";
import { buildStartupFigures, type NodeVersion, type StartupResult } from "../../scripts/bench/startup.ts";
import type { SideResult } from "../../scripts/bench/types.ts";
import type { ImportTimeResult, PackageImportResult } from "../../scripts/bench/import-time.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BENCH = join(ROOT, "scripts", "bench.ts");

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Runs the benchmark with variables in its environment that must not reach what it measures:
 * a CA bundle (each Node start would read it) and one of our own.
 */
function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; pid: number }> {
  const env = { ...process.env, NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt", MCP_BRIDGE_BENCH_PROBE: "1" };
  const child = spawn(process.execPath, ["--import", "tsx", BENCH, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr, pid: child.pid! }));
  });
}

const EXPECTED_IDS = [
  ...["sequential", "inFlight"].flatMap((k) => [
    `${k}.callsPerSec`,
    `${k}.p50Ms`,
    `${k}.p99Ms`,
    `${k}.clientCpuUs`,
  ]),
  "rss.afterCalls",
  "rss.peak",
  "manyTools.ms",
  ...[1, 4, 16].flatMap((mib) => [`payload.${mib}MiB.ms`, `payload.${mib}MiB.mibPerSec`]),
  "payload.scaling",
  "import.nodeStartMs",
  "import.tsxStartMs",
  "import.bundleNodeMs",
  "import.bundleNodeWallMs",
  "import.addedNodeMs",
  "import.addedNodeWallMs",
  "import.emptyEntryWallMs",
  "import.addedTsxMs",
  "import.addedTsxWallMs",
  "import.fullIndexNodeMs",
  "import.fullIndexTsxMs",
  ...["sequential", "inFlight"].flatMap((k) => [`http.${k}.callsPerSec`, `http.${k}.p50Ms`, `http.${k}.p99Ms`, `http.${k}.clientCpuUs`]),
  ...["sequential", "inFlight"].flatMap((k) => [`http.stateless.${k}.callsPerSec`, `http.stateless.${k}.p50Ms`, `http.stateless.${k}.p99Ms`, `http.stateless.${k}.clientCpuUs`]),
  "http.agent.sockets",
  "http.agent.socketGrowth",
  "http.agent.listenerGrowth",
  "http.agent.maxListenersWarnings",
  "manager.connect.ms",
  "manager.call.usPerCall",
  "manager.call.p50Ms",
  "manager.call.p99Ms",
  "manager.untrusted.usPerCall",
  "manager.untrusted.p50Ms",
  "manager.untrusted.p99Ms",
  ...["stdio", "http"].flatMap((via) =>
    ["sequential", "inFlight"].flatMap((k) => [`gateway.${via}.${k}.callsPerSec`, `gateway.${via}.${k}.p50Ms`, `gateway.${via}.${k}.p99Ms`, `gateway.${via}.${k}.clientCpuUs`]),
  ),
  // 11f-g: the raw proxy against direct, and the gateway against the raw proxy (throughput).
  ...["hop", "overProxy"].flatMap((k) => ["stdio", "http"].flatMap((via) => ["sequential", "inFlight"].map((m) => `gateway.${k}.${via}.${m}.callsPerSec`))),
  "gateway.sessions.count",
  "gateway.sessions.kbPerSession",
  "gateway.sessions.rssOpenMb",
  "gateway.sessions.callsServed",
  "gateway.sessions.openMs",
];

/** The start-up figures one Node version must have (section 1 variants that ran, and section 1b). */
function startupIds(report: BenchReport): string[] {
  return report.startup.spawn.flatMap((v) => [
    ...Object.keys(v.ours).flatMap((variant) => [
      `spawn.${v.node.key}.${variant}.ms`,
      `spawn.${v.node.key}.${variant}.server.ms`,
      // CPU time needs Linux's /proc, which the runner reads.
      ...(v.ours[variant]!.cpuRoundMs ? [`spawn.${v.node.key}.${variant}.cpuMs`] : []),
    ]),
    `cli.${v.node.key}.bundle.ms`,
    `cli.${v.node.key}.dist.ms`,
  ]);
}

describe("npm run bench -- --quick --json", () => {
  test("prints every figure as a finite number and leaves no child running", { timeout: 180_000 }, async () => {
    const run = await runBench(["--quick", "--json"]);
    assert.equal(run.code, 0, `bench failed:\n${run.stderr}`);
    assert.ok(isGone(run.pid), "the bench process itself is gone");
    const report = JSON.parse(run.stdout) as BenchReport;

    // Server CPU per call needs Linux's /proc (exact with schedstat); everything else is always there.
    const ids = report.figures.map((f) => f.id);
    const gatewayCpu = ["hop", "overProxy"].flatMap((k) => [`gateway.${k}.stdio.`, `gateway.${k}.http.`]);
    const optional = ["", "http.", "http.stateless.", "gateway.stdio.", "gateway.http.", ...gatewayCpu].flatMap((p) => [`${p}sequential.serverCpuUs`, `${p}inFlight.serverCpuUs`]);
    assert.deepEqual(ids.filter((id) => !optional.includes(id)).sort(), [...EXPECTED_IDS, ...startupIds(report)].sort());
    if (existsSync("/proc/self/schedstat")) for (const id of optional) assert.ok(ids.includes(id), `${id} on Linux`);
    for (const f of report.figures) {
      const numbers = f.kind === "compare" ? { raw: f.raw, ours: f.ours, ratio: f.ratio } : { value: f.value };
      for (const [name, n] of Object.entries(numbers)) {
        assert.ok(Number.isFinite(n), `${f.id}.${name} is ${n}`);
      }
      if (f.target !== undefined) assert.equal(typeof f.pass, "boolean", `${f.id} has a target but no verdict`);
    }
    // Every target of the brief is reported.
    const targeted = report.figures.filter((f) => f.target !== undefined).map((f) => f.id);
    for (const id of ["sequential.callsPerSec", "inFlight.callsPerSec", "manyTools.ms", "payload.16MiB.ms", "import.bundleNodeMs", "http.sequential.callsPerSec", "manager.call.usPerCall", "manager.untrusted.usPerCall", "gateway.stdio.sequential.callsPerSec", "gateway.http.inFlight.callsPerSec"]) {
      assert.ok(targeted.includes(id), `${id} has a target`);
    }

    // Every downstream session of the gateway was served.
    assert.equal(report.gateway.sessions.callsServed, report.gateway.sessions.sessions);
    // Every process ran with the benchmark's environment only, not the one the bench was given.
    assert.deepEqual(report.meta.env, { passed: ["HOME", "PATH"], runner: ["HOME", "PATH"] });
    // Sections 1 and 1b ran on this Node and on every matrix binary installed; the package's
    // own servers and the bin ran everywhere (only the .ts source may fail, on a Node or a
    // source that cannot strip its types), and the targets sit on the bundles on Node 24.
    const versions = report.startup.versions.map((v) => v.key);
    assert.ok(versions.includes(`node${process.versions.node.split(".")[0]}`), versions.join(", "));
    for (const v of report.startup.spawn) {
      if (existsSync("/proc/self/schedstat")) assert.ok(Object.values(v.ours).every((t) => t.cpuRoundMs?.length === t.runs), `${v.node.key}: CPU of every spawn`);
      assert.deepEqual(Object.keys(v.failed).filter((variant) => variant !== "native"), [], `${v.node.key}: ${JSON.stringify(v.failed)}`);
      for (const [variant, why] of Object.entries(v.failed)) assert.ok(report.meta.notes.some((n) => n.startsWith(`spawn.${v.node.key}.${variant} did not run: `)), why);
    }
    for (const f of report.figures.filter((f) => f.id.startsWith("spawn.") || f.id.startsWith("cli."))) {
      assert.ok(f.kind === "compare" && Number.isFinite(f.gapMs), `${f.id} shows its gap in ms`);
      assert.equal(f.target !== undefined, /^(spawn|cli)\.node24\.bundle\.ms$/.test(f.id), `${f.id}: targets only on the Node 24 bundles`);
    }
    assert.equal(report.figures.find((f) => f.id === "payload.16MiB.ms")?.pass, true, "16 MiB echoed intact");
    assert.equal(report.ours.manyTools.extraTools, 1000);
    assert.equal(report.raw.manyTools.tools, report.ours.manyTools.tools);

    // Section 8: the agents held their sockets (64 in flight, plus our GET stream) and leaked
    // nothing. Held is read after the warm-up: by the end, the first fork has been idle while
    // the other ran, and on a loaded machine the server's keep-alive timeout may have closed them.
    assert.ok(report.http.ours.agent.afterWarmup.sockets >= 1 && report.http.raw.agent.afterWarmup.sockets >= 1, "both HTTP clients kept sockets alive");
    assert.equal(report.http.ours.agent.atEnd.maxListenersWarnings, 0);
    assert.ok(report.http.ours.sequential.calls > 0 && report.http.raw.sequential.calls > 0);
    // The call sections ran in two forks (fresh runners each), one round per fork pooled.
    assert.ok(report.httpStateless.ours.sequential.calls > 0 && report.httpStateless.raw.sequential.calls > 0, "both sides made stateless-era calls");
    for (const s of [report.raw, report.ours, report.http.raw, report.http.ours]) {
      assert.equal(s.sequential.rounds, 2);
      assert.equal(s.sequential.roundRates.length, 2);
      assert.equal(s.inFlight.rounds, 2);
    }
    // Section 9: ten servers connected, and both kinds of call were made.
    assert.equal(report.manager.connect.servers, 10);
    assert.ok(report.manager.plain.calls > 0 && report.manager.bridged.calls === report.manager.plain.calls);
    // Section 10: the validator ran the whole adversarial corpus, each pair with its expected outcome.
    assert.ok(report.schema.pairs > 250 && Number.isFinite(report.schema.maxMs) && typeof report.schema.pass === "boolean");
    assert.deepEqual(report.schema.unexpected, []);
    assert.equal(report.schema.ordinary.length, 5);

    assert.deepEqual(report.children.leftover, []);
    const servers = [...report.raw.serverPids, ...report.ours.serverPids];
    assert.ok(servers.length >= 4, `each side started its steady and many-tools servers (${servers.length})`);
    // Forks and sections 8 and 9 ran in runners of their own: more children than the two stdio runners' servers.
    assert.ok(report.children.started > servers.length + 2 + 10, `runners and servers of forks and sections 8-9 counted (${report.children.started})`);
    for (const pid of servers) assert.ok(isGone(pid), `server ${pid} is gone`);
  });
});

describe("npm run bench -- --quick --calibrate --json", () => {
  test("runs the raw baseline on both sides of sections 1-8 and says so", { timeout: 180_000 }, async () => {
    const run = await runBench(["--quick", "--calibrate", "--json"]);
    assert.equal(run.code, 0, `bench failed:\n${run.stderr}`);
    const report = JSON.parse(run.stdout) as BenchReport;
    assert.equal(report.meta.calibrate, true);
    assert.equal(report.raw.mode, "raw");
    assert.equal(report.ours.mode, "raw", "the second side ran the baseline");
    assert.equal(report.http.ours.mode, "raw");
    assert.equal(report.httpStateless.ours.mode, "raw");
    assert.equal(report.ours.manyTools.tools, report.raw.manyTools.tools);
    assert.deepEqual(report.children.leftover, []);
  });
});

describe("npm run bench -- --stdio --quick --json", () => {
  test("runs sections 2 and 3 alone, with their targets, and leaves no child running", { timeout: 180_000 }, async () => {
    const run = await runBench(["--stdio", "--quick", "--json"]);
    assert.equal(run.code, 0, `bench failed:\n${run.stderr}`);
    assert.ok(isGone(run.pid), "the bench process itself is gone");
    const report = JSON.parse(run.stdout) as { figures: BenchReport["figures"]; stdio: { raw: { sequential: { calls: number } }; ours: { sequential: { calls: number } } } };
    const ids = report.figures.map((f) => f.id);
    for (const key of ["sequential", "inFlight"]) {
      for (const id of [`${key}.callsPerSec`, `${key}.p50Ms`, `${key}.p99Ms`, `${key}.clientCpuUs`]) assert.ok(ids.includes(id), id);
      const throughput = report.figures.find((f) => f.id === `${key}.callsPerSec`)!;
      assert.equal(typeof throughput.pass, "boolean", `${key} throughput has a verdict`);
    }
    assert.ok(ids.every((id) => /^(sequential|inFlight)\./.test(id)), `only sections 2 and 3: ${ids.join(", ")}`);
    assert.ok(report.stdio.raw.sequential.calls > 0 && report.stdio.ours.sequential.calls > 0, "both sides made calls");
  });
});

describe("stats", () => {
  test("median of odd and even counts, and of nothing", () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });

  test("percentile by nearest rank leaves its input alone", () => {
    const samples = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.equal(percentile(samples, 50), 50);
    assert.equal(percentile(samples, 99), 99);
    assert.equal(percentile(samples, 100), 100);
    assert.equal(percentile(samples, 0), 1);
    assert.equal(samples[0], 100);
    assert.throws(() => percentile(samples, 101), RangeError);
  });

  test("timeEach stops at the iteration budget", async () => {
    let calls = 0;
    const times = await timeEach({ iterations: 7, ms: 60_000 }, async () => void calls++);
    assert.equal(calls, 7);
    assert.equal(times.length, 7);
  });

  test("timeEach stops after the time budget but runs at least once", async () => {
    let calls = 0;
    const times = await timeEach({ iterations: 1000, ms: 0 }, async () => void calls++);
    assert.equal(calls, 1);
    assert.equal(times.length, 1);
  });

  test("runInFlight keeps at most N calls running and runs exactly the budget", async () => {
    let running = 0;
    let peak = 0;
    const { latenciesMs } = await runInFlight(4, { iterations: 50, ms: 60_000 }, async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      running--;
    });
    assert.equal(latenciesMs.length, 50);
    assert.equal(peak, 4);
  });
});

function side(mode: "raw" | "ours", scale: number): SideResult {
  const calls = { calls: 100, callsPerSec: 1000 / scale, p50Ms: scale, p99Ms: 2 * scale, rounds: 1, roundRates: [1000 / scale], clientCpuUsPerCall: 10 * scale, serverCpuUsPerCall: null };
  return {
    mode,
    sequential: calls,
    inFlight: { ...calls, concurrency: 64 },
    manyTools: { medianMs: 2 * scale, runs: 1, tools: 1008, extraTools: 1000 },
    payloads: [1, 4, 16].map((mib) => ({ mib, medianMs: mib * 10 * scale, mibPerSec: 100 / scale, runs: 1, ok: mode === "raw" })),
    rss: { startMb: 40, afterCallsMb: 50 * scale, peakMb: 100 * scale },
    serverPids: [],
  };
}

const IMPORTS: ImportTimeResult = {
  rounds: 1,
  nodeMs: 40,
  tsxMs: 200,
  addedNodeMs: 12,
  addedTsxMs: 30,
  addedNodeWallMs: 14,
  addedTsxWallMs: 35,
  emptyEntryWallMs: 3,
  modules: [],
};

const BUNDLE_IMPORT: PackageImportResult = { rounds: 1, addedNodeMs: 12, addedNodeWallMs: 14, specifiers: ["mcp-bridge/client/stdio"] };

describe("figures", () => {
  const find = (figs: Figure[], id: string): Figure => figs.find((f) => f.id === id)!;

  test("ratios of paired rounds are the median of per-round ratios, so drift between rounds cancels", () => {
    // The machine slowed down for the last two rounds: the medians alone would say 0.57x.
    const raw = [100, 60, 60, 100, 100];
    const ours = [95, 57, 57, 57, 57];
    assert.equal(pairedRatio(raw, ours), 0.95);
    const fig = compare({ id: "x", section: "s", label: "l", unit: "calls/s", better: "higher", raw: 100, ours: 57 }, { text: ">= 0.9x", minRatio: 0.9 }, { raw, ours });
    assert.equal(fig.ratio, 0.95);
    assert.equal(fig.pass, true);
    // Per-round ratios 0.95 0.95 0.95 0.57 0.57: nearest-rank quartiles.
    assert.deepEqual(fig.roundRatios, { p25: 0.57, p75: 0.95, n: 5 });
    assert.match(formatFigures([fig]), /PASS {2}\(rounds 0\.57-0\.95x, n=5\)/);
    assert.equal(pairedRatio([1, 2], [1]), undefined, "rounds that do not pair up");
    const unpaired = compare({ id: "y", section: "s", label: "l", unit: "ms", better: "lower", raw: 10, ours: 12 }, undefined, { raw: [1, 2], ours: [1] });
    assert.equal(unpaired.ratio, 1.2);
    assert.equal(unpaired.roundRatios, undefined, "no spread without paired rounds");
  });

  test("a target inside the 95% interval of the median ratio is reported as not decided by the run", () => {
    // 18 paired rounds, ratios 0.80 .. 0.97 (raw 100 each): median 0.885, interval x(5)-x(14).
    const raw = Array.from({ length: 18 }, () => 100);
    const ours = Array.from({ length: 18 }, (_, i) => 80 + i);
    const base = { id: "x", section: "s", label: "l", unit: "calls/s", better: "higher" as const, raw: 100, ours: 88 };
    const near = compare(base, { text: ">= 0.85x raw", minRatio: 0.85 }, { raw, ours });
    assert.equal(near.pass, true);
    assert.deepEqual(near.roundRatios?.median95, { low: 0.84, high: 0.93, holdsTarget: true });
    assert.match(formatFigures([near]), /PASS {2}\(rounds 0\.84-0\.93x, n=18; median within them at 95%, target inside: not decided by this run\)/);
    const clear = compare(base, { text: ">= 0.8x raw", minRatio: 0.8 }, { raw, ours });
    assert.equal(clear.roundRatios?.median95?.holdsTarget, false);
    assert.match(formatFigures([clear]), /n=18; median within them at 95%\)/);
    // Six rounds: the interval is the extremes, wider than the quartiles, and printed as such.
    const six = compare(base, { text: ">= 0.85x raw", minRatio: 0.85 }, { raw: raw.slice(0, 6), ours: ours.slice(0, 6) });
    assert.match(formatFigures([six]), /MISS {2}\(rounds 0\.81-0\.84x, n=6; median 0\.80-0\.85x at 95%, target inside: not decided by this run\)/);
    // Without a target the interval is kept but nothing is judged.
    assert.equal(compare(base, undefined, { raw, ours }).roundRatios?.median95?.holdsTarget, undefined);
  });

  test("the median's interval comes from order statistics and needs six samples at 95%", () => {
    assert.equal(medianInterval([1, 2, 3, 4, 5]), undefined);
    assert.deepEqual(medianInterval([6, 5, 4, 3, 2, 1]), { low: 1, high: 6 });
    assert.deepEqual(medianInterval(Array.from({ length: 100 }, (_, i) => 100 - i)), { low: 40, high: 61 });
    assert.throws(() => medianInterval([1], 1), RangeError);
    // Past n = 1074 a plain 2^-n is 0: the interval must still be the middle, not inverted.
    const many = medianInterval(Array.from({ length: 2000 }, (_, i) => i + 1))!;
    assert.ok(many.low < 1000 && many.high > 1001 && many.high - many.low < 120, JSON.stringify(many));
  });

  test("ratios are ours/raw and targets are judged in the right direction", () => {
    const figs = buildFigures(side("raw", 1), side("ours", 1.1), { ...IMPORTS, addedNodeMs: 21 }, BUNDLE_IMPORT);
    const seq = find(figs, "sequential.callsPerSec");
    assert.equal(seq.kind, "compare");
    if (seq.kind === "compare") assert.ok(Math.abs(seq.ratio - 1 / 1.1) < 1e-9);
    assert.equal(seq.pass, true, "0.909x >= 0.9x");
    assert.equal(find(figs, "manyTools.ms").pass, true, "1.1x <= 1.3x");
    assert.equal(find(figs, "import.bundleNodeMs").pass, true, "12 ms <= 15 ms");
    assert.equal(find(figs, "import.addedNodeMs").pass, undefined, "the per-file subpaths are information, whatever they take");
    assert.equal(find(figs, "import.addedTsxMs").pass, undefined, "no target under tsx (the loader transpiles each file)");
    const slowImport = buildFigures(side("raw", 1), side("ours", 1.1), IMPORTS, { ...BUNDLE_IMPORT, addedNodeMs: 16 });
    assert.equal(find(slowImport, "import.bundleNodeMs").pass, false, "16 ms > 15 ms");
    // The 16 MiB target is about ours echoing intact, which this fixture says it did not.
    assert.equal(find(figs, "payload.16MiB.ms").pass, false);
    assert.equal(find(figs, "sequential.serverCpuUs"), undefined, "no server CPU figure without /proc");
  });

  test("a slower ours misses the throughput targets", () => {
    const figs = buildFigures(side("raw", 1), side("ours", 2), IMPORTS, BUNDLE_IMPORT);
    assert.equal(find(figs, "sequential.callsPerSec").pass, false);
    assert.equal(find(figs, "inFlight.callsPerSec").pass, false);
    const text = formatFigures(figs);
    assert.match(text, /throughput\s+calls\/s\s+1,000\s+500\s+0\.50x\s+>= 0\.9x raw\s+MISS/);
    assert.match(text, /^7\. import time/m);
    assert.match(text, /bundle: mcp-bridge\/client\/stdio of the built package/);
    assert.match(text, /bundle adds, plain node, in-process\s+ms\s+12\s+<= 15 ms\s+PASS/);
  });
});

describe("start-up figures (sections 1 and 1b)", () => {
  const node = (major: number): NodeVersion => ({ key: `node${major}`, version: `v${major}.1.0`, path: `/opt/node${major}` });
  const times = (ms: number[]) => ({ medianMs: ms[1]!, runs: ms.length, roundMs: ms });
  // Three paired rounds; the machine was slow in the second (both sides), as shared ones are.
  const startup: StartupResult = {
    versions: [node(20), node(24)],
    spawn: [
      {
        node: node(20),
        raw: { tsx: times([200, 400, 200]), dist: times([30, 60, 30]) },
        ours: { tsx: times([230, 430, 230]), dist: times([40, 70, 40]) },
        server: { tsx: times([220, 420, 220]), dist: times([35, 65, 35]) },
        failed: {},
      },
      {
        node: node(24),
        raw: { dist: times([30, 60, 30]), bundle: times([30, 60, 30]) },
        ours: { dist: times([40, 70, 40]), bundle: times([33, 66, 33]) },
        server: { dist: times([36, 66, 36]), bundle: times([31, 61, 31]) },
        failed: { native: "ours: SyntaxError [ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX]" },
      },
    ],
    cli: { node24: { bundle: { raw: [60, 120, 60], ours: [75, 130, 75] }, dist: { raw: [60, 120, 60], ours: [90, 150, 90] } } },
  };
  const figs = buildStartupFigures(startup);
  const find = (id: string): Figure => figs.find((f) => f.id === id)!;

  test("every start-up ratio comes with its gap in ms, the median of the paired differences", () => {
    const tsx = find("spawn.node20.tsx.ms");
    // 1.15x and 1.075x: the loader both sides pay makes a 30 ms gap look small.
    assert.deepEqual(tsx.kind === "compare" ? [tsx.ratio, tsx.gapMs] : [], [1.15, 30]);
    const cli = find("cli.node24.bundle.ms");
    assert.deepEqual(cli.kind === "compare" ? [cli.ratio, cli.gapMs] : [], [1.25, 15]);
    // The server's own share: the same servers started by the raw client.
    const server = find("spawn.node24.bundle.server.ms");
    assert.deepEqual(server.kind === "compare" ? [server.gapMs, server.target] : [], [1, undefined]);
    assert.match(formatFigures(figs), /v24\.1\.0 dist, \/server\/stdio bundle\s+ms\s+30\s+33\s+1\.10x\s+\+3\.0 ms\s+<= 1\.15x raw\s+PASS/);
  });

  test("targets sit on the Node 24 bundles only; the tsx row is context; a variant that did not run has no row", () => {
    const targeted = figs.filter((f) => f.target !== undefined).map((f) => [f.id, f.pass]);
    assert.deepEqual(targeted, [
      ["spawn.node24.bundle.ms", true],
      ["cli.node24.bundle.ms", false],
    ]);
    assert.equal(figs.some((f) => f.id === "spawn.node24.native.ms"), false);
    assert.equal(find("spawn.node20.tsx.ms").target, undefined);
  });
});

function httpSide(mode: "raw" | "ours", scale: number, socketsAtEnd: number): HttpSideResult {
  const calls = { calls: 100, callsPerSec: 1000 / scale, p50Ms: scale, p99Ms: 2 * scale, rounds: 1, roundRates: [1000 / scale], clientCpuUsPerCall: 10 * scale, serverCpuUsPerCall: null };
  const probe = (sockets: number) => ({ sockets, listeners: 6 * sockets, maxListenersWarnings: 0 });
  return { mode, sequential: calls, inFlight: { ...calls, concurrency: 64 }, agent: { afterWarmup: probe(65), atEnd: probe(socketsAtEnd) } };
}

describe("figures of sections 8 and 9", () => {
  const find = (figs: Figure[], id: string): Figure => figs.find((f) => f.id === id)!;

  test("HTTP throughput is judged against 0.85x raw, sequential only; agent growth is end minus warm-up", () => {
    const ok = buildHttpFigures(httpSide("raw", 1, 64), httpSide("ours", 1.1, 65));
    assert.equal(find(ok, "http.sequential.callsPerSec").pass, true, "0.909x >= 0.85x");
    assert.equal(find(ok, "http.inFlight.callsPerSec").target, undefined, "no target in flight");
    const slow = buildHttpFigures(httpSide("raw", 1, 64), httpSide("ours", 1.25, 67));
    assert.equal(find(slow, "http.sequential.callsPerSec").pass, false, "0.8x < 0.85x");
    const growth = find(slow, "http.agent.socketGrowth");
    assert.equal(growth.kind === "value" ? growth.value : undefined, 2);
    const listeners = find(slow, "http.agent.listenerGrowth");
    assert.equal(listeners.kind === "value" ? listeners.value : undefined, 12);
    assert.equal(find(slow, "http.sequential.serverCpuUs"), undefined, "no server CPU figure without /proc");
  });

  test("the bridged call is judged as bridged/plain time per call, at most 1.1x; connect is info only", () => {
    const result = (bridgedUs: number): ManagerResult => ({
      connect: { oneMs: 50, fleetMs: 200, servers: 10, rounds: 1 },
      plain: { usPerCall: 100, p50Ms: 0.1, p99Ms: 0.2, calls: 10 },
      bridged: { usPerCall: bridgedUs, p50Ms: 0.1, p99Ms: 0.2, calls: 10 },
      untrusted: { usPerCall: 1.5 * bridgedUs, p50Ms: 0.15, p99Ms: 0.3, calls: 10 },
      rounds: 1,
    });
    const pass = buildManagerFigures(result(109));
    const call = find(pass, "manager.call.usPerCall");
    assert.equal(call.kind === "compare" ? call.ratio : undefined, 1.09);
    assert.equal(call.pass, true);
    assert.equal(find(buildManagerFigures(result(111)), "manager.call.usPerCall").pass, false);
    const connect = find(pass, "manager.connect.ms");
    assert.equal(connect.kind === "compare" ? connect.ratio : undefined, 4);
    assert.equal(connect.target, undefined);
    // The table names the two columns after what they are, not raw/ours.
    assert.match(formatFigures(pass), /unit\s+plain\s+bridged\s+ratio/);
  });

  test("the untrusted server's default path is judged as untrusted/plain time per call, at most 1.2x", () => {
    const result = (untrustedUs: number): ManagerResult => ({
      connect: { oneMs: 50, fleetMs: 200, servers: 10, rounds: 1 },
      plain: { usPerCall: 100, p50Ms: 0.1, p99Ms: 0.2, calls: 10 },
      bridged: { usPerCall: 105, p50Ms: 0.1, p99Ms: 0.2, calls: 10 },
      untrusted: { usPerCall: untrustedUs, p50Ms: 0.12, p99Ms: 0.25, calls: 10 },
      rounds: 1,
    });
    const figs = buildManagerFigures(result(119));
    const untrusted = find(figs, "manager.untrusted.usPerCall");
    assert.deepEqual(untrusted.kind === "compare" ? [untrusted.ratio, untrusted.pass] : [], [1.19, true]);
    assert.equal(find(buildManagerFigures(result(121)), "manager.untrusted.usPerCall").pass, false);
    assert.match(formatFigures(figs), /unit\s+plain\s+untrusted\s+ratio/);
  });
});

describe("profile summary", () => {
  test("adds self time per function and per file, leaving idle out", () => {
    const frame = (functionName: string, url: string, lineNumber: number) => ({ functionName, url, lineNumber });
    const root = "/repo";
    const summary = summarizeProfile(
      {
        nodes: [
          { id: 1, callFrame: frame("(root)", "", -1) },
          { id: 2, callFrame: frame("(idle)", "", -1) },
          { id: 3, callFrame: frame("request", "file:///repo/src/peer.js", 9) },
          { id: 4, callFrame: frame("settle", "file:///repo/src/peer.js", 19) },
          { id: 5, callFrame: frame("parse", "file:///repo/src/ndjson.js", 4) },
        ],
        samples: [2, 3, 3, 4, 5, 2],
        timeDeltas: [5000, 1000, 1000, 1000, 1000, 5000],
      },
      root,
    );
    assert.equal(summary.busyMs, 4);
    assert.deepEqual(summary.functions[0], { where: "src/peer.js:10 request", selfMs: 2, percent: 50 });
    assert.deepEqual(summary.files[0], { where: "src/peer.js", selfMs: 3, percent: 75 });
    assert.equal(summary.files.length, 2);
  });
});
