/**
 * Reading the conformance suite's result folders (scripts/conformance-results.ts), with real
 * folders and files in a temporary directory laid out as the suite lays them out.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { BridgeError } from "../../src/jsonrpc/errors.ts";
import { parseChecks, readResults, scenarioOfFolder } from "../../scripts/conformance-results.ts";

const temps: string[] = [];
after(async () => {
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

async function resultsDir(files: Record<string, unknown>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "conformance-results-"));
  temps.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), typeof content === "string" ? content : JSON.stringify(content));
  }
  return dir;
}

const TS = "2026-11-25T16-26-37-218Z";

function isCode(code: string): (err: unknown) => boolean {
  return (err) => err instanceof BridgeError && err.code === code;
}

test("server results: the prefix and the timestamp come off the folder name", async () => {
  const dir = await resultsDir({
    [`server-tools-list-${TS}/checks.json`]: [{ id: "tools-list", status: "SUCCESS", description: "lists" }],
    [`server-ping-${TS}/checks.json`]: [{ id: "ping", status: "FAILURE", errorMessage: "no pong" }],
  });
  const results = readResults(dir, "server-");
  assert.deepEqual([...results.keys()].sort(), ["ping", "tools-list"]);
  assert.deepEqual(results.get("ping"), [{ id: "ping", status: "FAILURE", errorMessage: "no pong" }]);
  assert.deepEqual(results.get("tools-list"), [{ id: "tools-list", status: "SUCCESS", description: "lists" }]);
});

test("client results: auth scenarios one folder deeper are read too, under their full name", async () => {
  const dir = await resultsDir({
    [`tools_call-${TS}/checks.json`]: [{ id: "tool-add-numbers", status: "SUCCESS" }],
    [`tools_call-${TS}/stdout.txt`]: "",
    [`auth/metadata-default-${TS}/checks.json`]: [{ id: "token-request", status: "FAILURE" }],
  });
  const results = readResults(dir);
  assert.deepEqual([...results.keys()].sort(), ["auth/metadata-default", "tools_call"]);
  assert.equal(results.get("auth/metadata-default")?.[0]?.status, "FAILURE");
});

test("a scenario folder without checks.json gives no result (the verdict reports it missing)", async () => {
  const dir = await resultsDir({ [`server-ping-${TS}/stdout.txt`]: "started" });
  assert.equal(readResults(dir, "server-").size, 0);
});

test("a missing output folder is no results, not an error", () => {
  assert.equal(readResults(join(tmpdir(), "conformance-results-does-not-exist")).size, 0);
});

test("checks.json that is not JSON is a PARSE_ERROR naming the file", async () => {
  const dir = await resultsDir({ [`ping-${TS}/checks.json`]: "[{" });
  assert.throws(() => readResults(dir), (err: unknown) => isCode("PARSE_ERROR")(err) && /checks\.json/.test((err as Error).message));
});

test("a check without an id or with an unknown status is INVALID_MESSAGE", () => {
  assert.throws(() => parseChecks(JSON.stringify([{ status: "SUCCESS" }]), "f"), isCode("INVALID_MESSAGE"));
  assert.throws(() => parseChecks(JSON.stringify([{ id: "x", status: "PASSED" }]), "f"), isCode("INVALID_MESSAGE"));
  assert.throws(() => parseChecks(JSON.stringify({ id: "x", status: "SUCCESS" }), "f"), isCode("INVALID_MESSAGE"));
});

test("a folder the suite would not have named so is an error, not a skipped result", async () => {
  assert.throws(() => scenarioOfFolder("tools-list", ""), isCode("INVALID_MESSAGE"));
  assert.throws(() => scenarioOfFolder(`client-tools-list-${TS}`, "server-"), isCode("INVALID_MESSAGE"));
  const dir = await resultsDir({ [`ping/checks.json`]: [] });
  assert.throws(() => readResults(dir), isCode("INVALID_MESSAGE"));
});

test("two result folders for one scenario are an error (a stale run left behind)", async () => {
  const dir = await resultsDir({
    [`ping-${TS}/checks.json`]: [{ id: "ping", status: "SUCCESS" }],
    [`ping-2026-11-25T16-30-00-000Z/checks.json`]: [{ id: "ping", status: "FAILURE" }],
  });
  assert.throws(() => readResults(dir), isCode("INVALID_MESSAGE"));
});
