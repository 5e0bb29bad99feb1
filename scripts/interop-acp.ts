/**
 * ACP editor interop: the official ACP TypeScript SDK
 * (`@agentclientprotocol/sdk`, pinned in scripts/interop/) plays the editor with its `client()`
 * API and drives our reference agent, `mcp-bridge acp-agent`, as a real child process:
 *
 *   initialize; session/new with a stdio, an http and an sse server plus a broken one (reported,
 *   the others work); /call gives tool_call pending > in_progress > completed; a tool of the
 *   agent's own untrusted server asks session/request_permission; session/cancel mid-call gives
 *   stopReason cancelled and the server sees notifications/cancelled; session/close leaves no
 *   process or HTTP session; session/load brings the servers back; stdin EOF ends everything.
 *
 * Every line the agent writes is captured before the SDK parses it and validated with our own
 * validator against the SDK's schema/v1/schema.json (the SDK quietly drops or repairs what does
 * not parse, so only this catches a malformed message). Keywords of that schema our validator
 * does not know are listed; one that could assert something fails the run.
 *
 * Runs at the end of `npm run interop`, or alone: `npx tsx scripts/interop-acp.ts`. Everything
 * binds 127.0.0.1 only, so it needs no network namespace. Prints one table; the agent's log goes
 * to scripts/interop/results/interop-acp/agent.log.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { formatTable, INTEROP_DIR } from "./conformance.ts";
import { runScenario, type ScenarioOutcome } from "./interop-acp/scenario.ts";
import { ACP_SDK_NAME, ACP_SDK_VERSION, loadAcpSdk } from "./interop-acp/sdk.ts";
import { Steps } from "./interop-acp/steps.ts";

const RESULTS_DIR = join(INTEROP_DIR, "results", "interop-acp");
/** The whole run, whatever the steps do; they have their own, shorter, deadlines. */
const RUN_LIMIT_MS = 120_000;

/** Runs the ACP interop, prints its table and details; resolves 0 when every step passed, else 1. */
export async function runAcpInterop(): Promise<number> {
  const steps = new Steps();
  let outcome: ScenarioOutcome | undefined;
  const started = Date.now();
  let loaded: Awaited<ReturnType<typeof loadAcpSdk>> | undefined;
  await steps.run("sdk", async () => {
    loaded = await loadAcpSdk();
    return `${ACP_SDK_NAME}@${loaded.version} client(), schema ${loaded.schemaPath.slice(loaded.schemaPath.indexOf("node_modules"))}`;
  });
  if (loaded !== undefined) {
    const sdk = loaded;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the ACP interop did not finish within ${RUN_LIMIT_MS / 1000} s`)), RUN_LIMIT_MS);
    });
    try {
      outcome = await Promise.race([runScenario(sdk, steps), limit]);
    } catch (err) {
      // Only the overall limit gets here. What the scenario started is killed by the process
      // `exit` handler it installed (both entry points exit right after this returns).
      steps.results.push({ name: "(run)", status: "FAIL", detail: err instanceof Error ? err.message : String(err) });
    } finally {
      clearTimeout(timer);
    }
  }
  report(steps, outcome, Date.now() - started);
  return steps.passed ? 0 : 1;
}

function report(steps: Steps, outcome: ScenarioOutcome | undefined, elapsedMs: number): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  if (outcome !== undefined) writeFileSync(join(RESULTS_DIR, "agent.log"), `${outcome.agentLog.join("\n")}\n`);
  const table = formatTable(
    ["step", "result", "detail"],
    steps.results.map((r) => [r.name, r.status, r.status === "ok" ? r.detail : firstLine(r.detail)]),
  );
  const out: string[] = [];
  out.push(`\nACP interop: ${ACP_SDK_NAME}@${ACP_SDK_VERSION} client() as the editor vs mcp-bridge acp-agent (${(elapsedMs / 1000).toFixed(1)} s)\n`);
  out.push(table, "");
  for (const r of steps.results.filter((x) => x.status === "FAIL")) out.push(`${r.status} ${r.name}:\n  ${r.detail.split("\n").join("\n  ")}`);
  const unknown = outcome?.checker.unknownKeywords() ?? [];
  if (unknown.length > 0) {
    // Grouped by keyword: how often the definitions we checked can reach it, and why it is safe (or not).
    const groups = new Map<string, { n: number; why: string; harmless: boolean }>();
    for (const u of unknown) {
      const g = groups.get(u.keyword) ?? { n: 0, why: u.why, harmless: u.harmless };
      g.n++;
      if (!u.harmless) Object.assign(g, { why: u.why, harmless: false });
      groups.set(u.keyword, g);
    }
    out.push("schema keywords our validator does not know, reachable from the definitions checked:");
    for (const [k, g] of groups) out.push(`  ${g.harmless ? "ignored " : "UNSUPPORTED"} ${k} (${g.n}x): ${g.why}`);
  }
  out.push(`agent log: ${join("scripts", "interop", "results", "interop-acp", "agent.log")}`, "");
  process.stdout.write(out.join("\n"));
}

function firstLine(text: string): string {
  const [first = "", ...rest] = text.split("\n");
  return rest.length === 0 ? first : `${first} (+${rest.length} more, below)`;
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  // Exiting (rather than dying of the signal) runs the `exit` handler that kills what we started.
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
  runAcpInterop().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`interop-acp: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
