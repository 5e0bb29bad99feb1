/**
 * Which runs `npm run conformance` makes (scripts/conformance-runs.ts) and how `--only`
 * selects among them (scripts/conformance.ts). Nothing is started here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { clientCommand, RUNS, runFolder } from "../../scripts/conformance-runs.ts";
import { NODE22, ROOT, selectRuns } from "../../scripts/conformance.ts";

test("seven runs: 0.1.16 server and client, 0.2 server and client under each requirement set, and 0.2 2025-11-25 through serve", () => {
  assert.deepEqual(
    RUNS.map((r) => [r.id, r.suite, r.leg, r.requirements, r.through]),
    [
      ["0.1.16/server", "0.1.16", "server", undefined, undefined],
      ["0.1.16/client", "0.1.16", "client", undefined, undefined],
      ["0.2/server/2025-11-25", "0.2", "server", "2025-11-25", undefined],
      ["0.2/server/2026-07-28", "0.2", "server", "2026-07-28", undefined],
      ["0.2/client/2025-11-25", "0.2", "client", "2025-11-25", undefined],
      ["0.2/client/2026-07-28", "0.2", "client", "2026-07-28", undefined],
      ["0.2/serve/2025-11-25", "0.2", "server", "2025-11-25", "serve"],
    ],
  );
  assert.equal(new Set(RUNS.map(runFolder)).size, RUNS.length, "each run writes to a folder of its own");
  assert.ok(RUNS.every((r) => !runFolder(r).includes("/")));
});

test("--only picks runs, in their usual order; no argument picks all", () => {
  assert.deepEqual(selectRuns([]), [...RUNS]);
  assert.deepEqual(
    selectRuns(["--only", "0.2/client/2026-07-28", "--only", "0.1.16/server"]).map((r) => r.id),
    ["0.1.16/server", "0.2/client/2026-07-28"],
  );
});

test("an unknown run or argument is INVALID_PARAMS naming the runs there are", () => {
  const invalid = (err: unknown): boolean => err instanceof BridgeError && err.code === "INVALID_PARAMS" && /0\.2\/server\/2026-07-28/.test(err.message);
  assert.throws(() => selectRuns(["--only", "0.3/server"]), invalid);
  assert.throws(() => selectRuns(["--verbose"]), invalid);
  assert.throws(() => selectRuns(["--only"]), invalid);
});

test("the client command is the pinned Node 22 running the fixture's source (the suite splits it on spaces and appends the URL)", () => {
  const parts = clientCommand().split(" ");
  assert.deepEqual(parts, [NODE22, join(ROOT, "fixtures", "clients", "conformance.ts")]);
});
