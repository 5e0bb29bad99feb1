/**
 * Reads V8 `.cpuprofile` files (from `node --cpu-prof`) and says where the CPU time went:
 * self time per function (file:line name) and per file, busiest first. Idle time is left out
 * of the percentages, so they are shares of the time the process was working.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  /** `file:line function` (file relative to the repository, or a node: / internal name). */
  where: string;
  selfMs: number;
  /** Share of the busy (non-idle) time, 0..100. */
  percent: number;
}

export interface ProfileSummary {
  busyMs: number;
  functions: HotSpot[];
  files: HotSpot[];
}

function fileOf(url: string, root: string): string {
  if (url === "") return "(native)";
  if (!url.startsWith("file:")) return url;
  const rel = relative(root, fileURLToPath(url));
  return rel.startsWith("..") ? fileURLToPath(url) : rel;
}

const IDLE = new Set(["(idle)"]);

/** Self time per function and per file in one profile. `root` shortens file paths. */
export function summarizeProfile(profile: CpuProfile, root: string, top = 15): ProfileSummary {
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let busyUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (us === 0 || IDLE.has(functionName)) continue;
    busyUs += us;
    const file = fileOf(url, root);
    const where = url === "" ? functionName : `${file}:${lineNumber + 1} ${functionName || "(anonymous)"}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + us);
    const fileKey = url === "" ? functionName : file;
    byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): HotSpot[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([where, us]) => ({ where, selfMs: us / 1000, percent: busyUs > 0 ? (100 * us) / busyUs : 0 }));
  return { busyMs: busyUs / 1000, functions: rank(byFunction), files: rank(byFile) };
}

/** Summaries of every `.cpuprofile` in `dir`, by file name. */
export async function summarizeDir(dir: string, root: string, top = 15): Promise<Map<string, ProfileSummary>> {
  const out = new Map<string, ProfileSummary>();
  for (const name of (await readdir(dir)).sort()) {
    if (!name.endsWith(".cpuprofile")) continue;
    const profile = JSON.parse(await readFile(join(dir, name), "utf8")) as CpuProfile;
    out.set(name, summarizeProfile(profile, root, top));
  }
  return out;
}

export function formatSummary(title: string, s: ProfileSummary): string {
  const line = (h: HotSpot): string => `    ${h.selfMs.toFixed(1).padStart(8)} ms ${h.percent.toFixed(1).padStart(5)}%  ${h.where}`;
  return [
    `${title}: ${s.busyMs.toFixed(0)} ms busy`,
    "  by file (self time):",
    ...s.files.map(line),
    "  by function (self time):",
    ...s.functions.map(line),
  ].join("\n");
}
