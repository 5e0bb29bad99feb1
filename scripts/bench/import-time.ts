/**
 * Section 7 of the benchmark: what importing the library adds to a Node start-up.
 *
 * Two views. In-process: the child times its own `await import(...)` of the library with
 * performance.now(), which is exactly the added work and carries no process start-up noise.
 * Wall clock: start-up with the import minus start-up without, paired per round (each round
 * runs every variant once, so drift hits all alike).
 */
import { spawnSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { median } from "./stats.ts";

export interface ImportTimeResult {
  rounds: number;
  /** Median wall-clock start-up of `node --input-type=module -e 0`, ms. */
  nodeMs: number;
  /** The same under `--import tsx`, ms. */
  tsxMs: number;
  /** Median in-process time of the library's import, ms: `.ts` under tsx, `.js` under plain node. */
  addedTsxMs: number;
  addedNodeMs: number;
  /** Median of (wall-clock start-up with the import - without), per round, ms. */
  addedTsxWallMs: number;
  addedNodeWallMs: number;
  /** The modules imported, as `.ts` paths (the plain-node run uses their transpiled `.js` twins). */
  modules: string[];
}

/** Runs node with `args`; returns the wall time and what the child printed. */
function timeRun(args: readonly string[]): { wallMs: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return { wallMs, stdout: r.stdout };
}

/** Module code that imports `files` and prints how long that took, in ms. */
function importCode(files: readonly string[]): string {
  const imports = files.map((f) => `await import(${JSON.stringify(pathToFileURL(f).href)});`).join(" ");
  return `const t0 = performance.now(); ${imports} process.stdout.write(String(performance.now() - t0));`;
}

/**
 * @param tsx the tsx loader's URL (for `--import`)
 * @param tsModules library entry points as `.ts` files, imported under tsx
 * @param jsModules the same entry points transpiled to `.js`, imported under plain node
 */
export function measureImportTime(
  tsx: string,
  tsModules: readonly string[],
  jsModules: readonly string[],
  rounds: number,
  warmupRounds: number,
): ImportTimeResult {
  const esm = ["--input-type=module", "-e"];
  const s = { node: [] as number[], tsx: [] as number[], inTsx: [] as number[], inNode: [] as number[], wallTsx: [] as number[], wallNode: [] as number[] };
  for (let i = 0; i < warmupRounds + rounds; i++) {
    const node = timeRun([...esm, "0"]);
    const libTsx = timeRun(["--import", tsx, ...esm, importCode(tsModules)]);
    const tsxBase = timeRun(["--import", tsx, ...esm, "0"]);
    const libNode = timeRun([...esm, importCode(jsModules)]);
    if (i < warmupRounds) continue;
    s.node.push(node.wallMs);
    s.tsx.push(tsxBase.wallMs);
    s.inTsx.push(Number(libTsx.stdout));
    s.inNode.push(Number(libNode.stdout));
    s.wallTsx.push(libTsx.wallMs - tsxBase.wallMs);
    s.wallNode.push(libNode.wallMs - node.wallMs);
  }
  return {
    rounds,
    nodeMs: median(s.node),
    tsxMs: median(s.tsx),
    addedTsxMs: median(s.inTsx),
    addedNodeMs: median(s.inNode),
    addedTsxWallMs: median(s.wallTsx),
    addedNodeWallMs: median(s.wallNode),
    modules: [...tsModules],
  };
}
