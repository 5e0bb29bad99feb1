import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ApprovalGate, ToolPolicy, type ApprovalDecision, type ApprovalRequest } from "../../src/security/policy.ts";

describe("ToolPolicy", () => {
  test("no lists: everything is permitted", () => {
    const policy = new ToolPolicy();
    assert.equal(policy.permits("mcp__fs__write"), true);
    assert.match(policy.explain("mcp__fs__write"), /permitted/);
  });

  test("allow restricts to matching names", () => {
    const policy = new ToolPolicy({ allow: ["mcp__fs__read*", "mcp__git__status"] });
    assert.equal(policy.permits("mcp__fs__read_file"), true);
    assert.equal(policy.permits("mcp__git__status"), true);
    assert.equal(policy.permits("mcp__git__status2"), false);
    assert.equal(policy.permits("mcp__fs__write"), false);
  });

  test("deny wins over allow", () => {
    const policy = new ToolPolicy({ allow: ["mcp__fs__*"], deny: ["mcp__fs__*write*"], server: "fs" });
    assert.equal(policy.permits("mcp__fs__read"), true);
    assert.equal(policy.permits("mcp__fs__write_file"), false);
    assert.equal(
      policy.explain("mcp__fs__write_file"),
      'server "fs": tool "mcp__fs__write_file" is refused by deny pattern "mcp__fs__*write*"; remove that pattern from "deny" to use it',
    );
  });

  test("an explicit empty allow list permits nothing", () => {
    const policy = new ToolPolicy({ allow: [], server: "fs" });
    assert.equal(policy.permits("mcp__fs__read"), false);
    assert.match(policy.explain("mcp__fs__read"), /the allow list is empty; add a matching pattern to "allow"/);
  });

  test("explain names the matching allow pattern, or says none matched", () => {
    const policy = new ToolPolicy({ allow: ["mcp__fs__read*"], server: "fs" });
    assert.match(policy.explain("mcp__fs__read_file"), /permitted by allow pattern "mcp__fs__read\*"/);
    assert.match(policy.explain("mcp__fs__write"), /^server "fs": tool "mcp__fs__write" is refused: it matches no pattern in "allow"/);
  });

  test("filter keeps permitted items in order (discovery uses the same rule as calls)", () => {
    const policy = new ToolPolicy({ deny: ["*delete*"] });
    const tools = [{ name: "mcp__a__list" }, { name: "mcp__a__delete" }, { name: "mcp__a__get" }];
    assert.deepEqual(
      policy.filter(tools, (t) => t.name).map((t) => t.name),
      ["mcp__a__list", "mcp__a__get"],
    );
  });

  test("glob syntax is literal where it should be: no regex injection", () => {
    const policy = new ToolPolicy({ allow: ["mcp__a__.*"] });
    assert.equal(policy.permits("mcp__a__.anything"), true);
    assert.equal(policy.permits("mcp__a__xyz"), false);
  });
});

const SECRET = "hunter2-very-secret";

function recorder(answer: (req: ApprovalRequest, n: number) => ApprovalDecision | Promise<ApprovalDecision>) {
  const requests: ApprovalRequest[] = [];
  const approve = (req: ApprovalRequest) => {
    requests.push(req);
    return answer(req, requests.length);
  };
  return { requests, approve };
}

describe("ApprovalGate", () => {
  test("trusted servers are never asked", async () => {
    const r = recorder(() => "deny");
    const gate = new ApprovalGate(r.approve);
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "trusted"), { ok: true });
    assert.equal(r.requests.length, 0);
  });

  test("without an approver, untrusted calls are refused with how to approve", async () => {
    const gate = new ApprovalGate();
    for (const trust of ["untrusted", undefined] as const) {
      const result = await gate.check("fs", "write", "mcp__fs__write", { password: SECRET }, trust);
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.match(result.message, /^server "fs" is untrusted: tool "write" \(mcp__fs__write\) needs approval/);
      assert.match(result.message, /pass an approve callback/);
      assert.match(result.message, /mark the server trusted/);
      assert.ok(!result.message.includes(SECRET));
    }
  });

  test("the approver sees server, tool, bridged name and arguments", async () => {
    const r = recorder(() => "allow_once");
    const gate = new ApprovalGate(r.approve);
    await gate.check("fs", "write", "mcp__fs__write", { path: "/x" }, "untrusted");
    assert.deepEqual(r.requests, [{ server: "fs", tool: "write", bridgedName: "mcp__fs__write", args: { path: "/x" } }]);
  });

  test("allow_once is not remembered", async () => {
    const r = recorder(() => "allow_once");
    const gate = new ApprovalGate(r.approve);
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"), { ok: true });
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"), { ok: true });
    assert.equal(r.requests.length, 2);
    assert.equal(gate.isAlwaysAllowed("fs", "write"), false);
  });

  test("allow_always is remembered per tool, per gate", async () => {
    const r = recorder(() => "allow_always");
    const gate = new ApprovalGate(r.approve);
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"), { ok: true });
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"), { ok: true });
    assert.equal(r.requests.length, 1);
    assert.equal(gate.isAlwaysAllowed("fs", "write"), true);
    // Another tool, another server with the same tool name, another session: asked again.
    await gate.check("fs", "read", "mcp__fs__read", {}, "untrusted");
    await gate.check("git", "write", "mcp__git__write", {}, "untrusted");
    assert.equal(r.requests.length, 3);
    const otherSession = new ApprovalGate(r.approve);
    await otherSession.check("fs", "write", "mcp__fs__write", {}, "untrusted");
    assert.equal(r.requests.length, 4);
  });

  test("allow_always of one (server, tool) pair allows no pair whose names join to the same text", async () => {
    const gate = new ApprovalGate(() => "allow_always");
    await gate.check("a", "b/c", "mcp__a__b_c", {}, "untrusted");
    assert.equal(gate.isAlwaysAllowed("a", "b/c"), true);
    for (const [server, tool] of [["a/b", "c"], ["a/", "b/c"], ["1:a", "b/c"], ["", "a/b/c"]] as const) {
      assert.equal(gate.isAlwaysAllowed(server, tool), false, `${server} + ${tool}`);
      assert.equal(gate.allowsWithoutAsking(server, tool, "untrusted"), false, `${server} + ${tool}`);
    }
  });

  test("deny refuses this call and asks again next time", async () => {
    const r = recorder((_req, n) => (n === 1 ? "deny" : "allow_once"));
    const gate = new ApprovalGate(r.approve);
    const first = await gate.check("fs", "write", "mcp__fs__write", { token: SECRET }, "untrusted");
    assert.equal(first.ok, false);
    if (!first.ok) {
      assert.match(first.message, /^server "fs" is untrusted: tool "write" \(mcp__fs__write\) was denied by the approver/);
      assert.ok(!first.message.includes(SECRET));
    }
    assert.deepEqual(await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"), { ok: true });
  });

  test("an approver that throws or rejects counts as deny, without echoing its error", async () => {
    for (const approve of [
      (): ApprovalDecision => {
        throw new Error(`boom ${SECRET}`);
      },
      (): Promise<ApprovalDecision> => Promise.reject(new Error(`boom ${SECRET}`)),
    ]) {
      const gate = new ApprovalGate(approve);
      const result = await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted");
      assert.equal(result.ok, false);
      if (result.ok) continue;
      assert.match(result.message, /^server "fs" is untrusted: tool "write" .* the approve callback failed, so the call was refused/);
      assert.ok(!result.message.includes(SECRET));
      assert.equal(gate.isAlwaysAllowed("fs", "write"), false);
    }
  });

  test("an answer that is not a decision counts as deny", async () => {
    const gate = new ApprovalGate((() => true) as unknown as () => ApprovalDecision);
    const result = await gate.check("fs", "write", "mcp__fs__write", {}, "untrusted");
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.message, /no valid decision/);
  });

  test("concurrent first calls to one tool ask once (allow_always)", async () => {
    let release: (d: ApprovalDecision) => void = () => {};
    const r = recorder(() => new Promise<ApprovalDecision>((res) => (release = res)));
    const gate = new ApprovalGate(r.approve);
    const calls = [1, 2, 3].map(() => gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"));
    await new Promise((res) => setImmediate(res));
    assert.equal(r.requests.length, 1);
    release("allow_always");
    assert.deepEqual(await Promise.all(calls), [{ ok: true }, { ok: true }, { ok: true }]);
    assert.equal(r.requests.length, 1);
  });

  test("concurrent first calls share a deny", async () => {
    let release: (d: ApprovalDecision) => void = () => {};
    const r = recorder(() => new Promise<ApprovalDecision>((res) => (release = res)));
    const gate = new ApprovalGate(r.approve);
    const calls = [1, 2].map(() => gate.check("fs", "write", "mcp__fs__write", {}, "untrusted"));
    await new Promise((res) => setImmediate(res));
    release("deny");
    const results = await Promise.all(calls);
    assert.deepEqual(results.map((x) => x.ok), [false, false]);
    assert.equal(r.requests.length, 1);
  });

  test("allow_once lets exactly one of several concurrent calls through per answer", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const r = recorder(async (): Promise<ApprovalDecision> => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((res) => setImmediate(res));
      inFlight--;
      return "allow_once";
    });
    const gate = new ApprovalGate(r.approve);
    const results = await Promise.all([1, 2, 3].map(() => gate.check("fs", "write", "mcp__fs__write", {}, "untrusted")));
    assert.deepEqual(results, [{ ok: true }, { ok: true }, { ok: true }]);
    assert.equal(r.requests.length, 3);
    assert.equal(maxInFlight, 1);
  });
});

test("ApprovalGate.allowsWithoutAsking: trusted servers and tools allowed always, nothing else", async () => {
  const gate = new ApprovalGate(() => "allow_always");
  assert.equal(gate.allowsWithoutAsking("fs", "read", "trusted"), true);
  assert.equal(gate.allowsWithoutAsking("fs", "read", "untrusted"), false);
  assert.equal(gate.allowsWithoutAsking("fs", "read", undefined), false);
  assert.deepEqual(await gate.check("fs", "read", "mcp__fs__read", {}, "untrusted"), { ok: true });
  assert.equal(gate.allowsWithoutAsking("fs", "read", "untrusted"), true);
  assert.equal(gate.allowsWithoutAsking("fs", "write", "untrusted"), false);
});
