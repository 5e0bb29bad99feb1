/**
 * The one environment every process of the benchmark starts with, raw side and ours alike
 * (docs/decisions.md 46, 78): `PATH` (commands and `taskset` are found through it)
 * and `HOME`, nothing else. An inherited variable can change what every Node start costs
 * (`NODE_EXTRA_CA_CERTS` makes each start read a CA bundle, ~40 ms on some machines) and so
 * dilute every start-up ratio; `NODE_OPTIONS` could load code into one side only. Locale
 * variables are left out too: Node's start-up does not read them.
 */

/** The names passed on, in the order they are listed in the report. */
export const BENCH_ENV_NAMES = ["HOME", "PATH"] as const;

/** `BENCH_ENV_NAMES` taken from `from` (this process's environment by default); unset ones are left out. */
export function benchEnv(from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BENCH_ENV_NAMES) {
    const value = from[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}
