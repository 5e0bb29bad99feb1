/**
 * Golden wire transcripts: every fixtures/transcripts/*.jsonl replayed against its fixture
 * server as a real child process over stdio. Then the runner itself, so a runner that
 * accepts everything cannot pass unnoticed.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { initializeResults } from "./transcript-handshake.ts";
import { ROOT, ServerProcess, fillWildcards, parseTranscript, replayTranscript } from "./transcript-runner.ts";

const DIR = join(ROOT, "fixtures", "transcripts");
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .sort();

describe("golden transcripts", { concurrency: 4 }, () => {
  test("the folder holds transcripts, and every one parses", () => {
    assert.ok(FILES.length > 0, `no *.jsonl in ${DIR}`);
    for (const f of FILES) parseTranscript(f, readFileSync(join(DIR, f), "utf8"));
  });

  test("handshake.jsonl spells out the echo server's initialize result as initialize-results.json has it", () => {
    const t = parseTranscript("handshake.jsonl", readFileSync(join(DIR, "handshake.jsonl"), "utf8"));
    const expect = t.steps.find((s) => s.kind === "expect") as { message: { result: Record<string, unknown> } };
    const { protocolVersion, ...rest } = expect.message.result;
    assert.equal(protocolVersion, "2025-11-25");
    assert.deepEqual(rest, initializeResults(ROOT).echo);
  });

  for (const file of FILES) {
    test(file, async () => {
      await replayTranscript(parseTranscript(file, readFileSync(join(DIR, file), "utf8")));
    });
  }
});

const line = (v: unknown): string => JSON.stringify(v);
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } };

describe("transcript runner", { concurrency: 3 }, () => {
  test("refuses malformed transcripts, naming the line", () => {
    const cases: Array<[string, RegExp]> = [
      [`${line({ send: {} })}\n${line({ server: "echo" })}`, /x:2: the server line must come before/],
      [line({ server: "../../etc/passwd" }), /x:1: unknown server/],
      [`${line({ send: {} })}\n${line({ expectNone: true })}`, /x:2: expectNone needs an earlier expect/],
      [line({ send: {}, expect: {} }), /x:1: each line has exactly one key/],
      [line({ recv: {} }), /x:1: unknown key "recv"/],
      [line({ sendRaw: "a\nb" }), /x:1: sendRaw must be a string without a newline/],
      ["{not json", /x:1: not a JSON line/],
      [line({ comment: "only a comment" }), /x: no steps/],
      [line({ handshake: [] }), /x:1: handshake must be an object/],
      [line({ handshake: { version: "2025-11-25" } }), /x:1: handshake has unknown members \["version"\]/],
      [line({ handshake: { id: null } }), /x:1: handshake id must be a number or a string/],
      [line({ handshake: { protocolVersion: 1 } }), /x:1: handshake negotiated is needed when protocolVersion is not a string/],
    ];
    for (const [text, error] of cases) assert.throws(() => parseTranscript("x", text), error);
    const t = parseTranscript("x", [line({ server: "many" }), line({ comment: "c" }), "", line({ sendRaw: "{\r" })].join("\n"));
    assert.deepEqual(t, { name: "x", server: "many", steps: [{ kind: "sendRaw", line: 4, text: "{\r" }] });
  });

  test("a handshake line is initialize, the server's shared result and notifications/initialized", () => {
    const t = parseTranscript("x", [line({ server: "many" }), line({ handshake: { id: 7, protocolVersion: "2099-01-01", negotiated: "2025-11-25" } })].join("\n"));
    assert.deepEqual(t.steps, [
      {
        kind: "send",
        line: 2,
        message: { jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: "2099-01-01", capabilities: {}, clientInfo: { name: "transcript", version: "1.0.0" } } },
      },
      { kind: "expect", line: 2, message: { jsonrpc: "2.0", id: 7, result: { protocolVersion: "2025-11-25", ...initializeResults(ROOT).many } } },
      { kind: "send", line: 2, message: { jsonrpc: "2.0", method: "notifications/initialized" } },
    ]);
    const defaults = parseTranscript("x", line({ handshake: {} })).steps;
    assert.deepEqual([defaults[0]!.kind === "send" && defaults[0]!.message, defaults.length], [{ ...INIT, id: 0, params: { ...INIT.params, clientInfo: { name: "transcript", version: "1.0.0" } } }, 3]);
  });

  test("a wildcard matches any present value, and only where it stands", () => {
    const actual = { id: 3, result: { cursor: "abc", items: [1, 2] } };
    assert.deepEqual(fillWildcards({ id: 3, result: { cursor: "<any>", items: [1, "<any>"] } }, actual), actual);
    assert.notDeepEqual(fillWildcards({ id: "<any>", result: { cursor: "abd", items: [1, 2] } }, actual), actual);
    assert.notDeepEqual(fillWildcards({ id: 3, result: { cursor: "abc", items: [1, 2], extra: "<any>" } }, actual), actual);
  });

  test("a wrong expectation fails the replay, naming the transcript line", async () => {
    const text = [line({ send: INIT }), line({ expect: { jsonrpc: "2.0", id: 1, result: { protocolVersion: "1999-01-01" } } })].join("\n");
    await assert.rejects(replayTranscript(parseTranscript("wrong", text)), {
      message: /^wrong:2 \(expect\): /,
      transcriptLine: 2,
    });
  });

  test("expectNone fails when the server does write something", async () => {
    const ping = (id: number) => line({ send: { jsonrpc: "2.0", id, method: "ping" } });
    const text = [ping(1), line({ expect: { jsonrpc: "2.0", id: 1, result: {} } }), ping(2), line({ expectNone: true })].join("\n");
    await assert.rejects(replayTranscript(parseTranscript("noisy", text)), /noisy:4 \(expectNone\): expected no message, the server wrote: .*"id":2/);
  });

  test("kill() ends a live server by pid and the pid is gone afterwards", async () => {
    const server = new ServerProcess("echo");
    await server.writeLine(line({ jsonrpc: "2.0", id: 1, method: "ping" }));
    assert.deepEqual(JSON.parse(await server.nextLine(15_000)), { jsonrpc: "2.0", id: 1, result: {} });
    const pid = server.pid;
    process.kill(pid, 0);
    await server.kill();
    assert.throws(() => process.kill(pid, 0), { code: "ESRCH" });
  });
});
