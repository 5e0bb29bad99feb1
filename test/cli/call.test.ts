/** `call` progress: shown in place on a terminal, absent when stderr is a pipe. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { echoCommand, run, runProcess } from "./helpers.ts";

const slow = ["call", "slow_progress", '{"steps":3,"delayMs":0}'];

test("call shows the server's progress on a terminal, then clears the line before the result", async () => {
  const events: Array<string | undefined> = [];
  const r = await run([...slow, "--", ...echoCommand], { columns: 80, progress: (line) => events.push(line) });
  assert.deepEqual(r, { code: 0, out: "done after 3 steps", err: "" });
  assert.deepEqual(events, [
    "slow_progress: 1/3 (33%) step 1 of 3",
    "slow_progress: 2/3 (66%) step 2 of 3",
    "slow_progress: 3/3 (100%) step 3 of 3",
    undefined,
  ]);
});

test("a progress line is cut to the terminal's width", async () => {
  const events: Array<string | undefined> = [];
  const r = await run([...slow, "--", ...echoCommand], { columns: 20, progress: (line) => events.push(line) });
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(events.slice(0, 1), ["slow_progress: 1/3…"]);
});

test("call run as a process with stderr piped writes no progress at all", () => {
  const r = runProcess([...slow, "--", ...echoCommand]);
  assert.deepEqual(r, { code: 0, out: "done after 3 steps\n", err: "" });
});
