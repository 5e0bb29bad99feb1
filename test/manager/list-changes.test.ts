/**
 * ListChanges: a server's prompts/resources `list_changed` flood becomes one event per
 * server and list per window; `stop` drops what is pending.
 */
import assert from "node:assert/strict";
import { mock, test } from "node:test";
import type { ListChange } from "../../src/manager/events.ts";
import { ListChanges } from "../../src/manager/list-changes.ts";

test("many changes of one server's list within the window are one event; other servers and lists have their own", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const seen: ListChange[] = [];
    const changes = new ListChanges(100, (c) => seen.push(c));
    for (let i = 0; i < 50; i++) changes.changed({ server: "a", list: "prompts" });
    changes.changed({ server: "a", list: "resources" });
    changes.changed({ server: "b", list: "prompts" });
    assert.deepEqual(seen, []);
    mock.timers.tick(100);
    assert.deepEqual(seen, [
      { server: "a", list: "prompts" },
      { server: "a", list: "resources" },
      { server: "b", list: "prompts" },
    ]);
    changes.changed({ server: "a", list: "prompts" });
    mock.timers.tick(100);
    assert.equal(seen.length, 4, "a change after the window is a new event");
  } finally {
    mock.timers.reset();
  }
});

test("stop drops pending changes", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const seen: ListChange[] = [];
    const changes = new ListChanges(undefined, (c) => seen.push(c));
    changes.changed({ server: "a", list: "resources" });
    changes.stop();
    mock.timers.tick(1_000);
    assert.deepEqual(seen, []);
  } finally {
    mock.timers.reset();
  }
});
