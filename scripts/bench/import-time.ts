/**
 * Section 7 of the benchmark: what importing the library adds to a Node start-up.
 *
 * Measured the way an application pays it: an entry module that imports the library
 * statically, against the same entry importing nothing. Each entry prints `performance.now()`
 * when it has been evaluated (time since the process began), so "in-process" is the difference
 * of those two: the import's own cost, free of process spawn and exit noise; the target applies
 * to it. "Wall clock" is the library entry's whole run minus `node -e 0`, which also holds
 * Node's set-up of an ES module entry (shown apart: an empty `.mjs` entry minus `node -e 0`). Rounds are paired:
 * each round runs every variant once, so drift hits all alike.
 *
 * (A dynamic `import()` inside `node -e` is not used: the first dynamic import of a file sets
 * up the ESM file loader, ~3 ms that every ES module application pays for its own entry anyway.)
 *
 * {@link measureImportTime} imports modules by path (the transpiled tree and the `.ts` source);
 * {@link measurePackageImport} imports package subpaths by name, from an entry inside an app that
 * has the built package installed, as a user's code does (plain node only: the package is JS).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { benchEnv } from "./env.ts";
import { median } from "./stats.ts";

export interface ImportTimeResult {
  rounds: number;
  /** Median wall-clock run of `node -e 0`, ms. */
  nodeMs: number;
  /** The same under `--import tsx`, ms. */
  tsxMs: number;
  /** Median of (library entry evaluated - empty entry evaluated), per round, ms: `.js` under plain node. */
  addedNodeMs: number;
  /** The same with the `.ts` sources under `--import tsx` (tsx transpiles each file as it loads). */
  addedTsxMs: number;
  /** Median of (wall clock of the library entry - wall clock of `node -e 0`), per round, ms. */
  addedNodeWallMs: number;
  addedTsxWallMs: number;
  /** Median of (wall clock of an empty `.mjs` entry - `node -e 0`): Node's own ES module set-up, no library. */
  emptyEntryWallMs: number;
  /** The modules imported, as `.ts` paths (the plain-node run uses their transpiled `.js` twins). */
  modules: string[];
}

/** Importing package subpaths under plain node (the fields as in {@link ImportTimeResult}). */
export interface PackageImportResult {
  rounds: number;
  addedNodeMs: number;
  addedNodeWallMs: number;
  /** The specifiers imported (`mcp-bridge/client/stdio`). */
  specifiers: string[];
}

/** Runs node with `args`; returns the wall time and what the child printed. */
function timeRun(args: readonly string[]): { wallMs: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", env: benchEnv() });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return { wallMs, stdout: r.stdout };
}

/** Writes an entry module importing `specifiers` (none for the baseline) that prints when it is evaluated. */
function writeEntry(dir: string, name: string, specifiers: readonly string[]): string {
  const path = join(dir, name);
  const imports = specifiers.map((s) => `import ${JSON.stringify(s)};\n`).join("");
  writeFileSync(path, `${imports}process.stdout.write(String(performance.now()));\n`);
  return path;
}

/** One plain-node round, in this order: `node -e 0`, the empty entry, the library entry. */
function nodeRound(empty: string, lib: string): { nodeMs: number; entryWallMs: number; inProcessMs: number; wallMs: number } {
  const node = timeRun(["-e", "0"]);
  const none = timeRun([empty]);
  const withLib = timeRun([lib]);
  return {
    nodeMs: node.wallMs,
    entryWallMs: none.wallMs - node.wallMs,
    inProcessMs: Number(withLib.stdout) - Number(none.stdout),
    wallMs: withLib.wallMs - node.wallMs,
  };
}

/**
 * @param dir where to write the entry modules (a scratch directory)
 * @param tsx the tsx loader's URL (for `--import`)
 * @param tsModules library entry points as `.ts` files, imported under tsx
 * @param jsModules the same entry points transpiled to `.js`, imported under plain node
 */
export function measureImportTime(
  dir: string,
  tsx: string,
  tsModules: readonly string[],
  jsModules: readonly string[],
  rounds: number,
  warmupRounds: number,
): ImportTimeResult {
  const tag = Math.random().toString(36).slice(2, 8);
  const url = (file: string): string => pathToFileURL(file).href;
  const empty = writeEntry(dir, `import-none-${tag}.mjs`, []);
  const libJs = writeEntry(dir, `import-js-${tag}.mjs`, jsModules.map(url));
  const libTs = writeEntry(dir, `import-ts-${tag}.mjs`, tsModules.map(url));
  const loader = ["--import", tsx];
  const s = { entry: [] as number[], node: [] as number[], tsx: [] as number[], inNode: [] as number[], inTsx: [] as number[], wallNode: [] as number[], wallTsx: [] as number[] };
  for (let i = 0; i < warmupRounds + rounds; i++) {
    const node = nodeRound(empty, libJs);
    const tsxBase = timeRun([...loader, "-e", "0"]);
    const noneTsx = timeRun([...loader, empty]);
    const withTsx = timeRun([...loader, libTs]);
    if (i < warmupRounds) continue;
    s.node.push(node.nodeMs);
    s.entry.push(node.entryWallMs);
    s.tsx.push(tsxBase.wallMs);
    s.inNode.push(node.inProcessMs);
    s.inTsx.push(Number(withTsx.stdout) - Number(noneTsx.stdout));
    s.wallNode.push(node.wallMs);
    s.wallTsx.push(withTsx.wallMs - tsxBase.wallMs);
  }
  return {
    rounds,
    nodeMs: median(s.node),
    tsxMs: median(s.tsx),
    addedNodeMs: median(s.inNode),
    addedTsxMs: median(s.inTsx),
    addedNodeWallMs: median(s.wallNode),
    addedTsxWallMs: median(s.wallTsx),
    emptyEntryWallMs: median(s.entry),
    modules: [...tsModules],
  };
}

/**
 * @param app a directory whose `node_modules` holds the built package; the entries are written there
 * @param specifiers package subpaths, imported by name
 */
export function measurePackageImport(app: string, specifiers: readonly string[], rounds: number, warmupRounds: number): PackageImportResult {
  const tag = Math.random().toString(36).slice(2, 8);
  const empty = writeEntry(app, `import-none-${tag}.mjs`, []);
  const lib = writeEntry(app, `import-package-${tag}.mjs`, specifiers);
  const inProcess: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < warmupRounds + rounds; i++) {
    const round = nodeRound(empty, lib);
    if (i < warmupRounds) continue;
    inProcess.push(round.inProcessMs);
    wall.push(round.wallMs);
  }
  return { rounds, addedNodeMs: median(inProcess), addedNodeWallMs: median(wall), specifiers: [...specifiers] };
}
