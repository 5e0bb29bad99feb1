/**
 * Turns the measurements into figures (raw, ours, ours/raw, target, PASS/MISS) and prints
 * them as a table. Targets are reported, never asserted: the benchmark exits 0 on a MISS.
 */
import type { ImportTimeResult, PackageImportResult } from "./import-time.ts";
import { median, medianInterval, percentile, type Interval } from "./stats.ts";
import type { SideResult } from "./types.ts";

/** A number to compare against a target. `better` says which direction wins. */
interface FigureBase {
  id: string;
  section: string;
  label: string;
  unit: string;
  better: "higher" | "lower";
  /** Text of the target, e.g. ">= 0.9x raw"; absent when the figure has none. */
  target?: string;
  pass?: boolean;
}

/** A figure measured for both clients. */
export interface CompareFigure extends FigureBase {
  kind: "compare";
  raw: number;
  ours: number;
  /**
   * ours / raw; where both sides were measured in paired rounds (`rounds`), the median of the
   * per-round ratios instead, which cancels drift between rounds.
   */
  ratio: number;
  /**
   * With paired rounds: the quartiles of the per-round ratios and how many rounds there were.
   * How far apart they are says how much one run can move `ratio` (and so PASS or MISS).
   * `median95`: where the median of the per-round ratios lies with 95% confidence
   * (`medianInterval`), when there are rounds enough; a target inside it is not decided by
   * this run, whichever way `pass` went.
   */
  roundRatios?: { p25: number; p75: number; n: number; median95?: MedianInterval };
  /** Column heads when the two sides are not "raw" and "ours" (the section title then says what the ratio is). */
  heads?: { raw: string; ours: string };
  /**
   * Start-up figures: ours - raw in ms (the median of the paired rounds' differences), printed
   * beside the ratio, since a cost both sides pay shrinks a ratio but not the gap.
   */
  gapMs?: number;
}

/** Where the median of the per-round ratios lies (95%), and whether a target's bound falls inside. */
export interface MedianInterval extends Interval {
  /** Set where a target is judged. */
  holdsTarget?: boolean;
}

/** A figure with one value (import time, start-up of node itself). */
export interface ValueFigure extends FigureBase {
  kind: "value";
  value: number;
}

export type Figure = CompareFigure | ValueFigure;

export const SECTIONS = {
  sequential: "2. sequential tools/call echo",
  inFlight: "3. tools/call echo, 64 in flight",
  rss: "4. client peak RSS (each client in its own process)",
  manyTools: "5. tools/list of 1000 extra tools, 100 per page (raw server vs McpServer with the same tools registered)",
  payloads: "6. echo of large payloads (round trip; MiB/s = payload MiB / round-trip time)",
  importTime: "7. import time of the library (median of paired runs; in-process = when an entry importing the library is evaluated, minus the same for an empty entry)",
} as const;

/**
 * The median of ours[i] / raw[i]: round i of both sides ran back to back, so a slow stretch
 * of a shared machine lands on both halves of a pair, not on one side's median.
 * Undefined when the rounds do not pair up.
 */
export function pairedRatio(raw: readonly number[], ours: readonly number[]): number | undefined {
  const each = roundRatios(raw, ours);
  return each && median(each);
}

/** ours[i] / raw[i] for every round; undefined when the rounds do not pair up. */
function roundRatios(raw: readonly number[], ours: readonly number[]): number[] | undefined {
  if (raw.length === 0 || raw.length !== ours.length) return undefined;
  return ours.map((o, i) => o / raw[i]!);
}

export function compare(
  base: Omit<CompareFigure, "kind" | "ratio" | "pass" | "target">,
  target?: { text: string; maxRatio?: number; minRatio?: number },
  rounds?: { raw: readonly number[]; ours: readonly number[] },
): CompareFigure {
  const each = rounds && roundRatios(rounds.raw, rounds.ours);
  const ratio = each ? median(each) : base.ours / base.raw;
  const fig: CompareFigure = { kind: "compare", ...base, ratio };
  if (each) {
    fig.roundRatios = { p25: percentile(each, 25), p75: percentile(each, 75), n: each.length };
    const interval = medianInterval(each);
    if (interval) fig.roundRatios.median95 = interval;
  }
  if (target) {
    fig.target = target.text;
    fig.pass = (target.maxRatio === undefined || ratio <= target.maxRatio) && (target.minRatio === undefined || ratio >= target.minRatio);
    const interval = fig.roundRatios?.median95;
    if (interval) interval.holdsTarget = [target.minRatio, target.maxRatio].some((b) => b !== undefined && b >= interval.low && b <= interval.high);
  }
  return fig;
}

/**
 * `; median a-bx at 95%`, and whether that interval holds the target's bound. With 16-18
 * rounds the interval's order statistics are the quartiles' own, and it is named as such.
 */
function medianNote(q: NonNullable<CompareFigure["roundRatios"]>): string {
  const interval = q.median95;
  if (interval === undefined) return "";
  const undecided = interval.holdsTarget === true ? ", target inside: not decided by this run" : "";
  const same = interval.low === q.p25 && interval.high === q.p75;
  return `; median ${same ? "within them" : `${interval.low.toFixed(2)}-${interval.high.toFixed(2)}x`} at 95%${undecided}`;
}

/** Sections 2 and 3: stdio tools/call, sequential and 64 in flight (also the `--stdio` mode). */
export function buildCallFigures(raw: Pick<SideResult, "sequential" | "inFlight">, ours: Pick<SideResult, "sequential" | "inFlight">): Figure[] {
  const figs: Figure[] = [];
  for (const [key, section, minRatio] of [
    ["sequential", SECTIONS.sequential, 0.9],
    ["inFlight", SECTIONS.inFlight, 0.8],
  ] as const) {
    const r = raw[key];
    const o = ours[key];
    figs.push(
      compare(
        { id: `${key}.callsPerSec`, section, label: "throughput", unit: "calls/s", better: "higher", raw: r.callsPerSec, ours: o.callsPerSec },
        { text: `>= ${minRatio}x raw`, minRatio },
        { raw: r.roundRates, ours: o.roundRates },
      ),
      compare({ id: `${key}.p50Ms`, section, label: "latency p50", unit: "ms", better: "lower", raw: r.p50Ms, ours: o.p50Ms }),
      compare({ id: `${key}.p99Ms`, section, label: "latency p99", unit: "ms", better: "lower", raw: r.p99Ms, ours: o.p99Ms }),
      compare({ id: `${key}.clientCpuUs`, section, label: "client CPU per call", unit: "us", better: "lower", raw: r.clientCpuUsPerCall, ours: o.clientCpuUsPerCall }),
    );
    // Left out where /proc is missing, or its clock was too coarse to see the server work.
    if (r.serverCpuUsPerCall && o.serverCpuUsPerCall) {
      figs.push(compare({ id: `${key}.serverCpuUs`, section, label: "server CPU per call (from /proc)", unit: "us", better: "lower", raw: r.serverCpuUsPerCall, ours: o.serverCpuUsPerCall }));
    }
  }
  return figs;
}

/** Every figure of one benchmark run, in print order. */
export function buildFigures(raw: SideResult, ours: SideResult, imports: ImportTimeResult, bundle: PackageImportResult, full?: ImportTimeResult): Figure[] {
  const figs = buildCallFigures(raw, ours);
  figs.push(
    compare({ id: "rss.afterCalls", section: SECTIONS.rss, label: "peak after sections 1-3", unit: "MB", better: "lower", raw: raw.rss.afterCallsMb, ours: ours.rss.afterCallsMb }),
    compare({ id: "rss.peak", section: SECTIONS.rss, label: "peak at the end (after 16 MiB echoes)", unit: "MB", better: "lower", raw: raw.rss.peakMb, ours: ours.rss.peakMb }),
    compare(
      { id: "manyTools.ms", section: SECTIONS.manyTools, label: `list ${ours.manyTools.tools} tools (${ours.manyTools.extraTools} + the echo set)`, unit: "ms", better: "lower", raw: raw.manyTools.medianMs, ours: ours.manyTools.medianMs },
      { text: "<= 1.3x raw", maxRatio: 1.3 },
    ),
  );

  for (const o of ours.payloads) {
    const r = raw.payloads.find((p) => p.mib === o.mib)!;
    const ms = compare({ id: `payload.${o.mib}MiB.ms`, section: SECTIONS.payloads, label: `${o.mib} MiB`, unit: "ms", better: "lower", raw: r.medianMs, ours: o.medianMs });
    if (o.mib === 16) {
      ms.target = "works (echoed intact)";
      ms.pass = o.ok;
    }
    figs.push(ms, compare({ id: `payload.${o.mib}MiB.mibPerSec`, section: SECTIONS.payloads, label: `${o.mib} MiB`, unit: "MiB/s", better: "higher", raw: r.mibPerSec, ours: o.mibPerSec }));
  }
  const scaling = (p: SideResult["payloads"]): number => p.find((x) => x.mib === 16)!.medianMs / (16 * p.find((x) => x.mib === 1)!.medianMs);
  figs.push(compare({ id: "payload.scaling", section: SECTIONS.payloads, label: "t(16 MiB) / (16 x t(1 MiB)), 1.0 = linear", unit: "x", better: "lower", raw: scaling(raw.payloads), ours: scaling(ours.payloads) }));

  const names = imports.modules.map((m) => m.slice(m.lastIndexOf("/src/") + 1)).join(" + ");
  const s = `${SECTIONS.importTime}\n   bundle: ${bundle.specifiers.join(" + ")} of the built package, imported by name; per-file: ${names}`;
  const value = (id: string, label: string, v: number, target?: number): ValueFigure => {
    const fig: ValueFigure = { kind: "value", id, section: s, label, unit: "ms", better: "lower", value: v };
    if (target !== undefined) {
      fig.target = `<= ${target} ms`;
      fig.pass = v <= target;
    }
    return fig;
  };
  figs.push(
    value("import.nodeStartMs", "node -e 0 start-up (wall clock)", imports.nodeMs),
    value("import.tsxStartMs", "node --import tsx -e 0 start-up (wall clock)", imports.tsxMs),
    // The target is on what the README's client example imports, the bundled entry
    // (docs/decisions.md 170); the per-file subpaths are information.
    value("import.bundleNodeMs", "bundle adds, plain node, in-process", bundle.addedNodeMs, 15),
    value("import.bundleNodeWallMs", "bundle adds, plain node, wall over node -e 0", bundle.addedNodeWallMs),
    value("import.addedNodeMs", "per-file adds, plain node (.js), in-process", imports.addedNodeMs),
    value("import.addedNodeWallMs", "per-file adds, plain node, wall over -e 0", imports.addedNodeWallMs),
    value("import.emptyEntryWallMs", "  of which: empty .mjs entry (Node's ESM)", imports.emptyEntryWallMs),
    // No target under tsx: there the loader transpiles each file as it loads (users import the built JS).
    value("import.addedTsxMs", "per-file adds, .ts under tsx, in-process", imports.addedTsxMs),
    value("import.addedTsxWallMs", "per-file adds, tsx, wall over tsx -e 0", imports.addedTsxWallMs),
  );
  if (full) {
    figs.push(
      value("import.fullIndexNodeMs", "whole library (index), plain node, in-proc.", full.addedNodeMs),
      value("import.fullIndexTsxMs", "whole library (index), tsx, in-process", full.addedTsxMs),
    );
  }
  return figs;
}

function num(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString("en-US"); // counts
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString("en-US");
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** The figures as aligned text, grouped by section. */
export function formatFigures(figures: readonly Figure[]): string {
  const lines: string[] = [];
  const row = (c: readonly string[]): string =>
    `  ${c[0]!.padEnd(47)}${c[1]!.padEnd(9)}${c[2]!.padStart(9)}${c[3]!.padStart(10)}${c[4]!.padStart(10)}${c[5]!.padStart(11)}  ${c[6]!.padEnd(22)}${c[7]}`.trimEnd();
  let section = "";
  for (const f of figures) {
    if (f.section !== section) {
      section = f.section;
      lines.push("", section);
      if (f.kind === "compare") {
        const h = f.heads ?? { raw: "raw", ours: "ours" };
        lines.push(row(["", "unit", h.raw, h.ours, f.heads ? "ratio" : "ours/raw", f.gapMs === undefined ? "" : "gap", "target", ""]));
      }
    }
    const mark = f.pass === undefined ? "" : f.pass ? "PASS" : "MISS";
    if (f.kind === "compare") {
      // Only where a target is judged: there the spread says whether PASS/MISS is within noise.
      const q = f.target !== undefined ? f.roundRatios : undefined;
      const spread = q && q.n > 1 ? `  (rounds ${q.p25.toFixed(2)}-${q.p75.toFixed(2)}x, n=${q.n}${medianNote(q)})` : "";
      const gap = f.gapMs === undefined ? "" : `${f.gapMs >= 0 ? "+" : ""}${f.gapMs.toFixed(1)} ms`;
      lines.push(row([f.label, f.unit, num(f.raw), num(f.ours), `${f.ratio.toFixed(2)}x`, gap, f.target ?? "", mark + spread]));
    } else lines.push(row([f.label, f.unit, "", num(f.value), "", "", f.target ?? "", mark]));
  }
  return lines.join("\n");
}
