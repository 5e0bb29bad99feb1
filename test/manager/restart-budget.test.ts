/** RestartBudget: restarts in a row up to the limit, a fresh budget after a stable run, the pending timer. */
import { mock, test } from "node:test";
import assert from "node:assert/strict";
import { RestartBudget } from "../../src/manager/restart-budget.ts";

test("restarts in a row stop at maxRestarts; a run ready for stableAfterMs starts the count over", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    let clock = 0;
    let restarted = 0;
    const budget = new RestartBudget({ maxRestarts: 2, stableAfterMs: 1_000, backoff: { baseMs: 10, capMs: 10, jitter: 0 }, now: () => clock });
    const restart = () => void restarted++;
    const delays: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      delays.push(budget.afterFailure(true, restart));
      mock.timers.tick(10);
    }
    assert.deepEqual({ delays, restarted, inARow: budget.inARow, total: budget.total }, { delays: [10, 10, undefined], restarted: 2, inARow: 2, total: 2 });
    budget.ready();
    clock += 1_000;
    assert.deepEqual({ delay: budget.afterFailure(true, restart), inARow: budget.inARow, total: budget.total }, { delay: 10, inARow: 1, total: 3 });
    budget.cancel();
    mock.timers.tick(10);
    assert.equal(restarted, 2, "a cancelled restart does not run");
    assert.equal(budget.afterFailure(false, restart), undefined, "a failure that is not retryable schedules nothing");
  } finally {
    mock.timers.reset();
  }
});
