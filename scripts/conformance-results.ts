/**
 * Reads what a run of the conformance suite wrote: one folder per scenario, named
 * `<prefix><scenario>-<timestamp>`, holding `checks.json`. Scenario names may contain `/`
 * (`auth/metadata-default`), and the suite then writes `auth/metadata-default-<timestamp>/`,
 * one level deeper, so the whole tree is walked.
 *
 * Pure file reading: no process, no network. Anything that is not the layout the pinned suite
 * writes is a `BridgeError`, since a silently skipped folder would be a silently passed run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { BridgeError } from "../src/jsonrpc/errors.ts";

/** The statuses the suite gives a check. */
export const CHECK_STATUSES = ["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"] as const;

export type CheckStatus = (typeof CHECK_STATUSES)[number];

/** One check as the suite writes it (the fields the harness reads). */
export interface Check {
  id: string;
  status: CheckStatus;
  name?: string;
  description?: string;
  errorMessage?: string;
}

/** `createResultDir` in the suite: an ISO timestamp with `:` and `.` made `-`. */
const TIMESTAMP_SUFFIX = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/**
 * The scenario a result folder belongs to, from its path relative to the output folder
 * (`/`-separated): the prefix and the timestamp come off. Throws on a folder the suite would
 * not have named so.
 */
export function scenarioOfFolder(relPath: string, prefix: string): string {
  if (!TIMESTAMP_SUFFIX.test(relPath)) {
    throw new BridgeError("INVALID_MESSAGE", `conformance results: folder ${JSON.stringify(relPath)} does not end in the suite's timestamp`, {
      details: { folder: relPath },
    });
  }
  if (!relPath.startsWith(prefix)) {
    throw new BridgeError("INVALID_MESSAGE", `conformance results: folder ${JSON.stringify(relPath)} does not start with ${JSON.stringify(prefix)}`, {
      details: { folder: relPath, prefix },
    });
  }
  return relPath.slice(prefix.length).replace(TIMESTAMP_SUFFIX, "");
}

/** Parses one `checks.json`; `file` only names it in errors. */
export function parseChecks(text: string, file: string): Check[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BridgeError("PARSE_ERROR", `conformance results: ${file} is not JSON`, { cause: err, details: { file } });
  }
  if (!Array.isArray(raw)) {
    throw new BridgeError("INVALID_MESSAGE", `conformance results: ${file} is not an array of checks`, { details: { file } });
  }
  return raw.map((c: unknown, i) => {
    const rec = c as Record<string, unknown> | null;
    const ok =
      typeof rec === "object" &&
      rec !== null &&
      typeof rec.id === "string" &&
      rec.id !== "" &&
      (CHECK_STATUSES as readonly unknown[]).includes(rec.status);
    if (!ok) {
      throw new BridgeError("INVALID_MESSAGE", `conformance results: check ${i} of ${file} lacks a string id or a known status`, {
        details: { file, index: i },
      });
    }
    const check: Check = { id: rec.id as string, status: rec.status as CheckStatus };
    for (const key of ["name", "description", "errorMessage"] as const) {
      const value = rec[key];
      if (typeof value === "string") check[key] = value;
    }
    return check;
  });
}

/**
 * Every scenario's checks under `dir` (missing `dir`: none). `prefix` is what the suite puts
 * before server scenario names (`server-`); client runs use none.
 */
export function readResults(dir: string, prefix = ""): Map<string, Check[]> {
  const out = new Map<string, Check[]>();
  let files: string[];
  try {
    files = readdirSync(dir, { recursive: true, encoding: "utf8" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return out;
    throw err;
  }
  for (const rel of files.sort()) {
    const parts = rel.split(sep);
    if (parts.at(-1) !== "checks.json") continue;
    const folder = parts.slice(0, -1).join("/");
    const scenario = scenarioOfFolder(folder, prefix);
    if (out.has(scenario)) {
      throw new BridgeError("INVALID_MESSAGE", `conformance results: scenario ${scenario} has two result folders in ${dir}`, {
        details: { dir, scenario },
      });
    }
    const file = join(dir, rel);
    out.set(scenario, parseChecks(readFileSync(file, "utf8"), relative(process.cwd(), file)));
  }
  return out;
}
