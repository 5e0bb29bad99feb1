/**
 * The seven runs of `npm run conformance` and how each is driven: which suite, which leg, which
 * requirement set, what it is given to test, and where its results land. Each run returns a
 * `RunOutcome` for conformance-verdict.ts; nothing here decides pass or fail.
 *
 * Server runs test fixtures/servers/conformance.ts on 127.0.0.1 (a fresh one per run); the
 * `serve` run tests it through `mcp-bridge serve --no-namespace` in front of it, so the suite
 * sees the gateway's forwarding (progress, logs, sampling, elicitation) and names. Client
 * runs start fixtures/clients/conformance.ts from the suite, inside a private network
 * namespace, since the suite's scenario servers bind every interface (scripts/netns.ts).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inNetns, type ProcessGroups, type Started } from "./netns.ts";
import { finish, INTEROP_DIR, NODE22, node22Env, ROOT, suiteJs, type SuiteVersion } from "./conformance-setup.ts";
import { parseScenarioList, type Leg, type ScenarioList } from "./conformance-list.ts";
import { readResults } from "./conformance-results.ts";
import type { Failure, RunOutcome } from "./conformance-verdict.ts";

/** One run: a suite, a leg and, for 0.2, the requirement set it runs. */
export interface RunSpec {
  /** How scripts/conformance-expected-failures.json names the run. */
  id: string;
  suite: SuiteVersion;
  leg: Leg;
  requirements?: "2025-11-25" | "2026-07-28";
  /** Server leg: the fixture is reached through `mcp-bridge serve` (one upstream, its own names). */
  through?: "serve";
}

export const RUNS: readonly RunSpec[] = [
  { id: "0.1.16/server", suite: "0.1.16", leg: "server" },
  { id: "0.1.16/client", suite: "0.1.16", leg: "client" },
  { id: "0.2/server/2025-11-25", suite: "0.2", leg: "server", requirements: "2025-11-25" },
  { id: "0.2/server/2026-07-28", suite: "0.2", leg: "server", requirements: "2026-07-28" },
  { id: "0.2/client/2025-11-25", suite: "0.2", leg: "client", requirements: "2025-11-25" },
  { id: "0.2/client/2026-07-28", suite: "0.2", leg: "client", requirements: "2026-07-28" },
  { id: "0.2/serve/2025-11-25", suite: "0.2", leg: "server", requirements: "2025-11-25", through: "serve" },
];

/**
 * The client scenarios the 0.1.16 run keeps running one by one, as before 0.2 came; every auth
 * scenario 0.1.16 lists runs after them (see {@link clientScenarios01}).
 */
export const CLIENT_SCENARIOS_0_1 = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

/** The 0.1.16 client run: {@link CLIENT_SCENARIOS_0_1}, then the suite's own list of `auth/...` scenarios. */
export function clientScenarios01(spec: RunSpec): string[] {
  return [...CLIENT_SCENARIOS_0_1, ...listScenarios(spec).required.filter((s) => s.startsWith("auth/"))];
}

/** Whole-run limits: generous, since a timeout is fatal and a loaded machine is slow. */
const SERVER_RUN_TIMEOUT_MS = 600_000;
const CLIENT_RUN_TIMEOUT_MS = 900_000;
const CLIENT_SCENARIO_TIMEOUT_MS = 90_000;
/** The suite's own limit for one client scenario (it kills the client after it). */
const SUITE_CLIENT_TIMEOUT_MS = "60000";

/** Harness check id: a 0.1.16 client scenario whose client exited non-zero (the suite fails those). */
export const CLIENT_EXIT = "(client exit)";

/** `conformance list` for one leg of a run. */
export function listScenarios(spec: RunSpec): ScenarioList {
  const args = [suiteJs(spec.suite), "list", `--${spec.leg}`];
  if (spec.requirements !== undefined) args.push("--requirements", spec.requirements);
  const r = spawnSync(NODE22, args, { encoding: "utf8", env: node22Env() });
  if (r.status !== 0) throw new Error(`conformance ${spec.suite} list --${spec.leg} failed: ${r.stderr}`);
  return parseScenarioList(r.stdout, spec.leg);
}

/**
 * The command the suite runs for each client scenario; it splits it on spaces and appends the
 * URL. The pinned Node 22 strips the fixture's types itself: the 0.2 suite starts every
 * scenario's client at once, and tsx's transform of every module in each of them took the run
 * past the suite's 60 s per client on a loaded machine.
 */
export function clientCommand(): string {
  return [NODE22, join(ROOT, "fixtures", "clients", "conformance.ts")].join(" ");
}

/** A folder name for a run: its id with `/` made `-`. */
export function runFolder(spec: RunSpec): string {
  return spec.id.replaceAll("/", "-");
}

async function startOurServer(groups: ProcessGroups, logFile: string): Promise<{ server: Started; url: string }> {
  const server = groups.start(
    "conformance server",
    process.execPath,
    ["--import", "tsx", join(ROOT, "fixtures", "servers", "conformance.ts"), "--port", "0"],
    { cwd: ROOT },
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(server.output());
    if (m !== null) return { server, url: m[1] as string };
    if (server.child.exitCode !== null || Date.now() > deadline) {
      writeFileSync(logFile, server.output());
      throw new Error(`our conformance server did not start:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `mcp-bridge serve --http` in front of the server at `upstream`: one trusted upstream, under its own names. */
async function startServeInFront(groups: ProcessGroups, upstream: string, dir: string): Promise<{ server: Started; url: string }> {
  const config = join(dir, "serve-config.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { conformance: { url: upstream, trust: "trusted" } } }, null, 2));
  const args = ["--import", "tsx", join(ROOT, "src", "cli", "main.ts"), "serve", "--config", config, "--http", "127.0.0.1:0", "--no-namespace"];
  const server = groups.start("mcp-bridge serve", process.execPath, args, { cwd: ROOT });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const m = /serving 1 upstream\(s\) at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(server.output());
    if (m !== null) return { server, url: m[1] as string };
    if (server.child.exitCode !== null || Date.now() > deadline) throw new Error(`mcp-bridge serve did not start:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function selection(spec: RunSpec): string[] {
  return spec.requirements !== undefined ? ["--requirements", spec.requirements] : ["--suite", "all"];
}

/** Runs the suite's server leg against a fresh server of ours. */
export async function runServer(groups: ProcessGroups, spec: RunSpec, resultsDir: string): Promise<RunOutcome> {
  const name = runFolder(spec);
  const outDir = join(resultsDir, name);
  mkdirSync(outDir, { recursive: true });
  const listed = listScenarios(spec);
  const { server, url: fixtureUrl } = await startOurServer(groups, join(resultsDir, `${name}-our-server.log`));
  let gateway: Started | undefined;
  let url = fixtureUrl;
  try {
    if (spec.through === "serve") ({ server: gateway, url } = await startServeInFront(groups, fixtureUrl, outDir));
  } catch (err) {
    await groups.stop(server);
    throw err;
  }
  const suite = groups.start(`conformance ${spec.id}`, NODE22, [suiteJs(spec.suite), "server", "--url", url, ...selection(spec), "-o", outDir], {
    cwd: INTEROP_DIR,
    env: node22Env(),
  });
  const { code, timedOut } = await finish(groups, suite, SERVER_RUN_TIMEOUT_MS);
  writeFileSync(join(resultsDir, `${name}.log`), suite.output());
  if (gateway !== undefined) {
    await groups.stop(gateway);
    writeFileSync(join(resultsDir, `${name}-serve.log`), gateway.output());
  }
  await groups.stop(server);
  writeFileSync(join(resultsDir, `${name}-our-server.log`), server.output());

  const results = readResults(outDir, "server-");
  const outcome: RunOutcome = { run: spec.id, scenarios: [...listed.required, ...listed.notScored], required: listed.required, results, fatal: [] };
  if (timedOut) return { ...outcome, fatal: [`the suite did not finish in ${SERVER_RUN_TIMEOUT_MS / 1000} s`] };
  // 0.1.16 exits non-zero only on a failing check; a crash after the last result shows here.
  // 0.2 under --requirements also exits 1 on an expected failure, so its code says nothing more.
  if (spec.requirements === undefined && code !== 0 && [...results.values()].every((cs) => cs.every((c) => c.status !== "FAILURE"))) {
    return { ...outcome, fatal: [`the suite exited ${String(code)} with no failing check (see ${name}.log)`] };
  }
  return outcome;
}

/** `conformance client` of the run's suite driving our client fixture, inside the network namespace. */
function clientSuiteCommand(spec: RunSpec, which: readonly string[], outDir: string): { command: string; args: string[] } {
  return inNetns([NODE22, suiteJs(spec.suite), "client", "--command", clientCommand(), ...which, "--timeout", SUITE_CLIENT_TIMEOUT_MS, "-o", outDir]);
}

/** Runs the 0.2 suite's client leg for a requirement set: one suite process, its scenarios in parallel (docs/decisions.md 100). */
export async function runClientSuite(groups: ProcessGroups, spec: RunSpec, resultsDir: string): Promise<RunOutcome> {
  const name = runFolder(spec);
  const outDir = join(resultsDir, name);
  mkdirSync(outDir, { recursive: true });
  const listed = listScenarios(spec);
  const { command, args } = clientSuiteCommand(spec, selection(spec), outDir);
  const p = groups.start(`conformance ${spec.id}`, command, args, { cwd: ROOT, env: node22Env() });
  const { timedOut } = await finish(groups, p, CLIENT_RUN_TIMEOUT_MS);
  writeFileSync(join(resultsDir, `${name}.log`), p.output());
  const results = readResults(outDir);
  const fatal = timedOut ? [`the suite did not finish in ${CLIENT_RUN_TIMEOUT_MS / 1000} s`] : [];
  return { run: spec.id, scenarios: [...listed.required, ...listed.notScored], required: listed.required, results, fatal };
}

/** Runs the 0.1.16 client scenarios one at a time, as before. */
export async function runClientScenarios(groups: ProcessGroups, spec: RunSpec, resultsDir: string): Promise<RunOutcome> {
  const name = runFolder(spec);
  const outDir = join(resultsDir, name);
  mkdirSync(outDir, { recursive: true });
  const exits = new Map<string, { code: number | null; log: string }>();
  const fatal: string[] = [];
  const scenarios = clientScenarios01(spec);
  for (const scenario of scenarios) {
    const { command, args } = clientSuiteCommand(spec, ["--scenario", scenario], outDir);
    const p = groups.start(`conformance ${spec.id} ${scenario}`, command, args, { cwd: ROOT, env: node22Env() });
    const { code, timedOut } = await finish(groups, p, CLIENT_SCENARIO_TIMEOUT_MS);
    const log = `${name}-${scenario.replaceAll("/", "-")}.log`;
    writeFileSync(join(resultsDir, log), p.output());
    if (timedOut) fatal.push(`scenario ${scenario} did not finish in ${CLIENT_SCENARIO_TIMEOUT_MS / 1000} s`);
    else exits.set(scenario, { code, log });
  }
  const results = readResults(outDir);
  // The suite fails a scenario whose client exited non-zero even when every check passed;
  // with a failing check, the exit code says nothing more.
  const extraFailures: Failure[] = [];
  for (const [scenario, { code, log }] of exits) {
    const clean = (results.get(scenario) ?? []).every((c) => c.status !== "FAILURE" && c.status !== "WARNING");
    if (code !== 0 && clean) {
      extraFailures.push({ run: spec.id, scenario, check: CLIENT_EXIT, status: "FAILURE", message: `conformance exited ${String(code)} (see ${log})` });
    }
  }
  return { run: spec.id, scenarios, results, extraFailures, fatal };
}

/** Runs one run of `RUNS`. */
export function runOne(groups: ProcessGroups, spec: RunSpec, resultsDir: string): Promise<RunOutcome> {
  if (spec.leg === "server") return runServer(groups, spec, resultsDir);
  return spec.requirements === undefined ? runClientScenarios(groups, spec, resultsDir) : runClientSuite(groups, spec, resultsDir);
}
