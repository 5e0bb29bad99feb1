/**
 * Small statistics for the benchmark: medians and nearest-rank percentiles over samples, and
 * the bounded loops every section uses ("N iterations or T ms, whichever comes first").
 */

/** The p-th percentile (0..100) by nearest rank; NaN for no samples. Does not modify `samples`. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile: p must be within 0..100, got ${p}`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** The median: the mean of the two middle values for an even count; NaN for no samples. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A range of sample values, both ends included. */
export interface Interval {
  low: number;
  high: number;
}

/**
 * A distribution-free confidence interval for the median of `samples`: the order statistics
 * x(k) and x(n+1-k) with the largest k for which a Binomial(n, 1/2) count falls below k with
 * probability at most (1 - level) / 2. It assumes nothing about the shape of the samples, which
 * on a shared machine is anything but normal. Undefined when `n` is too small for `level`
 * (at 95%, fewer than 6 samples). Does not modify `samples`.
 */
export function medianInterval(samples: readonly number[], level = 0.95): Interval | undefined {
  if (!(level > 0 && level < 1)) throw new RangeError(`medianInterval: level must be within (0, 1), got ${level}`);
  const n = samples.length;
  const tail = (1 - level) / 2;
  // P(X <= j) for X ~ Binomial(n, 1/2), summed term by term: C(n, j) / 2^n, each term kept
  // as its logarithm, since 2^-n alone underflows to 0 beyond n = 1074.
  let logTerm = -n * Math.LN2;
  let below = 0;
  let k = 0;
  for (let j = 0; j < n; j++) {
    below += Math.exp(logTerm);
    if (below > tail) break;
    k = j + 1;
    logTerm += Math.log((n - j) / (j + 1));
  }
  if (k === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  return { low: sorted[k - 1]!, high: sorted[n - k]! };
}

/** How long a section may run: at most `iterations`, and no new iteration after `ms`. */
export interface Budget {
  iterations: number;
  ms: number;
}

/**
 * Runs `body` sequentially until the budget is spent (always at least `min` times) and
 * returns the duration of each run in ms.
 */
export async function timeEach(budget: Budget, body: (i: number) => Promise<void>, min = 1): Promise<number[]> {
  const times: number[] = [];
  const stop = performance.now() + budget.ms;
  for (let i = 0; i < budget.iterations && (i < min || performance.now() < stop); i++) {
    const t0 = performance.now();
    await body(i);
    times.push(performance.now() - t0);
  }
  return times;
}

/** Throughput and latency of a batch of timed calls. */
export interface CallStats {
  calls: number;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

export function callStats(latenciesMs: readonly number[], elapsedMs: number): CallStats {
  return {
    calls: latenciesMs.length,
    callsPerSec: elapsedMs > 0 ? (latenciesMs.length * 1000) / elapsedMs : Number.NaN,
    p50Ms: percentile(latenciesMs, 50),
    p99Ms: percentile(latenciesMs, 99),
  };
}

/**
 * Keeps `concurrency` calls in flight until the budget is spent: every finished call starts
 * the next one, so the pipe never runs dry. Returns each call's latency and the elapsed time.
 */
export async function runInFlight(
  concurrency: number,
  budget: Budget,
  call: () => Promise<void>,
): Promise<{ latenciesMs: number[]; elapsedMs: number }> {
  const latenciesMs: number[] = [];
  const start = performance.now();
  const stop = start + budget.ms;
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < budget.iterations && performance.now() < stop) {
      started++;
      const t0 = performance.now();
      await call();
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latenciesMs, elapsedMs: performance.now() - start };
}
