/**
 * Reads the scenario names out of `conformance list` output, in both of its forms:
 *
 *   Server scenarios (test against a server):         plain list (0.1.16, and 0.2 without
 *     - tools-list [2025-06-18,2025-11-25]            --requirements): every name counts
 *
 *   Required for 2026-07-28 (69 scenarios, ...):      a requirement set (0.2): the names under
 *   Server scenarios (test against a server):         the leg's heading are required; those
 *     - server-stateless                              under "never scored" are run too, and
 *   Run and reported, but never scored:               reported, but do not decide the suite's
 *     extension (16):                                 own verdict
 *       - tasks-lifecycle [server]
 */
import { BridgeError } from "../src/jsonrpc/errors.ts";

export type Leg = "server" | "client";

export interface ScenarioList {
  /** Scenarios the suite scores (every listed one, for a plain list). */
  required: string[];
  /** Scenarios a requirement set runs without scoring them. */
  notScored: string[];
}

const HEADINGS: Record<string, Leg | "authorization"> = {
  "Server scenarios": "server",
  "Client scenarios": "client",
  "Authorization server scenarios": "authorization",
};

/** The scenarios of one leg in `conformance list` output. Throws when it finds none. */
export function parseScenarioList(text: string, leg: Leg): ScenarioList {
  const out: ScenarioList = { required: [], notScored: [] };
  let section: Leg | "authorization" | "not-scored" | undefined;
  for (const line of text.split("\n")) {
    const heading = /^(\S[^(:]*?)\s*(\(.*\))?:$/.exec(line);
    if (heading !== null) {
      const title = heading[1] as string;
      section = title.startsWith("Run and reported, but never scored") ? "not-scored" : HEADINGS[title];
      continue;
    }
    if (section === "not-scored") {
      const m = /^\s+- (\S+) \[(\w+)\]$/.exec(line);
      if (m !== null && m[2] === leg) out.notScored.push(m[1] as string);
      continue;
    }
    const m = /^\s+- (\S+)(?: \[[^\]]*\])?$/.exec(line);
    if (m !== null && section === leg) out.required.push(m[1] as string);
  }
  if (out.required.length === 0 && out.notScored.length === 0) {
    throw new BridgeError("INVALID_MESSAGE", `conformance list: no ${leg} scenario found in its output`, {
      details: { leg, output: text.slice(0, 2000) },
    });
  }
  return out;
}
